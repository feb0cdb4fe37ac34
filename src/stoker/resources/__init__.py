"""Built-in resource plugins, written against the same SDK as third-party plugins."""

from __future__ import annotations

import importlib
from typing import Any

from stoker.sdk.clients import ClientPlugin
from stoker.sdk.resource import Resource

# stoker.resources.heat's type modules, in the order they register (a later module's
# entry for a type wins, as in one dict.update after another).
_HEAT_FIRST = ("delay", "none", "random_string", "resource_chain", "resource_group", "stack", "test_resource", "value")
_HEAT_AFTER_OPENSTACK = (
    "software_config",
    "structured_config",
    "cloud_config",
    "multi_part",
    "software_component",
    "software_deployment",
    "software_deployment_group",
    "deployed_server",
    "autoscaling_group",
    "scaling_policy",
    "wait_condition_handle",
    "wait_condition",
    "access_policy",
    "ha_restarter",
    "cfn_stack",
    "launch_configuration",
    "instance_group",
    "aws_autoscaling_group",
    "aws_scaling_policy",
)


def builtin_type_modules() -> list[str]:
    """Every module whose ``resource_mapping()`` registers built-in types, in
    registration order; the OpenStack and AWS ones found by scanning their packages
    (which imports them all: this is for ``builtin_mapping`` and the index, not for a
    command's start)."""
    from stoker.resources import aws, openstack

    heat = "stoker.resources.heat"
    return [
        *(f"{heat}.{name}" for name in _HEAT_FIRST),
        *openstack.type_modules(),
        *(f"{heat}.{name}" for name in _HEAT_AFTER_OPENSTACK),
        *aws.type_modules(),
    ]


def builtin_mapping() -> dict[str, type[Resource]]:
    """Every built-in type and its class, every module imported."""
    mapping: dict[str, type[Resource]] = {}
    for name in builtin_type_modules():
        mapping.update(importlib.import_module(name).resource_mapping())
    return mapping


def builtin_index() -> dict[str, str]:
    """Each built-in type and the module that registers it, as ``resources/index.py``
    holds it (``python -m stoker.resources.index`` writes it)."""
    index: dict[str, str] = {}
    for name in builtin_type_modules():
        for type_name in importlib.import_module(name).resource_mapping():
            index[type_name] = name  # the later module wins, as in builtin_mapping
    return index


def builtin_client_mapping() -> dict[str, type[ClientPlugin]]:
    """The built-in client plugins (nova, neutron, cinder, glance, keystone, placement)."""
    from stoker.resources import openstack

    return openstack.client_mapping()


def builtin_constraint_mapping() -> dict[str, Any]:
    """The built-in custom constraints (neutron.network, nova.flavor, ip_addr...,
    and TestResource's test_constr)."""
    from stoker.resources import openstack
    from stoker.resources.heat import test_resource

    return {**openstack.constraint_mapping(), **test_resource.constraint_mapping()}
