"""OS::Nova::KeyPair, Flavor and ServerGroup without a cloud: Heat's schemas and
validation rules, the requests built from properties, and what updates in place (no
client is called here; tests/cloud/test_nova_types.py drives the real Nova)."""

from __future__ import annotations

import pytest

from stoker.resources.openstack import resource_mapping
from stoker.resources.openstack.nova.flavor import NovaFlavor
from stoker.resources.openstack.nova.keypair import KeyPair
from stoker.resources.openstack.nova.server_group import ServerGroup
from stoker.sdk.exceptions import UpdateReplace, ValidationError
from stoker.sdk.testing import PluginHarness

# The lookup constraints (keystone.user...) ask the cloud; the cloud tests cover them.
NAMES = {name: (lambda value: isinstance(value, str) and bool(value)) for name in ("keystone.user", "keystone.project")}


def test_nova_types_are_registered_under_heat_names():
    mapping = resource_mapping()
    assert (mapping["OS::Nova::KeyPair"], mapping["OS::Nova::Flavor"], mapping["OS::Nova::ServerGroup"]) == (
        KeyPair,
        NovaFlavor,
        ServerGroup,
    )


def keypair(**properties) -> PluginHarness:
    return PluginHarness(KeyPair, properties, name="key", constraints=NAMES)


def test_nova_keypair_requires_a_name_of_1_to_255_characters():
    with pytest.raises(ValidationError):
        keypair().validate()
    with pytest.raises(ValidationError):
        keypair(name="").validate()
    with pytest.raises(ValidationError):
        keypair(name="k" * 256).validate()
    keypair(name="k" * 255).validate()


def test_nova_keypair_type_is_ssh_or_x509():
    with pytest.raises(ValidationError):
        keypair(name="k", type="rsa").validate()


def test_nova_keypair_create_arguments_leave_out_what_nova_generates():
    assert keypair(name="k", save_private_key=True).resource.create_arguments() == {"name": "k"}
    # (user is resolved to an id through Keystone: the cloud tests cover it.)
    imported = keypair(name="k", public_key="ssh-ed25519 AAAA", type="ssh").resource
    assert imported.create_arguments() == {"name": "k", "public_key": "ssh-ed25519 AAAA", "type": "ssh"}


def test_nova_keypair_private_key_is_read_only_when_saved():
    saved = keypair(name="k", save_private_key=True)
    saved.resource.data_set("private_key", "-----BEGIN KEY", redact=True)
    unsaved = keypair(name="k")
    unsaved.resource.data_set("private_key", "-----BEGIN KEY", redact=True)

    assert saved.attribute("private_key") == "-----BEGIN KEY"
    assert unsaved.attribute("private_key") == ""


def test_nova_keypair_public_key_attribute_is_the_imported_key():
    assert keypair(name="k", public_key="ssh-ed25519 AAAA").attribute("public_key") == "ssh-ed25519 AAAA"


def test_nova_keypair_updates_nothing_in_place():
    with pytest.raises(UpdateReplace):
        keypair(name="k").update({"name": "other"})
    with pytest.raises(UpdateReplace):
        keypair(name="k").update({"name": "k", "save_private_key": True})


def flavor(**properties) -> PluginHarness:
    values = {"ram": 512, "vcpus": 1}
    values.update(properties)
    return PluginHarness(NovaFlavor, values, name="small", stack_name="web", constraints=NAMES)


def test_nova_flavor_requires_ram_and_vcpus():
    with pytest.raises(ValidationError):
        PluginHarness(NovaFlavor, {"ram": 512}).validate()
    with pytest.raises(ValidationError):
        PluginHarness(NovaFlavor, {"vcpus": 1}).validate()


def test_nova_flavor_create_arguments_apply_heat_defaults_and_physical_name():
    harness = flavor()

    arguments = harness.resource.create_arguments()

    assert arguments == {
        "name": harness.resource.physical_resource_name(),
        "ram": 512,
        "vcpus": 1,
        "disk": 0,
        "swap": 0,
        "ephemeral": 0,
        "rxtx_factor": 1.0,
        "is_public": True,
    }
    assert arguments["name"].startswith("web-small-")


def test_nova_flavor_create_arguments_keep_a_given_name_and_id():
    arguments = flavor(name="m1.custom", flavorid="custom-1", is_public=False).resource.create_arguments()

    assert (arguments["name"], arguments["id"], arguments["is_public"]) == ("m1.custom", "custom-1", False)


def test_nova_flavor_updates_only_extra_specs_and_tenants_in_place():
    schema = NovaFlavor.properties_schema
    assert {key for key in schema if schema[key].update_allowed} == {"extra_specs", "tenants"}
    with pytest.raises(UpdateReplace):
        flavor().update({"ram": 1024, "vcpus": 1})


def test_nova_flavor_find_created_is_none_when_the_template_names_the_flavor():
    assert flavor(name="m1.custom").resource.find_created() is None
    assert flavor(flavorid="custom-1").resource.find_created() is None


def server_group(**properties) -> PluginHarness:
    return PluginHarness(ServerGroup, properties, name="group", stack_name="web")


def test_nova_server_group_defaults_to_anti_affinity_and_physical_name():
    resource = server_group().resource
    resource.validate()

    assert resource.create_arguments() == {"name": resource.physical_resource_name(), "policies": ["anti-affinity"]}
    assert resource.physical_resource_name().startswith("web-group-")


def test_nova_server_group_name_is_the_physical_name_when_given():
    assert server_group(name="spread").resource.physical_resource_name() == "spread"


def test_nova_server_group_takes_exactly_one_known_policy():
    with pytest.raises(ValidationError):
        server_group(policies=["anywhere"]).validate()
    with pytest.raises(ValidationError, match="exactly one policy"):
        server_group(policies=["affinity", "anti-affinity"]).validate()


def test_nova_server_group_rules_are_sent_as_integers():
    resource = server_group(rules={"max_server_per_host": 2}).resource

    assert resource.create_arguments()["rules"] == {"max_server_per_host": 2}
    assert isinstance(resource.create_arguments()["rules"]["max_server_per_host"], int)


def test_nova_server_group_updates_nothing_in_place():
    with pytest.raises(UpdateReplace):
        server_group(policies=["affinity"]).update({"policies": ["anti-affinity"]})
