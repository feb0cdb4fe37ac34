"""OS::Nova::ServerGroup, as Heat has it.

Owns: the server group's create request (one policy; soft policies need compute
microversion 2.15, rules 2.64, both refused with seed 004's message on an older cloud),
delete, check, and finding a group an interrupted create made (``find_created``). Nothing
updates in place: any change replaces the group, as in Heat.
"""

from __future__ import annotations

from typing import Any

from stoker.sdk import constraints, properties, support
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

__all__ = ["ServerGroup", "resource_mapping"]

MICROVERSION_SOFT_POLICIES = "2.15"
MICROVERSION_RULE = "2.64"
SOFT_POLICIES = ("soft-affinity", "soft-anti-affinity")


class ServerGroup(Resource):
    """A resource for managing a Nova server group.

    Server groups allow you to make sure instances (VM/VPS) are on the same hypervisor host
    or on a different one.
    """

    support_status = support.SupportStatus(version="2014.2")
    default_client_name = "nova"
    entity = "server_group"

    PROPERTIES = (NAME, POLICIES, RULES) = ("name", "policies", "rules")
    MAX_SERVER_PER_HOST = "max_server_per_host"

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "Server Group name."),
        POLICIES: properties.Schema(
            properties.Schema.LIST,
            "A list of exactly one policy to apply. Defaults to anti-affinity.",
            default=["anti-affinity"],
            constraints=[constraints.AllowedValues(["anti-affinity", "affinity", "soft-anti-affinity", "soft-affinity"])],
            schema=properties.Schema(properties.Schema.STRING),
        ),
        RULES: properties.Schema(
            properties.Schema.MAP,
            "Rules for a policy.",
            schema={
                MAX_SERVER_PER_HOST: properties.Schema(
                    properties.Schema.NUMBER,
                    "Maximum servers in a group on a given host. Rule for anti-affinity policy.",
                )
            },
            support_status=support.SupportStatus(version="17.0.0"),
        ),
    }

    def given(self, key: str) -> Any:
        return self.properties.resolved().get(key)

    def physical_resource_name(self) -> str:
        """The group's name: the template's, else ``<stack>-<resource>-<short id>`` (Heat)."""
        return self.given(self.NAME) or super().physical_resource_name()

    def validate(self) -> None:
        super().validate()
        policies = self.properties[self.POLICIES] or []
        if len(policies) != 1:
            raise ValidationError(
                f"A server group takes exactly one policy; {len(policies)} given.",
                path=f"resources.{self.name}.properties.policies",
            )
        if policies[0] in SOFT_POLICIES:
            self.client_plugin().require_version(MICROVERSION_SOFT_POLICIES, feature=f"the server group policy '{policies[0]}'")
        if self.given(self.RULES):
            self.client_plugin().require_version(MICROVERSION_RULE, feature="server group rules")

    def create_arguments(self) -> dict[str, Any]:
        """The openstacksdk ``create_server_group`` arguments (openstacksdk sends
        ``policy`` or ``policies`` by the microversion it uses)."""
        arguments: dict[str, Any] = {"name": self.physical_resource_name(), "policies": list(self.properties[self.POLICIES])}
        rules = {key: value for key, value in (self.given(self.RULES) or {}).items() if value is not None}
        if rules:
            # Nova wants an integer; the schema (Heat's) says number.
            arguments["rules"] = {key: int(value) if float(value).is_integer() else value for key, value in rules.items()}
        return arguments

    def handle_create(self) -> None:
        created = self.client().create_server_group(**self.create_arguments())
        self.resource_id_set(created.id)

    def find_created(self) -> str | None:
        if self.given(self.NAME):
            return None
        name = self.physical_resource_name()
        for group in self.client().server_groups():
            if group.name == name:
                return str(group.id)
        return None

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client().delete_server_group(self.resource_id, ignore_missing=True)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client().get_server_group(self.resource_id)

    def needs_replace_failed(self) -> bool:
        if not self.resource_id:
            return True
        try:
            self.client().get_server_group(self.resource_id)
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
            return True
        return False

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        found = self.client().get_server_group(self.resource_id)
        return found.to_dict(original_names=True, headers=False, computed=False)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Nova::ServerGroup": ServerGroup}
