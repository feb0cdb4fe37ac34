"""OS::Barbican::Secret, Order, GenericContainer, CertificateContainer and RSAContainer
against the real Barbican of the test cloud (``barbican_service``: barbican-api with the
simple_crypto plugin and barbican-worker, tests/cloud/addons/barbican.py): create,
replacement (Barbican changes nothing in place, and Heat updates none of these types in
place), check (failing once the object is deleted behind the stack's back), delete
tolerating what is already gone, and the attributes; openstacksdk is the witness and
nothing may be left in Barbican. The stacks act as ``demo``, a project member, as a
Heat user would.
"""

from __future__ import annotations

import base64
import secrets
from datetime import UTC, datetime, timedelta

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.resources.openstack.barbican.client_plugin import reference_id
from stoker.template.errors import TemplateErrors
from tests.support.stacks import from_data


@pytest.fixture
def demo_cloud(openstack_cloud, barbican_service):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("demo")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture
def stacks(make_service, demo_cloud):
    """A service, and the stacks a test makes deleted at the end whatever happened."""
    service = make_service()
    names: list[str] = []
    yield service, names
    for name in names:
        if service.store.find_stack(name) is not None:
            service.delete_stack(name)


def physical_ids(service, stack_name: str) -> dict[str, str]:
    return {
        record.name: record.physical_resource_id for record in service.list_resources(stack_name)
    }


def outputs(service, stack_name: str) -> dict:
    return {
        output["output_key"]: output.get("output_value") for output in service.outputs(stack_name)
    }


def exists(key_manager, collection: str, reference: str) -> bool:
    """Whether Barbican has the object (openstacksdk's find_secret cannot tell: its
    secret fetch ignores a 404)."""
    status = key_manager.get(f"/{collection}/{reference_id(reference)}").status_code
    assert status in (200, 404), status
    return status == 200


def secret_exists(key_manager, reference: str) -> bool:
    return exists(key_manager, "secrets", reference)


def future(days: int = 30) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S")


def secret_and_container(payload: str, name: str) -> dict:
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "secret": {
                "type": "OS::Barbican::Secret",
                "properties": {
                    "name": name,
                    "payload": payload,
                    "expiration": future(),
                    "algorithm": "aes",
                },
            },
            "container": {
                "type": "OS::Barbican::GenericContainer",
                "properties": {
                    "name": f"{name}-box",
                    "secrets": [{"name": "password", "ref": {"get_resource": "secret"}}],
                },
            },
        },
        "outputs": {
            "status": {"value": {"get_attr": ["secret", "status"]}},
            "payload": {"value": {"get_attr": ["secret", "decrypted_payload"]}},
            "show_name": {"value": {"get_attr": ["secret", "show", "name"]}},
            "container_status": {"value": {"get_attr": ["container", "status"]}},
            "container_ref": {"value": {"get_attr": ["container", "container_ref"]}},
            "secret_refs": {"value": {"get_attr": ["container", "secret_refs"]}},
            "consumers": {"value": {"get_attr": ["container", "consumers"]}},
        },
    }


def test_barbican_secret_and_generic_container_create_replace_check_delete(demo_cloud, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    key_manager = demo_cloud.connect("demo").key_manager
    stack_name = f"secret-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(
        stack_name, from_data(secret_and_container("first-words", f"pw-{suffix}"))
    )

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    secret = key_manager.get_secret(reference_id(ids["secret"]))
    assert (secret.name, secret.status, secret.secret_type, secret.algorithm) == (
        f"pw-{suffix}",
        "ACTIVE",
        "opaque",
        "aes",
    )
    assert secret.payload == "first-words"
    assert secret.content_types == {"default": "text/plain"}
    container = key_manager.get_container(reference_id(ids["container"]))
    assert (container.name, container.type, container.status) == (
        f"pw-{suffix}-box",
        "generic",
        "ACTIVE",
    )
    assert container.secret_refs == [{"name": "password", "secret_ref": ids["secret"]}]
    assert outputs(service, stack_name) == {
        "status": "ACTIVE",
        "payload": "first-words",
        "show_name": f"pw-{suffix}",
        "container_status": "ACTIVE",
        "container_ref": ids["container"],
        "secret_refs": {"password": ids["secret"]},
        "consumers": [],
    }
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # Any change replaces (Heat updates neither type in place): a new secret, and the
    # container holding it is replaced too; the old ones are deleted.
    stack = service.update_stack(
        stack_name, from_data(secret_and_container("second-words", f"pw-{suffix}"))
    )

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    replaced = physical_ids(service, stack_name)
    assert replaced["secret"] != ids["secret"]
    assert replaced["container"] != ids["container"]
    assert key_manager.get_secret(reference_id(replaced["secret"])).payload == "second-words"
    assert not secret_exists(key_manager, ids["secret"])
    assert key_manager.find_container(reference_id(ids["container"])) is None
    assert outputs(service, stack_name)["payload"] == "second-words"

    # Deleted behind the stack's back: check reads the live objects and fails; the
    # stack's delete takes "already gone" as done.
    key_manager.delete_container(reference_id(replaced["container"]))
    key_manager.delete_secret(reference_id(replaced["secret"]))
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert "container" in checked.status_reason or "secret" in checked.status_reason

    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert list(key_manager.secrets(name=f"pw-{suffix}")) == []


def test_barbican_orders_wait_for_active_and_delete_what_they_made(
    demo_cloud, stacks, barbican_service
):
    service, names = stacks
    suffix = secrets.token_hex(3)
    key_manager = demo_cloud.connect("demo").key_manager
    stack_name = f"order-{suffix}"
    names.append(stack_name)
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "key": {
                "type": "OS::Barbican::Order",
                "properties": {
                    "type": "key",
                    "name": f"key-{suffix}",
                    "algorithm": "aes",
                    "bit_length": 256,
                    "mode": "cbc",
                },
            },
            "pair": {
                "type": "OS::Barbican::Order",
                "properties": {
                    "type": "asymmetric",
                    "name": f"pair-{suffix}",
                    "algorithm": "rsa",
                    "bit_length": 2048,
                    "pass_phrase": f"words-{suffix}",
                },
            },
        },
        "outputs": {
            "key_status": {"value": {"get_attr": ["key", "status"]}},
            "key_secret": {"value": {"get_attr": ["key", "secret_ref"]}},
            "key_order": {"value": {"get_attr": ["key", "order_ref"]}},
            "pair_container": {"value": {"get_attr": ["pair", "container_ref"]}},
            "pair_meta": {"value": {"get_attr": ["pair", "show", "meta"]}},
            "public_key": {"value": {"get_attr": ["pair", "public_key"]}},
            "private_key": {"value": {"get_attr": ["pair", "private_key"]}},
        },
    }

    stack = service.create_stack(stack_name, from_data(template))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    key_order = key_manager.get_order(reference_id(ids["key"]))
    assert (key_order.status, key_order.type, key_order.meta["bit_length"]) == (
        "ACTIVE",
        "key",
        256,
    )
    values = outputs(service, stack_name)
    assert values["key_status"] == "ACTIVE"
    assert values["key_order"] == ids["key"]
    key_secret = key_manager.get_secret(reference_id(values["key_secret"]))
    assert (key_secret.name, key_secret.algorithm, key_secret.bit_length) == (
        f"key-{suffix}",
        "aes",
        256,
    )
    pair = key_manager.get_container(reference_id(values["pair_container"]))
    assert pair.type == "rsa"
    assert sorted(item["name"] for item in pair.secret_refs) == ["private_key", "public_key"]
    # Barbican echoes the passphrase in the order's meta; the show attribute masks it.
    assert values["pair_meta"]["pass_phrase"] == "******"
    assert values["pair_meta"]["algorithm"] == "rsa"
    assert values["public_key"].startswith("-----BEGIN PUBLIC KEY-----")
    assert "PRIVATE KEY-----" in values["private_key"]
    # resource show masks the generated private key (a template's get_attr has it).
    shown = service.resource_attributes(service.get_stack(stack_name), "pair")
    assert shown["private_key"] == "******"
    assert shown["public_key"] == values["public_key"]
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # The key order and its secret deleted behind the stack's back: check fails, and
    # the stack's delete takes them as deleted.
    key_manager.delete_order(reference_id(ids["key"]))
    key_manager.delete_secret(reference_id(values["key_secret"]))
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert "key" in checked.status_reason

    made = [values["key_secret"], *(item["secret_ref"] for item in pair.secret_refs)]
    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert key_manager.find_order(reference_id(ids["key"])) is None
    assert key_manager.find_order(reference_id(ids["pair"])) is None
    assert key_manager.find_container(reference_id(values["pair_container"])) is None
    assert [reference for reference in made if secret_exists(key_manager, reference)] == []


def test_barbican_certificate_and_rsa_containers_name_their_secrets(demo_cloud, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    key_manager = demo_cloud.connect("demo").key_manager
    stack_name = f"containers-{suffix}"
    names.append(stack_name)

    def secret(kind: str, text: str) -> dict:
        return {
            "type": "OS::Barbican::Secret",
            "properties": {
                "name": f"{kind}-{suffix}",
                "secret_type": kind if kind != "intermediates" else "certificate",
                "payload": base64.b64encode(text.encode()).decode(),
                "payload_content_type": "application/octet-stream",
                "payload_content_encoding": "base64",
            },
        }

    template = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "certificate": secret("certificate", "CERTIFICATE"),
            "private": secret("private", "PRIVATE KEY"),
            "public": secret("public", "PUBLIC KEY"),
            "passphrase": secret("passphrase", "words"),
            "intermediates": secret("intermediates", "CHAIN"),
            "tls": {
                "type": "OS::Barbican::CertificateContainer",
                "properties": {
                    "name": f"tls-{suffix}",
                    "certificate_ref": {"get_resource": "certificate"},
                    "private_key_ref": {"get_resource": "private"},
                    "private_key_passphrase_ref": {"get_resource": "passphrase"},
                    "intermediates_ref": {"get_resource": "intermediates"},
                },
            },
            "rsa": {
                "type": "OS::Barbican::RSAContainer",
                "properties": {
                    "name": f"rsa-{suffix}",
                    "private_key_ref": {"get_resource": "private"},
                    "public_key_ref": {"get_resource": "public"},
                },
            },
        },
        "outputs": {"tls_refs": {"value": {"get_attr": ["tls", "secret_refs"]}}},
    }

    stack = service.create_stack(stack_name, from_data(template))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    tls = key_manager.get_container(reference_id(ids["tls"]))
    assert (tls.type, tls.name) == ("certificate", f"tls-{suffix}")
    assert {item["name"]: item["secret_ref"] for item in tls.secret_refs} == {
        "certificate": ids["certificate"],
        "private_key": ids["private"],
        "private_key_passphrase": ids["passphrase"],
        "intermediates": ids["intermediates"],
    }
    rsa = key_manager.get_container(reference_id(ids["rsa"]))
    assert rsa.type == "rsa"
    assert {item["name"]: item["secret_ref"] for item in rsa.secret_refs} == {
        "private_key": ids["private"],
        "public_key": ids["public"],
    }
    assert outputs(service, stack_name)["tls_refs"]["certificate"] == ids["certificate"]
    assert key_manager.get_secret(reference_id(ids["passphrase"])).payload == b"words"

    # Replacing the RSA container (a new name) leaves the certificate container alone.
    template["resources"]["rsa"]["properties"]["name"] = f"rsa2-{suffix}"
    stack = service.update_stack(stack_name, from_data(template))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = physical_ids(service, stack_name)
    assert after["rsa"] != ids["rsa"] and after["tls"] == ids["tls"]
    assert key_manager.find_container(reference_id(ids["rsa"])) is None

    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert [ref for ref in ids.values() if secret_exists(key_manager, ref)] == []
    assert key_manager.find_container(reference_id(after["rsa"])) is None


def _refused(service, template: dict) -> str:
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(f"invalid-{secrets.token_hex(3)}", from_data(template))
    return str(raised.value)


def test_barbican_validation_errors_name_the_resource_and_property(demo_cloud, make_service):
    service = make_service()
    suffix = secrets.token_hex(3)

    def one(resource_type: str, **properties: object) -> dict:
        return {
            "heat_template_version": "2021-04-16",
            "resources": {"thing": {"type": resource_type, "properties": properties}},
        }

    octets = _refused(
        service,
        one(
            "OS::Barbican::Secret",
            payload="c2VjcmV0",
            payload_content_type="application/octet-stream",
        ),
    )
    assert "'payload_content_encoding' property must be specified" in octets
    assert "resources.thing.properties.payload_content_encoding" in octets

    not_base64 = _refused(
        service,
        one(
            "OS::Barbican::Secret",
            payload="not base64 at all!",
            payload_content_type="application/octet-stream",
            payload_content_encoding="base64",
        ),
    )
    assert "Invalid payload for specified 'base64' value" in not_base64
    assert "not base64 at all!" not in not_base64  # the payload is never quoted

    expired = _refused(
        service, one("OS::Barbican::Secret", payload="x", expiration="2017-12-28T19:14:44")
    )
    assert "Expiration time is out of date." in expired
    assert "resources.thing.properties.expiration" in expired

    no_algorithm = _refused(service, one("OS::Barbican::Order", type="key", bit_length=256))
    assert "Properties algorithm and bit_length are required for key type of order." in no_algorithm

    unexpected = _refused(
        service,
        one("OS::Barbican::Order", type="key", algorithm="aes", bit_length=256, pass_phrase="p"),
    )
    assert "Unexpected properties: pass_phrase." in unexpected
    assert "resources.thing.properties.pass_phrase" in unexpected

    missing = f"http://127.0.0.1:1/v1/secrets/{suffix}"
    unknown = _refused(service, one("OS::Barbican::RSAContainer", public_key_ref=missing))
    assert f"The Secret ({missing}) could not be found." in unknown
    assert "resources.thing.properties.public_key_ref" in unknown

    duplicate = _refused(
        service,
        {
            "heat_template_version": "2021-04-16",
            "resources": {
                "secret": {"type": "OS::Barbican::Secret", "properties": {"payload": "p"}},
                "box": {
                    "type": "OS::Barbican::GenericContainer",
                    "properties": {
                        "secrets": [
                            {"name": "a", "ref": missing},
                            {"name": "b", "ref": missing},
                        ]
                    },
                },
            },
        },
    )
    assert "Duplicate refs are not allowed." in duplicate or "could not be found" in duplicate


def test_barbican_order_that_barbican_fails_fails_with_its_reason(demo_cloud, stacks):
    """Barbican takes an AES key of 200 bits (a multiple of 8) and its worker then finds no
    plugin that makes one: the order goes ERROR, and the create fails with Barbican's code
    and reason, as Heat words it."""
    service, names = stacks
    suffix = secrets.token_hex(3)
    stack_name = f"bad-order-{suffix}"
    names.append(stack_name)
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "key": {
                "type": "OS::Barbican::Order",
                "properties": {
                    "type": "key",
                    "name": f"odd-{suffix}",
                    "algorithm": "aes",
                    "bit_length": 200,
                },
            }
        },
    }

    stack = service.create_stack(stack_name, from_data(template))

    assert stack.state == "CREATE_FAILED"
    order = demo_cloud.connect("demo").key_manager.get_order(
        reference_id(physical_ids(service, stack_name)["key"])
    )
    assert order.status == "ERROR"
    # Barbican's own words for it (its worker hides the cause behind a 500).
    assert "Order 'key' failed: 500 - Process TypeOrder failure seen" in stack.status_reason
    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert demo_cloud.connect("demo").key_manager.find_order(order.order_id) is None
