"""OS::Neutron::PortPair, as Heat has it (networking-sfc): a service function's ingress and
egress ports (named by name or id), its name and description updated in place."""

from __future__ import annotations

from stoker.resources.openstack.neutron.extension_resource import ExtensionResource
from stoker.sdk import constraints, properties, support, translation

__all__ = ["PortPair", "resource_mapping"]


class PortPair(ExtensionResource):
    """A resource for neutron networking-sfc port-pair.

    This plug-in requires networking-sfc>=1.0.0. So to enable this plug-in, install this
    library and restart the heat-engine.

    A Port Pair represents a service function instance. The ingress port and the egress port
    of the service function may be specified. If a service function has one bidirectional
    port, the ingress port has the same value as the egress port.
    """

    support_status = support.SupportStatus(version="7.0.0", status=support.UNSUPPORTED)
    extension_entity = "port_pair"

    PROPERTIES = (NAME, DESCRIPTION, INGRESS, EGRESS, SERVICE_FUNCTION_PARAMETERS) = (
        "name", "description", "ingress", "egress", "service_function_parameters",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name for the Port Pair.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description for the Port Pair.", update_allowed=True
        ),
        INGRESS: properties.Schema(
            properties.Schema.STRING,
            "ID or name of the ingress neutron port.",
            constraints=[constraints.CustomConstraint("neutron.port")],
            required=True,
        ),
        EGRESS: properties.Schema(
            properties.Schema.STRING,
            "ID or name of the egress neutron port.",
            constraints=[constraints.CustomConstraint("neutron.port")],
            required=True,
        ),
        SERVICE_FUNCTION_PARAMETERS: properties.Schema(
            properties.Schema.MAP,
            "Dictionary of service function parameter. Currently only correlation=None is supported.",
            default={"correlation": None},
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [path], client_plugin="neutron",
                finder="find_resourceid_by_name_or_id", entity="port",
            )
            for path in (self.INGRESS, self.EGRESS)
        ]  # fmt: skip


def resource_mapping() -> dict[str, type[ExtensionResource]]:
    return {"OS::Neutron::PortPair": PortPair}
