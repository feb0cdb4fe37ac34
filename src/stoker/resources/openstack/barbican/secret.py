"""OS::Barbican::Secret, as Heat has it.

Owns: storing a secret (its payload given, or only its metadata), Heat's checks of the
payload properties, delete (one gone already is deleted), check, and the ``status``,
``decrypted_payload`` and ``show`` attributes. Every property replaces the secret when it
changes (Barbican cannot change a stored secret). The physical id is the secret's
reference (its URL), as in Heat.

The payload is a hidden value: ``show`` and ``status`` read the secret's metadata only;
the payload is read only for ``decrypted_payload``, which a template may ask for
(``get_attr``) but which ``resource show`` masks (``sensitive_attributes``).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, ClassVar

from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.properties import UNRESOLVED
from stoker.sdk.resource import Resource

__all__ = ["Secret", "resource_mapping"]


class Secret(Resource):
    """The resource provides access to the secret/keying stored material.

    A secret is a singular item that stored within Barbican. A secret is anything you want it
    to be; however, the formal use case is a key that you wish to store away from prying
    eyes. Secret may include private keys, passwords and so on.
    """

    support_status = support.SupportStatus(version="2014.2")
    default_client_name = "barbican"
    entity = "secrets"
    # Attributes ``resource show`` masks: they give the secret itself.
    sensitive_attributes: ClassVar[tuple[str, ...]] = ("decrypted_payload",)

    PROPERTIES = (
        NAME, PAYLOAD, PAYLOAD_CONTENT_TYPE, PAYLOAD_CONTENT_ENCODING,
        MODE, EXPIRATION, ALGORITHM, BIT_LENGTH, SECRET_TYPE,
    ) = (
        "name", "payload", "payload_content_type", "payload_content_encoding",
        "mode", "expiration", "algorithm", "bit_length", "secret_type",
    )  # fmt: skip
    ATTRIBUTES = (STATUS, DECRYPTED_PAYLOAD) = ("status", "decrypted_payload")
    SECRET_TYPES = ("symmetric", "public", "private", "certificate", "passphrase", "opaque")
    OCTET_STREAM = "application/octet-stream"

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "Human readable name for the secret."),
        PAYLOAD: properties.Schema(
            properties.Schema.STRING, "The unencrypted plain text of the secret."
        ),
        SECRET_TYPE: properties.Schema(
            properties.Schema.STRING,
            "The type of the secret.",
            constraints=[constraints.AllowedValues(list(SECRET_TYPES))],
            support_status=support.SupportStatus(version="5.0.0"),
            default="opaque",
        ),
        PAYLOAD_CONTENT_TYPE: properties.Schema(
            properties.Schema.STRING,
            "The type/format the secret data is provided in.",
            constraints=[constraints.AllowedValues(["text/plain", OCTET_STREAM])],
        ),
        PAYLOAD_CONTENT_ENCODING: properties.Schema(
            properties.Schema.STRING,
            "The encoding format used to provide the payload data.",
            constraints=[constraints.AllowedValues(["base64"])],
        ),
        EXPIRATION: properties.Schema(
            properties.Schema.STRING,
            "The expiration date for the secret in ISO-8601 format.",
            constraints=[constraints.CustomConstraint("expiration")],
        ),
        ALGORITHM: properties.Schema(
            properties.Schema.STRING, "The algorithm type used to generate the secret."
        ),
        BIT_LENGTH: properties.Schema(
            properties.Schema.INTEGER,
            "The bit-length of the secret.",
            constraints=[constraints.Range(min=0)],
        ),
        MODE: properties.Schema(
            properties.Schema.STRING,
            "The type/mode of the algorithm associated with the secret information.",
        ),
    }

    attributes_schema = {
        STATUS: attributes.Schema("The status of the secret.", type=attributes.Schema.STRING),
        DECRYPTED_PAYLOAD: attributes.Schema(
            "The decrypted secret payload.",
            type=attributes.Schema.STRING,
            cache_mode=attributes.Schema.CACHE_NONE,
        ),
    }

    def _path(self, key: str) -> str:
        return f"resources.{self.name}.properties.{key}"

    def validate(self) -> None:
        """Heat's rules: a content type needs a payload; octet-stream needs the base64
        encoding and a payload that decodes; an encoding needs the octet-stream type."""
        super().validate()
        given = self.properties.resolved()
        content_type = given.get(self.PAYLOAD_CONTENT_TYPE)
        encoding = given.get(self.PAYLOAD_CONTENT_ENCODING)
        payload = given.get(self.PAYLOAD)
        if any(value is UNRESOLVED for value in (content_type, encoding, payload)):
            return
        if content_type:
            if not payload:
                raise ValidationError(
                    f"{self.PAYLOAD_CONTENT_TYPE} cannot be specified without {self.PAYLOAD}.",
                    path=self._path(self.PAYLOAD_CONTENT_TYPE),
                )
            if content_type == self.OCTET_STREAM:
                if not encoding:
                    raise ValidationError(
                        f"Property unspecified. For '{content_type}' value of '{self.PAYLOAD_CONTENT_TYPE}' "
                        f"property, '{self.PAYLOAD_CONTENT_ENCODING}' property must be specified.",
                        path=self._path(self.PAYLOAD_CONTENT_ENCODING),
                    )
                try:
                    base64.b64decode(payload, validate=True)
                except (binascii.Error, ValueError):
                    # The payload itself is never quoted: it is a secret.
                    raise ValidationError(
                        f"Invalid {self.PAYLOAD} for specified '{encoding}' value of "
                        f"'{self.PAYLOAD_CONTENT_ENCODING}' property.",
                        path=self._path(self.PAYLOAD),
                    ) from None
        if encoding and (not content_type or content_type == "text/plain"):
            raise ValidationError(
                f"{self.PAYLOAD_CONTENT_ENCODING} property should only be specified for "
                f"{self.PAYLOAD_CONTENT_TYPE} with value {self.OCTET_STREAM}.",
                path=self._path(self.PAYLOAD_CONTENT_ENCODING),
            )

    def create_arguments(self) -> dict[str, Any]:
        """openstacksdk's ``create_secret`` arguments: the properties given. A payload
        without a content type is plain text (python-barbicanclient's default, which
        Heat relies on: Barbican itself refuses a payload without one)."""
        arguments = {
            key: value for key, value in self.properties.resolved().items() if value is not None
        }
        expiration = arguments.pop(self.EXPIRATION, None)
        if expiration is not None:
            arguments["expires_at"] = expiration
        if arguments.get(self.PAYLOAD) is not None and self.PAYLOAD_CONTENT_TYPE not in arguments:
            arguments[self.PAYLOAD_CONTENT_TYPE] = "text/plain"
        return arguments

    def handle_create(self) -> str:
        created = self.client().create_secret(**self.create_arguments())
        self.resource_id_set(created.secret_ref)
        return str(created.secret_ref)

    def handle_delete(self) -> None:
        if self.resource_id is not None:
            self.client_plugin().delete("secret", self.resource_id)

    def handle_check(self) -> None:
        self.client_plugin().secret_metadata(self.resource_id)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return self.client_plugin().secret_metadata(self.resource_id)

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        plugin = self.client_plugin()
        if name == self.DECRYPTED_PAYLOAD:
            return plugin.secret_payload(self.resource_id)
        if name == self.STATUS:
            return plugin.secret_metadata(self.resource_id).get("status")
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Barbican::Secret": Secret}
