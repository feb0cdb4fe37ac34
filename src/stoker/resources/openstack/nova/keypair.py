"""OS::Nova::KeyPair, as Heat has it.

Owns: importing a public key or having Nova generate the pair (the private key kept,
redacted, only with ``save_private_key``), the microversions ``type`` (2.2) and ``user``
(2.10) need, delete, check and the key attributes. The physical id is the key pair's
name, as in Heat (Nova names key pairs by name, per user).

Replacing a key pair whose name stays the same needs the old one deleted first (Heat's
``prepare_for_replace``); the engine creates the replacement first, so Nova refuses it as
a duplicate name: change the name along with the key.
"""

from __future__ import annotations

from typing import Any

from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.resource import Resource

__all__ = ["KeyPair", "resource_mapping"]

MICROVERSION_KEY_TYPE = "2.2"
MICROVERSION_USER = "2.10"


class KeyPair(Resource):
    """A resource for creating Nova key pairs.

    A keypair is a ssh key that can be injected into a server on launch.

    **Note** that if a new key is generated setting `save_private_key` to `True` results in
    the system saving the private key which can then be retrieved via the `private_key`
    attribute of this resource.

    Setting the `public_key` property means that the `private_key` attribute of this
    resource will always return an empty string regardless of the `save_private_key`
    setting since there will be no private key data to save.
    """

    support_status = support.SupportStatus(version="2014.1")
    default_client_name = "nova"
    entity = "keypair"
    # Data: the key pair was deleted for a replacement that took its name.
    RELEASED = "released_for_replacement"

    PROPERTIES = (NAME, SAVE_PRIVATE_KEY, PUBLIC_KEY, KEY_TYPE, USER) = (
        "name", "save_private_key", "public_key", "type", "user",
    )
    ATTRIBUTES = (PUBLIC_KEY_ATTR, PRIVATE_KEY_ATTR) = ("public_key", "private_key")

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING,
            "The name of the key pair.",
            required=True,
            constraints=[constraints.Length(min=1, max=255)],
        ),
        SAVE_PRIVATE_KEY: properties.Schema(
            properties.Schema.BOOLEAN,
            "True if the system should remember a generated private key; False otherwise.",
            default=False,
        ),
        PUBLIC_KEY: properties.Schema(
            properties.Schema.STRING,
            "The public key. This allows users to supply the public key from a pre-existing "
            "key pair. In Nova api version < 2.92, if not supplied, a new key pair will be "
            "generated. This property is required since Nova api version 2.92.",
        ),
        KEY_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Keypair type. Supported since Nova api version 2.2.",
            constraints=[constraints.AllowedValues(["ssh", "x509"])],
            support_status=support.SupportStatus(version="8.0.0"),
        ),
        USER: properties.Schema(
            properties.Schema.STRING,
            "ID or name of user to whom to add key-pair. The usage of this property is limited "
            "to being used by administrators only. Supported since Nova api version 2.10.",
            constraints=[constraints.CustomConstraint("keystone.user")],
            support_status=support.SupportStatus(version="9.0.0"),
        ),
    }

    attributes_schema = {
        PUBLIC_KEY_ATTR: attributes.Schema("The public key.", type=attributes.Schema.STRING),
        PRIVATE_KEY_ATTR: attributes.Schema(
            "The private key if it has been saved.",
            cache_mode=attributes.Schema.CACHE_NONE,
            type=attributes.Schema.STRING,
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.USER], client_plugin="keystone", finder="get_user_id"
            )
        ]

    def given(self, key: str) -> Any:
        return self.properties.resolved().get(key)

    def validate(self) -> None:
        super().validate()
        if self.given(self.KEY_TYPE):
            self.client_plugin().require_version(MICROVERSION_KEY_TYPE, feature="the key pair property 'type'")
        if self.given(self.USER):
            self.client_plugin().require_version(MICROVERSION_USER, feature="the key pair property 'user'")

    def create_arguments(self) -> dict[str, Any]:
        """The openstacksdk ``create_keypair`` arguments (no public key: Nova makes one)."""
        arguments: dict[str, Any] = {"name": self.properties[self.NAME]}
        for key, field in ((self.PUBLIC_KEY, "public_key"), (self.KEY_TYPE, "type"), (self.USER, "user_id")):
            if self.given(key):
                arguments[field] = self.given(key)
        return arguments

    def handle_create(self) -> None:
        created = self.client().create_keypair(**self.create_arguments())
        if self.properties[self.SAVE_PRIVATE_KEY] and getattr(created, "private_key", None):
            self.data_set("private_key", created.private_key, redact=True)
        self.resource_id_set(created.name)

    def _user_id(self) -> str | None:
        return self.given(self.USER) or None

    def prepare_for_replace(self) -> None:
        """As Heat: the old key pair is deleted before its replacement is made, since
        the replacement usually has the same name (a new public key, say), which Nova
        would refuse (409). The name is then the replacement's: this resource's delete
        leaves it alone."""
        self.handle_delete()
        self.data_set(self.RELEASED, True)

    def restore_prev_rsrc(self, convergence: bool = False) -> None:
        """A rollback makes this key pair current again: the replacement gives the name
        back and the key pair is made again from its properties (a generated one gets a
        new key, with a warning: Nova cannot make the same one twice)."""
        replacement = self.replacement()
        if isinstance(replacement, KeyPair) and replacement.resource_id == self.resource_id:
            replacement.handle_delete()
            replacement.data_set(self.RELEASED, True)
        if not self.data().get(self.RELEASED):
            return
        try:
            created = self.client().create_keypair(**self.create_arguments())
        except Exception as error:  # noqa: BLE001 - made already by a rollback that was cut short
            if not self.client_plugin().is_conflict(error):
                raise
        else:
            if self.properties[self.SAVE_PRIVATE_KEY] and getattr(created, "private_key", None):
                self.data_set("private_key", created.private_key, redact=True)
            if not self.given(self.PUBLIC_KEY):
                self.warn(f"key pair {self.resource_id} was made again with a new key: Nova cannot make a generated key twice")
        self.data_delete(self.RELEASED)

    def handle_delete(self) -> None:
        if self.resource_id is None or self.data().get(self.RELEASED):
            return
        try:
            self.client().delete_keypair(self.resource_id, ignore_missing=True, user_id=self._user_id())
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client().get_keypair(self.resource_id, user_id=self._user_id())

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        found = self.client().get_keypair(self.resource_id, user_id=self._user_id())
        return found.to_dict(original_names=True, headers=False, computed=False)

    @property
    def private_key(self) -> str:
        if self.properties[self.SAVE_PRIVATE_KEY]:
            return str(self.data().get("private_key", ""))
        return ""

    @property
    def public_key(self) -> str | None:
        if self.given(self.PUBLIC_KEY):
            return str(self.given(self.PUBLIC_KEY))
        if self.resource_id:
            return str(self.client().get_keypair(self.resource_id, user_id=self._user_id()).public_key)
        return None

    def _resolve_attribute(self, name: str) -> Any:
        if name == self.PRIVATE_KEY_ATTR:
            return self.private_key
        if name == self.PUBLIC_KEY_ATTR:
            return str(self.public_key)
        return None

    def get_reference_id(self) -> str:
        return self.resource_id if self.resource_id is not None else self.name


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Nova::KeyPair": KeyPair}
