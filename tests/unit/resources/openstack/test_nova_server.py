"""OS::Nova::Server without a cloud: its declarations against Heat's, the validation rules,
the request bodies it builds (block devices, networks, ports, metadata, user data), the plan
of an in-place networks update, replacement policies, restore and the update token.
Everything that talks to Nova is in tests/cloud/test_nova_server.py."""

from __future__ import annotations

import base64
import email
import json

import pytest

from stoker.resources import builtin_mapping
from stoker.resources.openstack.nova import server_requests as requests
from stoker.resources.openstack.nova import server_schema as s
from stoker.resources.openstack.nova import server_update
from stoker.resources.openstack.nova.server import Server
from stoker.resources.openstack.nova.server_networks import first_address, server_networks
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.properties import UNRESOLVED
from stoker.sdk.testing import PluginHarness
from stoker.template.definitions import ResourceDefinition

# -- declarations ----------------------------------------------------------------------------


def test_server_is_registered_as_heat_names_it():
    assert builtin_mapping()["OS::Nova::Server"] is Server


def test_server_schema_has_heat_defaults_and_update_behaviour():
    schema = Server.properties_schema
    assert schema["flavor"].required and schema["flavor"].update_allowed
    assert schema["flavor_update_policy"].default == "RESIZE"
    assert schema["image_update_policy"].default == "REBUILD"
    assert schema["user_data_update_policy"].default == "REPLACE"
    assert schema["user_data_format"].default == "HEAT_CFNTOOLS"
    assert schema["software_config_transport"].default == "POLL_TEMP_URL"
    assert schema["security_groups"].default == [] and schema["metadata"].default == {}
    updatable = {name for name, prop in schema.items() if prop.update_allowed}
    assert updatable == {
        "name", "image", "flavor", "flavor_update_policy", "image_update_policy", "networks", "metadata",
        "software_config_transport", "user_data_update_policy", "user_data", "admin_pass", "tags",
        "deployment_swift_data",
    }
    assert set(Server.attributes_schema) == {
        "name", "addresses", "networks", "first_address", "instance_name", "accessIPv4", "accessIPv6",
        "console_urls", "tags", "os_collect_config",
    }


def test_server_port_extra_properties_are_the_port_schemas():
    extra = Server.properties_schema["networks"].item_schema().schema["port_extra_properties"].schema
    assert set(extra) == {
        "value_specs", "admin_state_up", "mac_address", "allowed_address_pairs", "binding:vnic_type",
        "qos_policy", "port_security_enabled", "propagate_uplink_status", "no_fixed_ips",
    }


# -- block devices -----------------------------------------------------------------------------


def test_server_block_devices_v2_take_heat_defaults_per_source():
    devices = requests.block_devices_v2(
        [
            {"image": "img", "volume_size": 2, "device_name": "vda"},
            {"volume_id": "vol", "boot_index": 1, "delete_on_termination": True},
            {"swap_size": 512},
            {"ephemeral_size": 1, "ephemeral_format": "ext4"},
        ]
    )
    assert devices == [
        {"uuid": "img", "source_type": "image", "destination_type": "volume", "boot_index": 0,
         "delete_on_termination": False, "device_name": "vda", "volume_size": 2},
        {"uuid": "vol", "source_type": "volume", "destination_type": "volume", "boot_index": 1,
         "delete_on_termination": True},
        {"source_type": "blank", "destination_type": "local", "boot_index": -1, "delete_on_termination": True,
         "guest_format": "swap", "volume_size": 512},
        {"source_type": "blank", "destination_type": "local", "boot_index": -1, "delete_on_termination": True,
         "volume_size": 1, "guest_format": "ext4"},
    ]


def test_server_legacy_block_devices_boot_from_vda_without_an_image():
    mappings = [
        {"device_name": "vdb", "volume_id": "data", "volume_size": None, "delete_on_termination": None, "snapshot_id": None},
        {"device_name": "vda", "snapshot_id": "snap", "volume_size": 3, "delete_on_termination": True, "volume_id": None},
    ]
    without_image = requests.legacy_block_devices(mappings, None)
    with_image = requests.legacy_block_devices(mappings, "img")

    assert [(d["uuid"], d["source_type"], d["boot_index"]) for d in without_image] == [("data", "volume", -1), ("snap", "snapshot", 0)]
    assert without_image[1]["volume_size"] == 3 and without_image[1]["delete_on_termination"] is True
    assert [d["boot_index"] for d in with_image] == [-1, -1]


@pytest.mark.parametrize(
    ("image", "bdm", "bdm_v2", "message"),
    [
        (None, [{"device_name": "vda", "volume_id": "v"}], [{"volume_id": "v"}],
         "Cannot define the following properties at the same time: block_device_mapping, block_device_mapping_v2."),
        (None, [{"device_name": "vda", "volume_id": "v", "snapshot_id": "s"}], None,
         "Cannot define the following properties at the same time: volume_id, snapshot_id."),
        (None, [{"device_name": "vdb"}], None, "Either volume_id or snapshot_id must be specified for device mapping vdb"),
        (None, None, [{"device_name": "vda"}],
         "Either volume_id, snapshot_id, image_id, swap_size, ephemeral_size or ephemeral_format must be specified."),
        (None, None, [{"volume_id": "v", "swap_size": 1}],
         "Cannot define the following properties at the same time: volume_id, snapshot_id, image, swap_size, ephemeral_size, ephemeral_format."),
        (None, None, None, "Neither image nor bootable volume is specified for instance web"),
        (None, None, [{"swap_size": 1}], "Neither image nor bootable volume is specified for instance web"),
        ("img", None, [{"volume_id": "v"}], "Multiple bootable sources for instance web."),
        (None, None, [{"volume_id": "v"}, {"image": "i", "boot_index": 0}], "Multiple bootable sources for instance web."),
    ],
)
def test_server_block_device_rules_refuse_with_heat_messages(image, bdm, bdm_v2, message):
    with pytest.raises(ValidationError) as raised:
        requests.validate_block_devices("web", image, bdm, bdm_v2)
    assert raised.value.message == message


@pytest.mark.parametrize(
    ("image", "bdm", "bdm_v2"),
    [
        ("img", None, None),
        (None, [{"device_name": "vda", "volume_id": "v"}], None),
        (None, None, [{"volume_id": "v"}, {"swap_size": 1}]),
        ("img", None, [{"volume_id": "data", "boot_index": 1}]),
        (None, None, [{"volume_id": UNRESOLVED}]),  # a volume of the same stack
    ],
)
def test_server_block_device_rules_accept_one_boot_source(image, bdm, bdm_v2):
    requests.validate_block_devices("web", image, bdm, bdm_v2)


# -- networks ------------------------------------------------------------------------------


def entry(**given):
    """A networks entry as the properties give it: every key, None when not given."""
    return {key: given.get(key) for key in s.NETWORK_KEYS}


@pytest.mark.parametrize(
    ("networks", "security_groups", "message"),
    [
        ([entry(fixed_ip="10.0.0.5")], None,
         'One of the properties "network", "port", "allocate_network" or "subnet" should be set for the specified network of server "web".'),
        ([entry(allocate_network="auto", network="n")], None,
         'Can not specify "allocate_network" with other keys of networks at the same time.'),
        ([entry(port="p", fixed_ip="10.0.0.5")], None,
         "Cannot define the following properties at the same time: networks/fixed_ip, networks/port."),
        ([entry(network="n", floating_ip="f")], None,
         'Property "floating_ip" is not supported if only "network" is specified, because the corresponding port can not be retrieved.'),
        ([entry(allocate_network="auto"), entry(network="n")], None,
         'Property "allocate_network" can not be specified if multiple network interfaces set for server.'),
        ([entry(port="p")], ["default"], "Cannot define the following properties at the same time: security_groups, networks/port."),
    ],
)
def test_server_network_rules_refuse_with_heat_messages(networks, security_groups, message):
    with pytest.raises(ValidationError) as raised:
        requests.validate_networks("web", networks, security_groups)
    assert raised.value.message == message


def test_server_network_rules_accept_each_form():
    requests.validate_networks(
        "web",
        [entry(network="n"), entry(subnet="s", floating_ip="f"), entry(port=UNRESOLVED), entry(network="n", fixed_ip="10.0.0.5")],
        None,
    )
    requests.validate_networks("web", [entry(allocate_network="none")], ["default"])


def test_server_nic_request_prefers_the_port_and_keeps_the_fixed_ip_of_a_network():
    assert requests.nic_request("net", None, "10.0.0.5", "eth0") == {"uuid": "net", "fixed_ip": "10.0.0.5", "tag": "eth0"}
    assert requests.nic_request("net", "port", "10.0.0.5", None) == {"port": "port"}


def test_server_internal_port_request_carries_subnet_ip_groups_and_extras():
    network = entry(
        subnet="sub",
        fixed_ip="10.0.0.7",
        port_extra_properties={
            "value_specs": {"binding:host_id": "h"},
            "admin_state_up": True,
            "allowed_address_pairs": [{"ip_address": "10.0.0.0/24", "mac_address": None}],
            "no_fixed_ips": False,
            "qos_policy": None,
        },
    )
    body = requests.internal_port_request("net", network, ["sg-1"])
    assert body == {
        "network_id": "net",
        "fixed_ips": [{"ip_address": "10.0.0.7", "subnet_id": "sub"}],
        "security_groups": ["sg-1"],
        "binding:host_id": "h",
        "admin_state_up": True,
        "allowed_address_pairs": [{"ip_address": "10.0.0.0/24"}],
    }
    no_ips = requests.internal_port_request("net", entry(port_extra_properties={"no_fixed_ips": True}), None)
    assert no_ips == {"network_id": "net", "fixed_ips": []}


# -- metadata and user data -------------------------------------------------------------------


def test_server_metadata_values_that_are_not_strings_go_as_json():
    assert requests.serialize_metadata({"role": "web", "weight": 3, "tags": ["a"], "on": True}) == {
        "role": "web", "weight": "3", "tags": '["a"]', "on": "true",
    }
    with pytest.raises(ValidationError, match="nova server metadata needs to be a Map."):
        requests.serialize_metadata(["not", "a", "map"])


def test_server_raw_user_data_passes_through_base64_encoded():
    built = requests.build_user_data("#!/bin/sh\necho hi\n", "RAW", {"ignored": True})
    assert built == "#!/bin/sh\necho hi\n"
    assert base64.b64decode(requests.encode_user_data(built)).decode() == built
    assert requests.build_user_data("", "RAW", None) is None and requests.encode_user_data(None) is None


def _parts(mime: str) -> list[tuple[str, str | None, str]]:
    message = email.message_from_string(mime)
    assert message.is_multipart()
    return [(part.get_content_type(), part.get_filename(), part.get_payload(decode=True).decode()) for part in message.get_payload()]


def test_server_heat_cfntools_user_data_is_a_cloud_init_bundle():
    parts = _parts(requests.build_user_data("#!/bin/sh\necho hi\n", "HEAT_CFNTOOLS", {"AWS::CloudFormation::Init": {}}))
    kinds = [(kind, name) for kind, name, _ in parts]
    assert kinds == [
        ("text/part-handler", "part-handler.py"),
        ("text/x-cfninitdata", "cfn-userdata"),
        ("text/x-shellscript", "run-cfn-userdata.sh"),
        ("text/x-cfninitdata", "cfn-init-data"),
    ]
    assert parts[1][2] == "#!/bin/sh\necho hi\n"
    assert json.loads(parts[3][2]) == {"AWS::CloudFormation::Init": {}}
    assert "def handle_part(data, ctype, filename, payload)" in parts[0][2]


def test_server_software_config_user_data_keeps_each_part_of_a_multipart_script():
    given = requests.build_user_data("#cloud-config\npackages: []\n", "HEAT_CFNTOOLS", None)
    parts = _parts(requests.build_user_data(given, "SOFTWARE_CONFIG", None))
    assert [name for _, name, _ in parts] == ["part-handler.py", "part-handler.py", "cfn-userdata", "run-cfn-userdata.sh"]
    plain = _parts(requests.build_user_data("echo hi", "SOFTWARE_CONFIG", {"k": "v"}))
    assert [(kind, payload) for kind, _, payload in plain][1:] == [("text/plain", "echo hi"), ("text/x-cfninitdata", '{"k": "v"}')]


def test_server_software_config_user_data_keeps_a_nested_multipart_part_whole():
    # Heat fails here (AttributeError: a nested multipart's payload is a list of parts).
    inner = requests.build_user_data("echo inner", "SOFTWARE_CONFIG", None)
    outer = email.message_from_string(requests.build_user_data("echo outer", "SOFTWARE_CONFIG", None))
    outer.attach(email.message_from_string(inner))
    built = email.message_from_string(requests.build_user_data(outer.as_string(), "SOFTWARE_CONFIG", {"k": "v"}))
    pieces = built.get_payload()
    assert [piece.get_content_type() for piece in pieces] == [
        "text/part-handler", "text/part-handler", "text/plain", "multipart/mixed", "text/x-cfninitdata",
    ]
    assert [part.get_payload(decode=True).decode() for part in pieces[3].get_payload()] == [
        requests._PART_HANDLER, "echo inner",
    ]


def test_server_software_config_ignition_gets_the_metadata_as_files():
    ignition = json.dumps({"ignition": {"version": "3.0.0"}})
    built = json.loads(requests.build_user_data(ignition, "SOFTWARE_CONFIG", {"k": "v"}))
    assert [file["path"] for file in built["storage"]["files"]] == [
        "/var/lib/heat-cfntools/cfn-init-data", "/var/lib/cloud/data/cfn-init-data",
    ]
    assert built["storage"]["files"][0]["contents"]["source"] == "data:,%7B%22k%22%3A%20%22v%22%7D"
    assert requests.build_user_data(ignition, "SOFTWARE_CONFIG", None) == ignition


# -- address attributes --------------------------------------------------------------------------


def test_server_networks_and_first_address_read_nova_addresses():
    addresses = {"private": [{"addr": "10.0.0.5", "version": 4}], "public": [], "admin": [{"addr": "192.0.2.9"}]}
    assert server_networks(addresses) == {"private": ["10.0.0.5"], "public": [], "admin": ["192.0.2.9"]}
    assert first_address(addresses) == "10.0.0.5"  # the last label with an address, as Heat
    assert first_address({}) == ""


# -- updating networks in place -------------------------------------------------------------------


def iface(port, network, fixed_ip, subnet="sub"):
    return {"port": port, "network": network, "fixed_ip": fixed_ip, "subnet": subnet}


def no_subnet_lookup(subnet):
    raise AssertionError(f"looked up {subnet}")


def test_server_network_plan_keeps_matching_entries_and_swaps_the_rest():
    old = [entry(network="n1"), entry(subnet="sub2")]
    new = [entry(network="n1"), entry(network="n2", fixed_ip="10.0.2.9")]
    interfaces = [iface("p1", "n1", "10.0.1.4", "sub1"), iface("p2", "n2", "10.0.2.4", "sub2")]

    plan = requests.plan_network_update(old, new, interfaces, ["p2"], lambda subnet: {"sub2": "n2"}[subnet])

    assert plan.detach == ["p2"] and plan.delete_internal == ["p2"]
    assert [(e["network"], e["fixed_ip"]) for e in plan.attach] == [("n2", "10.0.2.9")]
    assert plan.update_ports == [] and plan.disassociate == []


def test_server_network_plan_detaches_everything_for_no_networks_and_attaches_any():
    plan = requests.plan_network_update([entry(port="p1", floating_ip="f1")], [], [iface("p1", "n1", "10.0.1.4")], [], no_subnet_lookup)
    assert (plan.detach, plan.disassociate, plan.attach) == (["p1"], ["f1"], [{}])


def test_server_network_plan_for_auto_replaces_every_interface():
    plan = requests.plan_network_update([entry(network="n1")], [entry(allocate_network="auto")], [iface("p1", "n1", "10.0.1.4")], ["p1"], no_subnet_lookup)
    assert (plan.detach, plan.delete_internal, plan.attach) == (["p1"], ["p1"], [{"allocate_network": "auto"}])


def test_server_network_plan_updates_port_extras_in_place_when_neutron_allows():
    old = [entry(subnet="sub", port_extra_properties={"admin_state_up": True, "value_specs": {}})]
    new = [entry(subnet="sub", port_extra_properties={"admin_state_up": False, "value_specs": {}})]
    moved = [entry(subnet="sub", port_extra_properties={"mac_address": "fa:16:3e:00:00:01", "value_specs": {}})]
    interfaces = [iface("p1", "n1", "10.0.1.4")]

    in_place = requests.plan_network_update(old, new, interfaces, ["p1"], lambda subnet: "n1")
    replaced = requests.plan_network_update(old, moved, interfaces, ["p1"], lambda subnet: "n1")

    assert (in_place.update_ports, in_place.detach, in_place.attach) == ([("p1", {"admin_state_up": False})], [], [])
    assert replaced.update_ports == [] and replaced.detach == ["p1"] and len(replaced.attach) == 1


def test_server_network_plan_between_none_and_empty_changes_nothing():
    plan = requests.plan_network_update(None, [], [iface("p1", "n1", "10.0.1.4")], [], no_subnet_lookup)
    assert (plan.detach, plan.attach) == ([], [])


# -- replacement policies, restore, tokens ----------------------------------------------------------


@pytest.mark.parametrize(
    ("changed", "after", "before", "replace"),
    [
        ({"flavor"}, {}, {}, False),
        ({"flavor"}, {"flavor_update_policy": "REPLACE"}, {}, True),
        ({"image"}, {}, {"image_update_policy": "REPLACE"}, True),
        ({"image"}, {"image_update_policy": "REBUILD_PRESERVE_EPHEMERAL"}, {}, False),
        ({"user_data"}, {}, {}, True),
        ({"user_data"}, {"user_data_update_policy": "IGNORE"}, {}, False),
        ({"user_data"}, {"user_data_update_policy": "REBUILD"}, {}, False),
        ({"name", "metadata"}, {}, {}, False),
    ],
)
def test_server_update_policies_decide_replacement(changed, after, before, replace):
    server = PluginHarness(Server, {"flavor": "m1.tiny"}).resource
    assert server.needs_replace_with_prop_diff(changed, after, before) is replace


def test_server_restore_boots_the_snapshot_image_from_the_same_definition():
    server = PluginHarness(Server, {"flavor": "m1.tiny"}).resource
    definition = ResourceDefinition("web", "OS::Nova::Server", {"flavor": "m1.tiny", "image": "old", "key_name": None})

    restored = server.handle_restore(definition, {"resource_data": {"snapshot_image_id": "snap-image"}})

    assert dict(restored.properties_data) == {"flavor": "m1.tiny", "image": "snap-image"}
    assert server.handle_restore(definition, {"resource_data": {}}) is definition


def test_server_find_created_needs_a_generated_name():
    named = PluginHarness(Server, {"flavor": "m1.tiny", "name": "given"}).resource
    assert named.find_created() is None  # a given name cannot tell this stack's server apart


def test_server_update_token_is_plain_json_and_done_when_every_step_is():
    token = server_update.new_token([{"op": "resize", "flavor": "f", "flavor_name": "m1.small"}, {"op": "confirm_resize", "flavor": "f"}])
    assert json.loads(json.dumps(token)) == token
    assert [step["state"] for step in token["steps"]] == ["new", "new"]
    harness = PluginHarness(Server, {"flavor": "m1.tiny"})
    for step in token["steps"]:
        step["state"] = "done"
    harness.resource.data_set(server_update.UPDATE_PROGRESS, token)

    assert server_update.advance(harness.resource, token) is True
    assert server_update.UPDATE_PROGRESS not in harness.resource.data()


def test_server_update_resumes_from_the_progress_in_its_data():
    """A restarted engine polls with the token saved when handle_update returned; the
    steps' progress since then is read back from the resource data."""
    harness = PluginHarness(Server, {"flavor": "m1.tiny"})
    token = server_update.new_token([{"op": "detach", "port": "p"}])
    saved = json.loads(json.dumps(token))
    saved["steps"][0]["state"] = "done"
    harness.resource.data_set(server_update.UPDATE_PROGRESS, saved)

    assert server_update.advance(harness.resource, token) is True
    assert token["steps"][0]["state"] == "done"


def test_server_follows_the_subnets_of_its_networks_implicitly():
    from stoker.sdk.dependencies import Reference, ResourceView, StackView

    def view(name, type_name, properties):
        return ResourceView(name, type_name, properties, lambda other: False, lambda value: value)

    stack = StackView(
        [
            view("subnet_a", "OS::Neutron::Subnet", {"network": Reference("net_a")}),
            view("subnet_b", "OS::Neutron::Subnet", {"network": Reference("net_b")}),
            view("web", "OS::Nova::Server", {"networks": [{"network": Reference("net_a")}]}),
            view("bare", "OS::Nova::Server", {}),
        ]
    )
    assert list(Server.implicit_dependencies(stack.get("web"), stack)) == ["subnet_a"]
    assert list(Server.implicit_dependencies(stack.get("bare"), stack)) == []


def test_a_mapping_without_a_boot_disk_boots_the_image_first():
    data_disk = requests.legacy_block_devices([{"device_name": "vdb", "volume_id": "vol-1"}], "img-1")
    devices = requests.booting_image(data_disk, "img-1")
    assert devices[0] == {"uuid": "img-1", "source_type": "image", "destination_type": "local", "boot_index": 0, "delete_on_termination": True}
    assert devices[1:] == data_disk
    booting = requests.block_devices_v2([{"volume_id": "vol-2"}])
    assert requests.booting_image(booting, "img-1") == booting  # the volume boots
    assert requests.booting_image([], "img-1") == []


def test_live_user_data_leaves_out_the_parts_stoker_adds():
    from stoker.resources.openstack.nova.server_live import _parts

    script = "#!/bin/sh\necho one\n"
    sent = requests.build_user_data(script, "HEAT_CFNTOOLS", {"deployments": []})
    assert _parts(sent, "HEAT_CFNTOOLS") == _parts(requests.build_user_data(script, "HEAT_CFNTOOLS", None), "HEAT_CFNTOOLS")
    assert _parts(sent, "HEAT_CFNTOOLS") != _parts(requests.build_user_data("#!/bin/sh\necho two\n", "HEAT_CFNTOOLS", None), "HEAT_CFNTOOLS")
    assert _parts(script, "RAW") == script
