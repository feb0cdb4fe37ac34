"""OS::Heat::ResourceChain: one resource per listed type, in a nested stack, each
depending on the one before unless ``concurrent``.

Owns the chain's child template; the nested stack's lifecycle is ``StackResource``'s
and the members' attributes are ``MemberAttributes``' (shared with ResourceGroup).
"""

from __future__ import annotations

import copy
from typing import Any

from stoker.resources.heat.resource_group import NESTED_VERSION, MemberAttributes
from stoker.sdk import attributes, properties, support
from stoker.sdk.stack_resource import StackResource


class ResourceChain(MemberAttributes, StackResource):
    """Creates one or more resources with the same configuration.

    The types of resources to be created are passed into the chain through the
    ``resources`` property. One resource will be created for each type listed. Each is
    passed the configuration specified under ``resource_properties``.

    The ``concurrent`` property controls if the resources will be created concurrently.
    If omitted or set to false, each resource will be treated as having a dependency on
    the resource before it in the list.

    Members are named "0", "1", ... in the nested stack. Besides ``refs`` and
    ``attributes``, any other attribute name gives the list of that attribute over the
    members, ``resource.<n>`` a member's reference and ``resource.<n>.<attribute>`` one
    member's attribute. Changing ``resources`` updates the nested stack (a member whose
    type changed is replaced, new ones are created, dropped ones deleted); changing
    ``concurrent`` or ``resource_properties`` replaces the chain, as in Heat.
    """

    support_status = support.SupportStatus(version="6.0.0")

    PROPERTIES = (RESOURCES, CONCURRENT, RESOURCE_PROPERTIES) = (
        "resources",
        "concurrent",
        "resource_properties",
    )
    ATTRIBUTES = (REFS, ATTR_ATTRIBUTES) = ("refs", "attributes")

    properties_schema = {
        RESOURCES: properties.Schema(
            properties.Schema.LIST,
            "The list of resource types to create. This list may contain type names or aliases defined in the "
            "resource registry. Specific template names are not supported.",
            required=True,
            update_allowed=True,
        ),
        CONCURRENT: properties.Schema(
            properties.Schema.BOOLEAN,
            "If true, the resources in the chain will be created concurrently. If false or omitted, each resource "
            "will be treated as having a dependency on the previous resource in the list.",
            default=False,
        ),
        RESOURCE_PROPERTIES: properties.Schema(
            properties.Schema.MAP,
            "Properties to pass to each resource being created in the chain.",
        ),
    }

    attributes_schema = {
        REFS: attributes.Schema(
            "A list of resource IDs for the resources in the chain.", type=attributes.Schema.LIST
        ),
        ATTR_ATTRIBUTES: attributes.Schema(
            "A map of resource names to the specified attribute of each individual resource.",
            type=attributes.Schema.MAP,
        ),
    }

    # Any attribute name is a list over the members (checked by the members' types).
    dynamic_attributes = True

    def member_names(self) -> list[str]:
        return [str(index) for index in range(len(self.properties[self.RESOURCES]))]

    def child_template(self) -> dict[str, Any]:
        # Heat limits a concurrent chain to one member per running engine at a time; here
        # the engine's own limit on resources in flight (max_in_flight) is the only one.
        names = self.member_names()
        shared = self.properties[self.RESOURCE_PROPERTIES]
        concurrent = self.properties[self.CONCURRENT]
        resources: dict[str, Any] = {}
        for index, (name, resource_type) in enumerate(zip(names, self.properties[self.RESOURCES], strict=True)):
            member: dict[str, Any] = {"type": resource_type}
            if shared:
                member["properties"] = copy.deepcopy(dict(shared))
            if index and not concurrent:
                member["depends_on"] = [names[index - 1]]
            resources[name] = member
        return {"heat_template_version": NESTED_VERSION, "resources": resources}


def resource_mapping() -> dict[str, type[StackResource]]:
    return {"OS::Heat::ResourceChain": ResourceChain}
