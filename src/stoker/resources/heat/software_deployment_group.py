"""OS::Heat::SoftwareDeploymentGroup (and its hidden alias OS::Heat::SoftwareDeployments):
one OS::Heat::SoftwareDeployment per server of a map, as a resource group's members,
with the members' outputs gathered by server name.

Owns: the group's schema (the deployment's properties plus ``servers``) and turning the
servers map into members. Each member is a ``software_deployment.SoftwareDeployment``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from stoker.resources.heat.resource_group import ResourceGroup
from stoker.resources.heat.software_deployment import SoftwareDeployment
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.resource import Resource
from stoker.sdk.stack_resource import NestedView


class SoftwareDeploymentGroup(ResourceGroup):
    """This resource associates a group of servers with some configuration.

    The configuration is to be deployed to all servers in the group.

    The properties work in a similar way to OS::Heat::SoftwareDeployment, and in addition
    to the attributes documented, you may pass any attribute supported by
    OS::Heat::SoftwareDeployment, including those exposing arbitrary outputs, and return a
    map of deployment names to the specified attribute.
    """

    support_status = support.SupportStatus(version="5.0.0")

    member_type = "OS::Heat::SoftwareDeployment"
    member_class = SoftwareDeployment

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (SERVERS, CONFIG, INPUT_VALUES, DEPLOY_ACTIONS, NAME, SIGNAL_TRANSPORT) = (
        "servers",
        SoftwareDeployment.CONFIG,
        SoftwareDeployment.INPUT_VALUES,
        SoftwareDeployment.DEPLOY_ACTIONS,
        SoftwareDeployment.NAME,
        SoftwareDeployment.SIGNAL_TRANSPORT,
    )

    ATTRIBUTES = (STDOUTS, STDERRS, STATUS_CODES) = ("deploy_stdouts", "deploy_stderrs", "deploy_status_codes")

    _member_attributes = {
        STDOUTS: SoftwareDeployment.STDOUT,
        STDERRS: SoftwareDeployment.STDERR,
        STATUS_CODES: SoftwareDeployment.STATUS_CODE,
    }

    properties_schema = {
        SERVERS: properties.Schema(
            properties.Schema.MAP,
            "A map of names and server IDs to apply configuration to. The name is arbitrary and "
            "is used as the Heat resource name for the corresponding deployment.",
            update_allowed=True,
            required=True,
        ),
        CONFIG: SoftwareDeployment.properties_schema[CONFIG],
        INPUT_VALUES: SoftwareDeployment.properties_schema[INPUT_VALUES],
        DEPLOY_ACTIONS: SoftwareDeployment.properties_schema[DEPLOY_ACTIONS],
        NAME: SoftwareDeployment.properties_schema[NAME],
        SIGNAL_TRANSPORT: SoftwareDeployment.properties_schema[SIGNAL_TRANSPORT],
    }

    attributes_schema = {
        STDOUTS: attributes.Schema(
            "A map of Nova names and captured stdouts from the configuration execution to each server.",
            type=attributes.Schema.MAP,
        ),
        STDERRS: attributes.Schema(
            "A map of Nova names and captured stderrs from the configuration execution to each server.",
            type=attributes.Schema.MAP,
        ),
        STATUS_CODES: attributes.Schema(
            "A map of Nova names and returned status code from the configuration execution.",
            type=attributes.Schema.MAP,
        ),
    }

    update_policy_schema = {
        ResourceGroup.ROLLING_UPDATE: properties.Schema(
            properties.Schema.MAP,
            schema={
                ResourceGroup.MAX_BATCH_SIZE: properties.Schema(
                    properties.Schema.INTEGER,
                    "The maximum number of deployments to replace at once.",
                    constraints=[constraints.Range(min=1)],
                    default=1,
                ),
                ResourceGroup.PAUSE_TIME: properties.Schema(
                    properties.Schema.NUMBER,
                    "The number of seconds to wait between batches of updates.",
                    constraints=[constraints.Range(min=0)],
                    default=0,
                ),
            },
            support_status=support.SupportStatus(version="7.0.0"),
        ),
        ResourceGroup.BATCH_CREATE: properties.Schema(
            properties.Schema.MAP,
            schema=ResourceGroup.update_policy_schema[ResourceGroup.BATCH_CREATE].schema,
            support_status=support.SupportStatus(version="7.0.0"),
        ),
    }

    def _blacklist(self) -> list[str]:
        return []

    def member_names(self, blacklist: list[str] | None = None) -> list[str]:
        return [str(name) for name in self.properties[self.SERVERS] or {}]

    def members_changed(self, prop_diff: Mapping[str, Any]) -> bool:
        # Heat's res_def_changed: every change reaches the members.
        return True

    def _member_definition(self, name: str) -> dict[str, Any]:
        member = {key: copy.deepcopy(value) for key, value in self.properties.resolved().items() if key != self.SERVERS and value is not None}
        servers = self.properties[self.SERVERS] or {}
        member[SoftwareDeployment.SERVER] = servers.get(name)
        return {"type": self.member_type, "properties": member}

    def member_count_property(self) -> str | None:
        return self.SERVERS

    def validate_nested(self) -> None:
        names = self.member_names()
        if names:
            template = {"heat_template_version": "2015-04-30", "resources": {names[0]: self._member_definition(names[0])}}
            self.nested_stacks().validate(self, template, {}, resource_count=len(names))

    def own_attribute(self, key: str, view: NestedView, names: list[str]) -> tuple[bool, Any]:
        member_attribute = self._member_attributes.get(key, key)
        return True, {name: view.attribute(name, member_attribute, ()) for name in names}


class SoftwareDeployments(SoftwareDeploymentGroup):
    """Deprecated alias of OS::Heat::SoftwareDeploymentGroup (hidden since 7.0.0)."""

    support_status = support.SupportStatus(
        status=support.HIDDEN,
        message="Please use OS::Heat::SoftwareDeploymentGroup instead.",
        version="7.0.0",
        previous_status=support.SupportStatus(status=support.DEPRECATED, version="2014.2"),
        substitute_class=SoftwareDeploymentGroup,
    )


def resource_mapping() -> dict[str, type[Resource]]:
    return {
        "OS::Heat::SoftwareDeploymentGroup": SoftwareDeploymentGroup,
        "OS::Heat::SoftwareDeployments": SoftwareDeployments,
    }
