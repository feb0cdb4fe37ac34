"""The CloudFormation-compatible AWS resource types, laid out as in Heat
(``heat/engine/resources/aws/<family>/``): one package per family (``ec2``, ...) holding
one module per type; they map onto the OpenStack services through the client plugins of
``resources/openstack``.

Owns: finding the types (``resource_mapping``), by scanning the family packages as Heat's
plugin loader does: a new type is a new module, a new family a new package, with no list
to edit. Registers no client plugin or constraint of its own.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from stoker.sdk.resource import Resource

__all__ = ["resource_mapping", "type_modules"]


def _family_packages() -> list[Any]:
    import stoker.resources.aws as aws

    return [
        importlib.import_module(f"{aws.__name__}.{info.name}")
        for info in sorted(pkgutil.iter_modules(aws.__path__), key=lambda found: found.name)
        if info.ispkg
    ]


def type_modules() -> list[str]:
    """The modules of the family packages that register types (``resource_mapping()``)."""
    found = []
    for package in _family_packages():
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda found: found.name):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            if getattr(module, "resource_mapping", None) is not None:
                found.append(module.__name__)
    return found


def resource_mapping() -> dict[str, type[Resource]]:
    """Every type a module of a family package registers."""
    mapping: dict[str, type[Resource]] = {}
    for name in type_modules():
        mapping.update(importlib.import_module(name).resource_mapping())
    return mapping
