"""OS::Cinder::QoSAssociation, as Heat has it.

Owns: the association of one set of QoS specs with volume types: made on create, the
list of types updated in place (associations added and removed), undone on delete. Names
are resolved to ids when the properties are read (Heat's RESOLVE translation rules). The
physical id is the resource's own uuid, as in Heat.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import constraints, properties, support, translation
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource

__all__ = ["CinderQoSAssociation", "resource_mapping"]


class CinderQoSAssociation(Resource):
    """A resource to associate cinder QoS specs with volume types.

    Usage of this resource restricted to admins only by default policy.
    """

    support_status = support.SupportStatus(version="8.0.0")
    default_client_name = "cinder"

    PROPERTIES = (QOS_SPECS, VOLUME_TYPES) = ("qos_specs", "volume_types")

    properties_schema = {
        QOS_SPECS: properties.Schema(
            properties.Schema.STRING,
            "ID or Name of the QoS specs.",
            required=True,
            constraints=[constraints.CustomConstraint("cinder.qos_specs")],
        ),
        VOLUME_TYPES: properties.Schema(
            properties.Schema.LIST,
            "List of volume type IDs or Names to be attached to QoS specs.",
            schema=properties.Schema(
                properties.Schema.STRING,
                "A volume type to attach specs.",
                constraints=[constraints.CustomConstraint("cinder.vtype")],
            ),
            update_allowed=True,
            required=True,
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props,
                translation.TranslationRule.RESOLVE,
                [self.VOLUME_TYPES],
                client_plugin="cinder",
                finder="get_volume_type_id",
            ),
            translation.TranslationRule(
                props,
                translation.TranslationRule.RESOLVE,
                [self.QOS_SPECS],
                client_plugin="cinder",
                finder="get_qos_specs",
            ),
        ]

    def handle_create(self) -> None:
        client = self.client()
        for volume_type in self.properties[self.VOLUME_TYPES]:
            client.associate_qos_spec(self.properties[self.QOS_SPECS], volume_type)
        self.resource_id_set(self.uuid)

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if self.VOLUME_TYPES not in prop_diff:
            return
        client = self.client()
        qos_specs = self.properties[self.QOS_SPECS]
        old = set(self.properties[self.VOLUME_TYPES] or [])
        new = set(prop_diff[self.VOLUME_TYPES] or [])
        for volume_type in sorted(new - old):
            client.associate_qos_spec(qos_specs, volume_type)
        for volume_type in sorted(old - new):
            client.disassociate_qos_spec(qos_specs, volume_type)

    def handle_delete(self) -> None:
        client = self.client()
        for volume_type in self.properties[self.VOLUME_TYPES] or []:
            try:
                client.disassociate_qos_spec(self.properties[self.QOS_SPECS], volume_type)
            except Exception as error:  # noqa: BLE001 - openstacksdk's types: specs or type already gone
                self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        associated = {
            association.id
            for association in self.client().qos_spec_associations(self.properties[self.QOS_SPECS])
        }
        missing = sorted(set(self.properties[self.VOLUME_TYPES] or []) - associated)
        if missing:
            raise ResourceFailure(
                f"QoS specs are no longer associated with volume types: {', '.join(missing)}"
            )


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Cinder::QoSAssociation": CinderQoSAssociation}
