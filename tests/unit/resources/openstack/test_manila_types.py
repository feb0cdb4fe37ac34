"""OS::Manila::Share, ShareNetwork, ShareType and SecurityService without a cloud: their
registration under Heat's names, Heat's validation rules that need no lookup, the requests
built from properties, and the client plugin's finder rule (no client is called here;
tests/cloud/test_manila_types.py drives the real Manila)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from stoker.resources.openstack import client_mapping, constraint_mapping, resource_mapping
from stoker.resources.openstack.manila.client_plugin import ManilaClientPlugin
from stoker.resources.openstack.manila.security_service import SecurityService
from stoker.resources.openstack.manila.share import ManilaShare
from stoker.resources.openstack.manila.share_network import ManilaShareNetwork
from stoker.resources.openstack.manila.share_type import ManilaShareType
from stoker.sdk.exceptions import ClientPluginError, EntityNotFound, ValidationError
from stoker.sdk.testing import PluginHarness

# The lookups ask the cloud; the cloud tests cover them. Here a value only has to be a name.
NAMES = {
    name: lambda value: isinstance(value, str) and bool(value)
    for name in (
        "manila.share_network",
        "manila.share_type",
        "manila.share_snapshot",
        "neutron.network",
        "neutron.subnet",
    )
}


class Finders:
    """The finder the translation rules name (Heat's RESOLVE): it answers ``id-<value>``."""

    def find_resourceid_by_name_or_id(self, entity: str, value: str) -> str:
        return f"id-{value}"


def test_manila_types_constraints_and_client_are_registered_under_heat_names():
    mapping = resource_mapping()
    assert mapping["OS::Manila::Share"] is ManilaShare
    assert mapping["OS::Manila::ShareNetwork"] is ManilaShareNetwork
    assert mapping["OS::Manila::ShareType"] is ManilaShareType
    assert mapping["OS::Manila::SecurityService"] is SecurityService
    assert {"manila.share_network", "manila.share_type", "manila.share_snapshot"} <= set(
        constraint_mapping()
    )
    assert client_mapping()["manila"] is ManilaClientPlugin
    assert ManilaClientPlugin.service_type == "sharev2"


def test_manila_share_network_refuses_nova_network_and_a_network_without_its_subnet():
    with pytest.raises(ValidationError) as raised:
        PluginHarness(
            ManilaShareNetwork, {"nova_network": "n"}, name="sn", constraints=NAMES
        ).resource.validate()
    assert raised.value.message == "Nova network is no longer supported"
    assert raised.value.path == "resources.sn.properties.nova_network"

    with pytest.raises(ValidationError) as raised:
        PluginHarness(
            ManilaShareNetwork,
            {"neutron_network": "net"},
            name="sn",
            constraints=NAMES,
            clients={"neutron": Finders()},
        ).resource.validate()
    assert raised.value.message == "neutron_network specified without neutron_subnet."
    assert raised.value.path == "resources.sn.properties.neutron_network"


def test_manila_share_access_rule_type_and_level_are_heats_allowed_values():
    with pytest.raises(ValidationError) as raised:
        PluginHarness(
            ManilaShare,
            {
                "share_protocol": "NFS",
                "size": 1,
                "access_rules": [{"access_to": "x", "access_type": "ip", "access_level": "rx"}],
            },
            name="share",
            constraints=NAMES,
        ).resource.validate()
    assert "rx" in str(raised.value) and "access_level" in (raised.value.path or "")


def test_manila_share_rules_without_a_level_compare_as_manilas_rw():
    key = ManilaShare._rule_key
    assert key({"access_to": "192.0.2.1", "access_type": "ip"}) == ("192.0.2.1", "ip", "rw")
    assert key({"access_to": "192.0.2.1", "access_type": "ip", "access_level": "ro"}) == (
        "192.0.2.1",
        "ip",
        "ro",
    )


def test_manila_unnamed_share_and_security_service_get_the_physical_name():
    share = PluginHarness(
        ManilaShare,
        {"share_protocol": "NFS", "size": 1},
        name="data",
        stack_name="web",
        constraints=NAMES,
    ).resource
    assert share.share_name().startswith("web-data-")
    named = PluginHarness(
        ManilaShare, {"share_protocol": "NFS", "size": 1, "name": "mine"}, constraints=NAMES
    ).resource
    assert named.share_name() == "mine"
    network = PluginHarness(
        ManilaShareNetwork, {}, name="sn", stack_name="web", constraints=NAMES
    ).resource
    assert network.network_name().startswith("web-sn-")


def test_manila_share_type_sends_its_required_extra_specs_as_strings():
    share_type = PluginHarness(
        ManilaShareType,
        {"name": "gold", "driver_handles_share_servers": False, "extra_specs": {"tier": 1}},
    ).resource
    assert share_type.extra_specs() == {
        "tier": "1",
        "driver_handles_share_servers": "False",
        "snapshot_support": "True",
    }


def test_manila_finder_takes_an_id_then_the_one_object_of_that_name():
    one = SimpleNamespace(id="1", name="gold")
    two = SimpleNamespace(id="2", name="gold")
    three = SimpleNamespace(id="3", name="1")
    match = ManilaClientPlugin._match
    assert match("share type", "1", [three, one]) is one
    assert match("share type", "gold", [one, three]) is one
    with pytest.raises(ClientPluginError) as raised:
        match("share type", "gold", [one, two])
    assert raised.value.message == (
        "Ambiguous share type name 'gold'. Found more than one share type for this name in Manila."
    )
    with pytest.raises(EntityNotFound) as missing:
        match("share network", "nowhere", [one])
    assert missing.value.message == "The share network (nowhere) could not be found."
