"""OS::Neutron::Segment, as Heat has it: a segment of a network (Neutron's ``segments``
service plugin; administrators only by default). Name and description change in place; the
network, type, physical network and segmentation id replace it. Heat's validation of the
type's combinations (a VLAN needs a physical network and an id up to 4094, a tunnel has no
physical network, local and flat no id) runs before anything is made."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import constraints, properties, support, translation
from stoker.sdk.exceptions import ValidationError

__all__ = ["Segment", "resource_mapping"]


class Segment(NeutronResource):
    """A resource for Neutron Segment.

    This requires enabling the segments service plug-in by appending 'segments' to the list
    of service_plugins in the neutron.conf.

    The default policy usage of this resource is limited to administrators only.
    """

    support_status = support.SupportStatus(version="9.0.0")
    entity = "segment"

    NETWORK_TYPES = (LOCAL, VLAN, VXLAN, GRE, GENEVE, FLAT) = (
        "local", "vlan", "vxlan", "gre", "geneve", "flat",
    )  # fmt: skip
    PROPERTIES = (NETWORK, NETWORK_TYPE, PHYSICAL_NETWORK, SEGMENTATION_ID, NAME, DESCRIPTION) = (
        "network", "network_type", "physical_network", "segmentation_id", "name", "description",
    )  # fmt: skip

    properties_schema = {
        NETWORK: properties.Schema(
            properties.Schema.STRING,
            "The name/id of network to associate with this segment.",
            constraints=[constraints.CustomConstraint("neutron.network")],
            required=True,
        ),
        NETWORK_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Type of network to associate with this segment.",
            constraints=[constraints.AllowedValues(list(NETWORK_TYPES))],
            required=True,
        ),
        PHYSICAL_NETWORK: properties.Schema(
            properties.Schema.STRING, "Name of physical network to associate with this segment."
        ),
        SEGMENTATION_ID: properties.Schema(
            properties.Schema.INTEGER,
            "Segmentation ID for this segment.",
            constraints=[constraints.Range(min=1)],
        ),
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of the segment.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description of the segment.", update_allowed=True
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.NETWORK], client_plugin="neutron",
                finder="find_resourceid_by_name_or_id", entity="network",
            )
        ]  # fmt: skip

    def validate(self) -> None:
        super().validate()
        physical_network = self.given(self.PHYSICAL_NETWORK)
        network_type = self.given(self.NETWORK_TYPE)
        segmentation_id = self.given(self.SEGMENTATION_ID)
        path = f"resources.{self.name}.properties"

        def refuse(message: str, key: str, hint: str) -> None:
            raise ValidationError(message, path=f"{path}.{key}", hint=hint)

        if network_type in (self.FLAT, self.VLAN) and physical_network is None:
            refuse(f"physical_network is required for {network_type} provider network.",
                   self.PHYSICAL_NETWORK, "name the physical network the segment is on")  # fmt: skip
        if network_type == self.VLAN and segmentation_id is None:
            refuse("segmentation_id is required for vlan provider network.", self.SEGMENTATION_ID,
                   "give the VLAN id (1-4094)")  # fmt: skip
        if network_type in (self.LOCAL, self.FLAT) and segmentation_id is not None:
            refuse(f"segmentation_id is prohibited for {network_type} provider network.",
                   self.SEGMENTATION_ID, "remove segmentation_id")  # fmt: skip
        if network_type in (self.VXLAN, self.GRE, self.GENEVE) and physical_network is not None:
            refuse(f"physical_network is prohibited for {network_type} provider network.",
                   self.PHYSICAL_NETWORK, "remove physical_network")  # fmt: skip
        if network_type == self.VLAN and segmentation_id > 4094:
            refuse("Up to 4094 VLAN network segments can exist on each physical_network.",
                   self.SEGMENTATION_ID, "use a VLAN id from 1 to 4094")  # fmt: skip

    def handle_create(self) -> dict[str, Any]:
        body = self.prepare_properties()
        body["network_id"] = body.pop(self.NETWORK)
        return self.created(self.client().create_segment(**body))

    def handle_update(self, json_snippet: Any, tmpl_diff: Any, prop_diff: Mapping[str, Any]) -> None:
        if prop_diff:
            changes = dict(prop_diff)
            self.prepare_update_properties(changes)
            self.client().update_segment(self.resource_id, **changes)

    def needs_replace_failed(self) -> bool:
        """A segment has no status: replace only one that is gone."""
        if not self.resource_id:
            return True
        try:
            self._show_resource()
        except Exception as error:  # noqa: BLE001 - the client's own types
            self.client_plugin().ignore_not_found(error)
            return True
        return False


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::Segment": Segment}
