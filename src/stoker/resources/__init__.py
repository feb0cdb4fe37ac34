"""Built-in resource plugins, written against the same SDK as third-party plugins."""

from __future__ import annotations

from typing import Any

from stoker.sdk.clients import ClientPlugin
from stoker.sdk.resource import Resource


def builtin_mapping() -> dict[str, type[Resource]]:
    from stoker.resources import openstack
    from stoker.resources.heat import (
        none,
        random_string,
        resource_group,
        stack,
        test_resource,
        value,
    )

    mapping: dict[str, type[Resource]] = {}
    for module in (none, random_string, resource_group, stack, test_resource, value, openstack):
        mapping.update(module.resource_mapping())
    return mapping


def builtin_client_mapping() -> dict[str, type[ClientPlugin]]:
    """The built-in client plugins (nova, neutron, cinder, glance, keystone, placement)."""
    from stoker.resources import openstack

    return openstack.client_mapping()


def builtin_constraint_mapping() -> dict[str, Any]:
    """The built-in custom constraints (neutron.network, nova.flavor, ip_addr...)."""
    from stoker.resources import openstack

    return openstack.constraint_mapping()
