"""OS::Neutron::PortPairGroup, as Heat has it (networking-sfc): functionally equivalent port
pairs (by name or id) that share the load; name, description and the pairs updated in
place."""

from __future__ import annotations

from stoker.resources.openstack.neutron.extension_resource import ExtensionResource
from stoker.sdk import constraints, properties, support, translation

__all__ = ["PortPairGroup", "resource_mapping"]


class PortPairGroup(ExtensionResource):
    """Heat Template Resource for networking-sfc port-pair-group.

    Multiple port-pairs may be included in a port-pair-group to allow the specification of a
    set of functionally equivalent Service Functions that can be used for load distribution.
    """

    support_status = support.SupportStatus(version="8.0.0", status=support.UNSUPPORTED)
    extension_entity = "port_pair_group"

    PROPERTIES = (NAME, DESCRIPTION, PORT_PAIRS) = ("name", "description", "port_pairs")

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name for the Port Pair Group.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description for the Port Pair Group.", update_allowed=True
        ),
        PORT_PAIRS: properties.Schema(
            properties.Schema.LIST,
            "A list of Port Pair IDs or names to apply.",
            required=True,
            update_allowed=True,
            schema=properties.Schema(
                properties.Schema.STRING,
                "Port Pair ID or name .",
                constraints=[constraints.CustomConstraint("neutron.port_pair")],
            ),
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.PORT_PAIRS], client_plugin="neutron",
                finder="resolve_ext_resource", entity="port_pair",
            )
        ]  # fmt: skip


def resource_mapping() -> dict[str, type[ExtensionResource]]:
    return {"OS::Neutron::PortPairGroup": PortPairGroup}
