"""Built-in resource plugins, written against the same SDK as third-party plugins."""

from __future__ import annotations

from typing import Any

from stoker.sdk.clients import ClientPlugin
from stoker.sdk.resource import Resource


def builtin_mapping() -> dict[str, type[Resource]]:
    from stoker.resources import aws, openstack
    from stoker.resources.heat import (
        access_policy,
        autoscaling_group,
        aws_autoscaling_group,
        aws_scaling_policy,
        cfn_stack,
        cloud_config,
        delay,
        deployed_server,
        ha_restarter,
        instance_group,
        launch_configuration,
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
    for module in (wait_condition_handle, wait_condition):
        mapping.update(module.resource_mapping())
    for module in (access_policy, ha_restarter, cfn_stack, launch_configuration, instance_group, aws_autoscaling_group, aws_scaling_policy):
        mapping.update(module.resource_mapping())
    mapping.update(aws.resource_mapping())
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
