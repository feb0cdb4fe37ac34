"""OpenStack resource types, laid out as in Heat: one package per service under
``resources/openstack/<service>/`` holding the service's client plugin
(``client_plugin.py``) beside one module per resource type.

Owns: the lists of what this package registers (``resource_mapping``,
``client_mapping``, ``constraint_mapping``). Importing it imports no openstacksdk: that
happens when a stack first asks a cloud for something (``clouds.source.connection_for``).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from typing import Any

from stoker.sdk.clients import ClientPlugin
from stoker.sdk.resource import Resource

__all__ = ["client_mapping", "client_plugin_class", "constraint_mapping", "resource_mapping", "type_modules"]


def _service_modules() -> list[Any]:
    """Each service package's ``client_plugin`` module (a retired service's package, which
    keeps only Heat's HIDDEN placeholders, has none)."""
    return [
        importlib.import_module(f"{package.__name__}.client_plugin")
        for package in _service_packages()
        if importlib.util.find_spec(f"{package.__name__}.client_plugin") is not None
    ]


def type_modules() -> list[str]:
    """The modules of the service packages that register types (``resource_mapping()`` in
    ``<service>/<type>.py``), found by scanning the packages as Heat's plugin loader does:
    a new type is a new module, with no list to edit."""
    found = []
    for package in _service_packages():
        for module_info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if module_info.name == "client_plugin":
                continue
            module = importlib.import_module(f"{package.__name__}.{module_info.name}")
            if getattr(module, "resource_mapping", None) is not None:
                found.append(module.__name__)
    return found


def resource_mapping() -> dict[str, type[Resource]]:
    """Every type the service packages register."""
    mapping: dict[str, type[Resource]] = {}
    for name in type_modules():
        mapping.update(importlib.import_module(name).resource_mapping())
    return mapping


def _service_packages() -> list[Any]:
    """Every service package under ``resources/openstack/`` (a sub-package holding a
    ``client_plugin`` module): a new service is a new package, with no list to edit."""
    import stoker.resources.openstack as openstack

    packages = []
    for info in sorted(pkgutil.iter_modules(openstack.__path__), key=lambda m: m.name):
        if info.ispkg:
            packages.append(importlib.import_module(f"{openstack.__name__}.{info.name}"))
    return packages


def client_mapping() -> dict[str, type[ClientPlugin]]:
    mapping: dict[str, type[ClientPlugin]] = {}
    for module in _service_modules():
        mapping.update(module.client_mapping())
    return mapping


def constraint_mapping() -> dict[str, Any]:
    from stoker.resources.openstack import addresses, schedules

    mapping: dict[str, Any] = {**addresses.constraint_mapping(), **schedules.constraint_mapping()}
    for module in _service_modules():
        mapping.update(module.constraint_mapping())
    return mapping


def client_plugin_class(name: str) -> type[ClientPlugin]:
    """The built-in client plugin class registered as ``name``."""
    return client_mapping()[name]
