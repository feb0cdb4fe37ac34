"""OS::Barbican::RSAContainer, as Heat has it: a container whose secrets are an RSA
private key, its passphrase and the public key, each named by its own property (the
rest is ``GenericContainer``'s)."""

from __future__ import annotations

from typing import ClassVar

from stoker.resources.openstack.barbican.certificate_container import (
    CertificateContainer,
    secret_reference,
)
from stoker.sdk import properties
from stoker.sdk.resource import Resource

__all__ = ["RSAContainer", "resource_mapping"]


class RSAContainer(CertificateContainer):
    """A resource for creating barbican RSA container.

    An RSA container is used for storing RSA public keys, private keys, and private key
    pass phrases.
    """

    container_type: ClassVar[str] = "rsa"

    PROPERTIES = (NAME, PRIVATE_KEY_REF, PRIVATE_KEY_PASSPHRASE_REF, PUBLIC_KEY_REF) = (
        "name", "private_key_ref", "private_key_passphrase_ref", "public_key_ref",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "Human-readable name for the container."),
        PRIVATE_KEY_REF: secret_reference("Reference to private key."),
        PRIVATE_KEY_PASSPHRASE_REF: secret_reference("Reference to private key passphrase."),
        PUBLIC_KEY_REF: secret_reference("Reference to public key."),
    }


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Barbican::RSAContainer": RSAContainer}
