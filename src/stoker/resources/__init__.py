"""Built-in resource plugins, written against the same SDK as third-party plugins."""

from __future__ import annotations

from typing import Any

from stoker.sdk.clients import ClientPlugin
from stoker.sdk.resource import Resource


def builtin_mapping() -> dict[str, type[Resource]]:
    from stoker.resources import openstack
    from stoker.resources.aws import iam
    from stoker.resources.heat import (
        autoscaling_group,
        cloud_config,
        delay,
        deployed_server,
        multi_part,
        none,
        random_string,
        resource_chain,
        resource_group,
        scaling_policy,
        software_component,
        software_config,
        software_deployment,
        stack,
        structured_config,
        test_resource,
        value,
        wait_condition,
        wait_condition_handle,
    )

    mapping: dict[str, type[Resource]] = {}
    for module in (delay, none, random_string, resource_chain, resource_group, stack, test_resource, value, openstack):
        mapping.update(module.resource_mapping())
    for module in (software_config, structured_config, cloud_config, multi_part, software_component, software_deployment, deployed_server):
        mapping.update(module.resource_mapping())
    for module in (autoscaling_group, scaling_policy):
        mapping.update(module.resource_mapping())
    for module in (wait_condition_handle, wait_condition, iam):
        mapping.update(module.resource_mapping())
    return mapping


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
