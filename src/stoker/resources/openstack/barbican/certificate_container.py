"""OS::Barbican::CertificateContainer, as Heat has it: a container whose secrets are a
certificate, its private key, the key's passphrase and intermediates, each named by its
own property (the rest is ``GenericContainer``'s)."""

from __future__ import annotations

from typing import Any, ClassVar

from stoker.resources.openstack.barbican.container import GenericContainer
from stoker.sdk import constraints, properties
from stoker.sdk.resource import Resource

__all__ = ["CertificateContainer", "resource_mapping"]


def secret_reference(description: str) -> properties.Schema:
    return properties.Schema(
        properties.Schema.STRING,
        description,
        constraints=[constraints.CustomConstraint("barbican.secret")],
    )


class CertificateContainer(GenericContainer):
    """A resource for creating barbican certificate container.

    A certificate container is used for storing the secrets that are relevant to
    certificates.
    """

    container_type: ClassVar[str] = "certificate"

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (NAME, CERTIFICATE_REF, PRIVATE_KEY_REF, PRIVATE_KEY_PASSPHRASE_REF, INTERMEDIATES_REF) = (
        "name", "certificate_ref", "private_key_ref", "private_key_passphrase_ref", "intermediates_ref",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "Human-readable name for the container."),
        CERTIFICATE_REF: secret_reference("Reference to certificate."),
        PRIVATE_KEY_REF: secret_reference("Reference to private key."),
        PRIVATE_KEY_PASSPHRASE_REF: secret_reference("Reference to private key passphrase."),
        INTERMEDIATES_REF: secret_reference("Reference to intermediates."),
    }

    def secret_references(self) -> dict[str, str]:
        """Barbican's names for the secrets: each property's name less ``_ref``."""
        given = self.properties.resolved()
        return {
            key.removesuffix("_ref"): given[key]
            for key in self.PROPERTIES
            if key != self.NAME and given.get(key) is not None
        }

    def _references(self) -> list[Any]:
        return list(self.secret_references().values())


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Barbican::CertificateContainer": CertificateContainer}
