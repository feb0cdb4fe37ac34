"""OS::Barbican::* without a cloud: Heat's validation rules and their messages, which
property changes replace (all of them), the ``expiration`` constraint and Barbican
references (the cloud tests in tests/cloud/test_barbican_*.py drive the real Barbican)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from stoker.resources.openstack.barbican.certificate_container import CertificateContainer
from stoker.resources.openstack.barbican.client_plugin import ExpirationConstraint, reference_id
from stoker.resources.openstack.barbican.container import GenericContainer
from stoker.resources.openstack.barbican.order import Order
from stoker.resources.openstack.barbican.rsa_container import RSAContainer
from stoker.resources.openstack.barbican.secret import Secret
from stoker.sdk.exceptions import UpdateReplace, ValidationError
from stoker.sdk.testing import PluginHarness

# The lookup constraints ask Barbican; the cloud tests cover them.
NAMES = {
    "barbican.secret": lambda value: isinstance(value, str) and bool(value),
    "barbican.container": lambda value: isinstance(value, str) and bool(value),
    "expiration": ExpirationConstraint,
}


def harness(plugin, **properties) -> PluginHarness:
    return PluginHarness(plugin, properties, name="thing", constraints=NAMES)


@pytest.mark.parametrize(
    ("properties", "message", "path"),
    [
        (
            {"payload_content_type": "text/plain"},
            "payload_content_type cannot be specified without payload.",
            "payload_content_type",
        ),
        (
            {"payload": "c2VjcmV0", "payload_content_type": "application/octet-stream"},
            "For 'application/octet-stream' value of 'payload_content_type' property, 'payload_content_encoding' property must be specified.",
            "payload_content_encoding",
        ),
        (
            {
                "payload": "!!",
                "payload_content_type": "application/octet-stream",
                "payload_content_encoding": "base64",
            },
            "Invalid payload for specified 'base64' value of 'payload_content_encoding' property.",
            "payload",
        ),
        (
            {"payload": "x", "payload_content_encoding": "base64"},
            "payload_content_encoding property should only be specified for payload_content_type with value application/octet-stream.",
            "payload_content_encoding",
        ),
    ],
)
def test_barbican_secret_validation_follows_heat(properties, message, path):
    with pytest.raises(ValidationError) as raised:
        harness(Secret, **properties).validate()
    assert message in raised.value.message
    assert raised.value.path == f"resources.thing.properties.{path}"


def test_barbican_secret_defaults_and_plain_text_payload():
    secret = harness(Secret, payload="words", name="pw")
    secret.validate()
    assert secret.resource.create_arguments() == {
        "payload": "words",
        "name": "pw",
        "secret_type": "opaque",
        "payload_content_type": "text/plain",
    }


@pytest.mark.parametrize(
    "plugin", [Secret, Order, GenericContainer, CertificateContainer, RSAContainer]
)
def test_barbican_types_replace_on_every_property_change(plugin):
    assert not any(schema.update_allowed for schema in plugin.properties_schema.values())
    with pytest.raises(UpdateReplace):
        harness(plugin, name="old").resource.handle_update(None, {}, {"name": "new"})


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        (
            {"type": "key", "bit_length": 256},
            "Properties algorithm and bit_length are required for key type of order.",
        ),
        (
            {"type": "key", "algorithm": "aes", "bit_length": 256, "subject_dn": "cn=x"},
            "Unexpected properties: subject_dn. Only these properties are allowed for key type of order: "
            "algorithm, bit_length, expiration, mode, name, payload_content_type.",
        ),
        ({"type": "certificate", "profile": "p"}, "profile cannot be specified without ca_id."),
    ],
)
def test_barbican_order_validation_follows_heat(properties, message):
    with pytest.raises(ValidationError) as raised:
        harness(Order, **properties).validate()
    assert message in raised.value.message


def test_barbican_containers_refuse_duplicate_refs_and_name_their_secrets():
    with pytest.raises(ValidationError, match="Duplicate refs are not allowed."):
        harness(
            GenericContainer, secrets=[{"name": "a", "ref": "r"}, {"name": "b", "ref": "r"}]
        ).validate()
    with pytest.raises(ValidationError, match="Duplicate refs are not allowed."):
        harness(RSAContainer, private_key_ref="r", public_key_ref="r").validate()
    certificate = harness(
        CertificateContainer, certificate_ref="c", private_key_ref="k", name="tls"
    )
    assert certificate.resource.secret_references() == {"certificate": "c", "private_key": "k"}


def test_expiration_constraint_wants_a_future_iso_8601_time():
    constraint = ExpirationConstraint()
    later = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.%f")
    assert constraint.validate(later)
    assert constraint.validate(later + "Z")
    assert not constraint.validate("2017-12-28T19:14:44.180394")
    assert constraint.error("2017") == "Expiration time is out of date."
    assert not constraint.validate("next tuesday")
    assert "ISO 8601" in constraint.error("next tuesday")


def test_barbican_reference_id_is_the_last_path_segment():
    assert reference_id("http://127.0.0.1:9311/v1/secrets/1b8e-42") == "1b8e-42"
    assert reference_id("http://127.0.0.1:9311/v1/containers/1b8e-42/") == "1b8e-42"
    assert reference_id("1b8e-42") == "1b8e-42"
