"""The plugin SDK: everything a resource plugin author imports, and nothing else.

Modules (names as in Heat's plugin guide, so ``from stoker.sdk import properties`` reads
like ``from heat.engine import properties``):

    resource          Resource, the base class of every plugin
    properties        Schema, Properties, TranslationRule
    attributes        Schema
    constraints       Range, Length, AllowedValues, AllowedPattern, Modulo,
                      CustomConstraint, BaseCustomConstraint
    support           SupportStatus and the status names
    translation       TranslationRule (property translation, seed 000)
    properties_group  AND, OR, XOR, API_VERSIONS (seed 002)
    clients           ClientPlugin, microversions (seed 004)
    dependencies      views of the stack for implicit dependency rules
    live_state        the default reading of a live object, for drift detection
    stack_resource    StackResource: a resource made of a nested stack (Heat's StackResource)
    software_config   inputs/outputs schemas, the software config and deployment stores (Heat's
                      software_config_io, signal_software_deployment as a pure rule)
    exceptions        the errors a plugin raises or sees
    testing           PluginHarness: a plugin's lifecycle in a unit test, on a fake clock

This surface is pinned by tests/unit/sdk/test_exports.py: changing it is a decision.
"""

import importlib
from typing import Any

__all__ = [
    "attributes",
    "clients",
    "constraints",
    "dependencies",
    "exceptions",
    "live_state",
    "properties",
    "properties_group",
    "resource",
    "software_config",
    "stack_resource",
    "support",
    "translation",
]


def __getattr__(name: str) -> Any:
    """``stoker.sdk.properties`` and the like, imported when first asked for: a command
    that only reads stacks (``stoker stack list``) needs the exceptions alone, and the
    whole surface cost a tenth of its start."""
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
