"""The static index of built-in types (resources/index.py) and the registry that loads
a type's module on first use (environment/registry.py: PluginTypes): the index names
every built-in type and the module registering it, the lazily loaded classes are the
ones an eager load gives, and a plugin or a global environment entry acts on an indexed
name as it did on a loaded one. Each check that needs a fresh interpreter (what a
lookup imports) runs in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from stoker.environment.registry import ResourceRegistry
from stoker.resources import builtin_index, builtin_mapping, index
from stoker.resources.heat.none import NoneResource
from stoker.settings import Settings


def test_index_is_current():
    # If this fails: python -m stoker.resources.index
    assert builtin_index() == index.BUILTIN_TYPES
    assert index.render(builtin_index()) == Path(index.__file__).read_text()


def test_indexed_registry_gives_every_class_an_eager_load_gives():
    from stoker.service import build_registry

    eager = builtin_mapping()
    registry = build_registry(Settings(database_url="sqlite://"))
    assert list(registry.types) == list(eager)
    for name, cls in eager.items():
        assert registry.types[name] is cls, name
        assert registry.get_class(name) is cls
    assert dict(registry.types) == eager
    assert registry.problems == []


def test_a_plugin_registered_over_an_indexed_name_wins():
    class Mine(NoneResource):
        pass

    registry = ResourceRegistry()
    registry.register_index(
        {
            "OS::Heat::None": "stoker.resources.heat.none",
            "OS::Heat::Value": "stoker.resources.heat.value",
        }
    )
    registry.register_mapping({"OS::Heat::None": Mine}, "plugin.py")
    assert registry.types["OS::Heat::Value"].__name__ == "Value"
    assert registry.get_class("OS::Heat::None") is Mine
    del registry.types["OS::Heat::Value"]
    assert "OS::Heat::Value" not in registry.types
    assert registry.known_types() == ["OS::Heat::None"]


LOOKUP = """\
import json, sys
from stoker.service import build_registry
from stoker.settings import Settings
registry = build_registry(Settings(database_url="sqlite://"))
before = sorted(name for name in sys.modules if name.startswith("stoker.resources.heat.random"))
cls = registry.get_class("OS::Heat::RandomString")
known = len(registry.known_types())
print(json.dumps([before, cls.__module__, known, sorted(name for name in sys.modules if name.startswith("stoker.resources.openstack.nova."))]))
"""


def test_a_type_module_is_imported_when_its_type_is_first_looked_up():
    ran = subprocess.run(
        [sys.executable, "-c", LOOKUP], capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    before, module, known, nova = json.loads(ran.stdout)
    assert before == []
    assert module == "stoker.resources.heat.random_string"
    assert known == len(index.BUILTIN_TYPES)
    assert nova == [
        "stoker.resources.openstack.nova.client_plugin"
    ]  # clients load at start; no type module
