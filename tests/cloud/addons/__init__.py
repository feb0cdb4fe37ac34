"""Services the test cloud starts only when a test asks for them: one module per family
(``octavia.py``, ``barbican.py``, ...), each started at most once per test session, beside
the six services every session of the cloud has (``cloud.py``).

The contract of an add-on module:

- It defines a session-scoped pytest fixture named ``<family>_service`` that asks for
  ``openstack_cloud`` (so its tests get the ``cloud`` marker and run with the cloud's tests)
  and yields an object describing the running service; tests ask for that fixture.
- Its pinned requirements are ``<family>-requirements.txt`` beside it: its own venv in the
  cloud's cache, keyed by a hash of that file, so the six services' venv and golden
  databases never change when a family is added.
- It registers its service user, service and endpoints in the session's Keystone when it
  starts, and its processes lead their own process groups and die with the test run.
- It stops (processes, databases) when the session ends.
- Its tests are modules named ``tests/cloud/test_<family>...``: the suite's parallel run
  gives them a worker (and a cloud) of their own, beside the six services' tests
  (``tests.cloud.fixture.test_group``).

``fixtures()`` finds every add-on's fixtures, so ``tests/conftest.py`` offers them to every
test without a list to edit. Outside pytest (``bench/heat_templates.py --cloud``), each
add-on's ``start_for(cloud, directory)`` starts it and gives what stops it; ``needed(types)``
names the add-ons a set of resource types needs, and ``start_for(family, ...)`` starts one.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from _pytest.fixtures import FixtureFunctionDefinition

__all__ = ["fixtures", "needed", "start_for"]

# The add-on a resource type needs, by the start of its name. Keystone's types need none:
# Keystone is one of the six services every cloud has.
FAMILY_OF_TYPE = {
    "OS::Barbican::": "barbican",
    "OS::Designate::": "designate",
    "OS::Ironic::": "ironic",
    "OS::Manila::": "manila",
    "OS::Octavia::": "octavia",
    "OS::Swift::": "swift",
    "OS::Heat::SwiftSignal": "swift",
    "OS::Zaqar::": "zaqar",
    "OS::Mistral::": "mistral",
    "OS::Zaqar::MistralTrigger": "mistral",
}


def fixtures() -> dict[str, Any]:
    """Every ``<family>_service`` fixture the add-on modules define, by name."""
    found: dict[str, Any] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.ispkg or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for name, value in vars(module).items():
            if name.endswith("_service") and isinstance(value, FixtureFunctionDefinition):
                found[name] = value
    return found


def needed(types: Iterable[str]) -> set[str]:
    """The add-ons (module names) the resource types ``types`` need."""
    return {
        family
        for name in types
        for prefix, family in FAMILY_OF_TYPE.items()
        if name.startswith(prefix)
    }


def start_for(family: str, cloud: Any, directory: Path) -> tuple[Any, Callable[[], None]]:
    """Add-on ``family`` started beside ``cloud`` outside pytest (its state under
    ``directory``): the running service, and what stops it."""
    module = importlib.import_module(f"{__name__}.{family}")
    return module.start_for(cloud, directory)
