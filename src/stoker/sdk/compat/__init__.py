"""Heat compatibility: a plugin written for Heat (``from heat.engine import resource``)
loads unmodified when the real Heat package is not installed.

``install()`` adds an import hook that maps Heat's plugin-facing modules onto stoker's
SDK. It never shadows a real ``heat`` package: if one is importable, nothing is done.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from typing import Any

# Heat module -> the stoker module that stands in for it.
ALIASES = {
    "heat.engine.resource": "stoker.sdk.resource",
    "heat.engine.properties": "stoker.sdk.properties",
    "heat.engine.constraints": "stoker.sdk.constraints",
    "heat.engine.attributes": "stoker.sdk.attributes",
    "heat.engine.support": "stoker.sdk.support",
    "heat.engine.translation": "stoker.sdk.translation",
    "heat.engine.properties_group": "stoker.sdk.properties_group",
    "heat.engine.clients.client_plugin": "stoker.sdk.clients",
    "heat.engine.resources.stack_resource": "stoker.sdk.stack_resource",
    # The OpenStack side: client plugins by Heat's module names, openstacksdk's base for
    # another service's plugin, and the Neutron base class Heat's network plugins share.
    "heat.engine.clients.os.openstacksdk": "stoker.sdk.compat.openstacksdk",
    "heat.engine.clients.os.nova": "stoker.resources.openstack.nova.client_plugin",
    "heat.engine.clients.os.cinder": "stoker.resources.openstack.cinder.client_plugin",
    "heat.engine.clients.os.glance": "stoker.resources.openstack.glance.client_plugin",
    "heat.engine.clients.os.neutron": "stoker.resources.openstack.neutron.client_plugin",
    "heat.engine.clients.os.keystone": "stoker.resources.openstack.keystone.client_plugin",
    "heat.engine.clients.os.placement": "stoker.resources.openstack.placement.client_plugin",
    "heat.engine.resources.openstack.neutron.neutron": "stoker.resources.openstack.neutron.neutron",
    "heat.common.i18n": "stoker.sdk.compat.i18n",
    "heat.common.exception": "stoker.sdk.compat.exception",
}
PACKAGES = (
    "heat", "heat.engine", "heat.common", "heat.engine.clients", "heat.engine.clients.os",
    "heat.engine.resources", "heat.engine.resources.openstack", "heat.engine.resources.openstack.neutron",
)  # fmt: skip


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str | None):
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        if self.target is None:
            module = types.ModuleType(spec.name)
            module.__path__ = []  # a package, so submodules resolve through the finder
            return module
        return importlib.import_module(self.target)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class HeatCompatFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname in PACKAGES:
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(None), is_package=True)
        if fullname in ALIASES:
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(ALIASES[fullname]))
        return None


_FINDER = HeatCompatFinder()


def real_heat_installed() -> bool:
    if any(isinstance(finder, HeatCompatFinder) for finder in sys.meta_path):
        return False
    try:
        return importlib.util.find_spec("heat") is not None
    except (ImportError, ValueError):
        return False


def install() -> bool:
    """Make ``heat.engine.*`` importable from stoker's SDK. Returns False (and does
    nothing) when a real Heat is installed."""
    if _FINDER in sys.meta_path:
        return True
    if real_heat_installed():
        return False
    sys.meta_path.append(_FINDER)
    return True
