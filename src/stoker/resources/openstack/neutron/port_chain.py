"""OS::Neutron::PortChain, as Heat has it (networking-sfc): the service function path, port
pair groups in order and the flow classifiers whose traffic enters it (by name or id);
name, description, groups and classifiers updated in place, chain parameters replace."""

from __future__ import annotations

from stoker.resources.openstack.neutron.extension_resource import ExtensionResource
from stoker.sdk import constraints, properties, support, translation

__all__ = ["PortChain", "resource_mapping"]


class PortChain(ExtensionResource):
    """A resource for neutron networking-sfc.

    This resource used to define the service function path by arranging networking-sfc
    port-pair-groups and set of flow classifiers, to specify the classified traffic flows to
    enter the chain.
    """

    support_status = support.SupportStatus(version="8.0.0", status=support.UNSUPPORTED)
    extension_entity = "port_chain"

    PROPERTIES = (NAME, DESCRIPTION, PORT_PAIR_GROUPS, FLOW_CLASSIFIERS, CHAIN_PARAMETERS) = (
        "name", "description", "port_pair_groups", "flow_classifiers", "chain_parameters",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of the Port Chain.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description for the Port Chain.", update_allowed=True
        ),
        PORT_PAIR_GROUPS: properties.Schema(
            properties.Schema.LIST,
            "A list of port pair groups to apply to the Port Chain.",
            update_allowed=True,
            required=True,
            schema=properties.Schema(
                properties.Schema.STRING,
                "Port Pair Group ID or Name .",
                constraints=[constraints.CustomConstraint("neutron.port_pair_group")],
            ),
        ),
        FLOW_CLASSIFIERS: properties.Schema(
            properties.Schema.LIST,
            "A list of flow classifiers to apply to the Port Chain.",
            default=[],
            update_allowed=True,
            schema=properties.Schema(
                properties.Schema.STRING,
                "Flow Classifier ID or Name .",
                constraints=[constraints.CustomConstraint("neutron.flow_classifier")],
            ),
        ),
        CHAIN_PARAMETERS: properties.Schema(
            properties.Schema.MAP,
            "Dictionary of chain parameters. Currently, only correlation=mpls is supported by default.",
            default={"correlation": "mpls"},
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.PORT_PAIR_GROUPS], client_plugin="neutron",
                finder="resolve_ext_resource", entity="port_pair_group",
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.FLOW_CLASSIFIERS], client_plugin="neutron",
                finder="resolve_ext_resource", entity="flow_classifier",
            ),
        ]  # fmt: skip


def resource_mapping() -> dict[str, type[ExtensionResource]]:
    return {"OS::Neutron::PortChain": PortChain}
