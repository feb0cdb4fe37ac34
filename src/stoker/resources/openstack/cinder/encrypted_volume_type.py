"""OS::Cinder::EncryptedVolumeType, as Heat has it.

Owns: the encryption settings of one volume type (provider, cipher, key size, control
location): created on the type, updated in place, removed on delete; the physical id is
the volume type's id. Replacing ``volume_type`` moves the encryption to another type.
Cinder's default policy lets administrators only manage encryption types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import constraints, properties, support
from stoker.sdk.resource import Resource

__all__ = ["CinderEncryptedVolumeType", "resource_mapping"]


class CinderEncryptedVolumeType(Resource):
    """A resource for encrypting a cinder volume type.

    A Volume Encryption Type is a collection of settings used to conduct encryption for a
    specific volume type.

    Note that default cinder security policy usage of this resource is limited to being
    used by administrators only.
    """

    support_status = support.SupportStatus(version="5.0.0")
    default_client_name = "cinder"
    entity = "type_encryption"

    PROPERTIES = (PROVIDER, CONTROL_LOCATION, CIPHER, KEY_SIZE, VOLUME_TYPE) = (
        "provider",
        "control_location",
        "cipher",
        "key_size",
        "volume_type",
    )

    properties_schema = {
        PROVIDER: properties.Schema(
            properties.Schema.STRING,
            "The class that provides encryption support. For example, nova.volume.encryptors.luks.LuksEncryptor.",
            required=True,
            update_allowed=True,
        ),
        CONTROL_LOCATION: properties.Schema(
            properties.Schema.STRING,
            "Notional service where encryption is performed For example, front-end. For Nova.",
            constraints=[constraints.AllowedValues(["front-end", "back-end"])],
            default="front-end",
            update_allowed=True,
        ),
        CIPHER: properties.Schema(
            properties.Schema.STRING,
            "The encryption algorithm or mode. For example, aes-xts-plain64.",
            constraints=[constraints.AllowedValues(["aes-xts-plain64", "aes-cbc-essiv"])],
            default=None,
            update_allowed=True,
        ),
        KEY_SIZE: properties.Schema(
            properties.Schema.INTEGER,
            "Size of encryption key, in bits. For example, 128 or 256.",
            default=None,
            update_allowed=True,
        ),
        VOLUME_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Name or id of volume type (OS::Cinder::VolumeType).",
            required=True,
            constraints=[constraints.CustomConstraint("cinder.vtype")],
        ),
    }

    def _specs(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return {
            key: values.get(key)
            for key in (self.PROVIDER, self.CIPHER, self.KEY_SIZE, self.CONTROL_LOCATION)
        }

    def _volume_type_id(self) -> str:
        return str(self.client_plugin().get_volume_type(self.properties[self.VOLUME_TYPE]).id)

    def handle_create(self) -> None:
        volume_type_id = self._volume_type_id()
        self.client().create_type_encryption(volume_type_id, **self._specs(self.properties))
        self.resource_id_set(volume_type_id)

    def find_created(self) -> str | None:
        """The type's id when the type already carries an encryption (this resource's,
        made before a crash recorded the id)."""
        volume_type_id = self._volume_type_id()
        try:
            self.client().get_type_encryption(volume_type_id)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return None
        return volume_type_id

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        changes = {key: value for key, value in prop_diff.items() if key != self.VOLUME_TYPE}
        if changes:
            self.client().update_type_encryption(volume_type=self.resource_id, **changes)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client().delete_type_encryption(volume_type=self.resource_id, ignore_missing=True)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types (the type itself may be gone)
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client().get_type_encryption(self.resource_id)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        found = self.client().get_type_encryption(self.resource_id)
        return found.to_dict(original_names=True, headers=False, computed=False)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Cinder::EncryptedVolumeType": CinderEncryptedVolumeType}
