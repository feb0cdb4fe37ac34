"""The add-on Neutron service plugins' types without a cloud: registered under Heat's (and
networking-bgpvpn's) names with their constraints, Heat's validation rules, the requests built
from properties, and what is updated in place (tests/cloud/test_neutron_chaining_types.py
drives the real plugins)."""

from __future__ import annotations

import pytest

from stoker.resources.openstack import constraint_mapping, resource_mapping
from stoker.resources.openstack.neutron.bgpvpn import BGPVPN, BGPVPNPortAssoc
from stoker.resources.openstack.neutron.flow_classifier import FlowClassifier
from stoker.resources.openstack.neutron.l2_gateway import L2Gateway
from stoker.resources.openstack.neutron.tap_flow import TapFlow
from stoker.resources.openstack.neutron.tap_service import TapService
from stoker.sdk import support
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.testing import PluginHarness

# The lookups ask the cloud (the cloud tests cover them): here a value only has to be a name.
NAMES = {
    name: (lambda value: isinstance(value, str) and bool(value))
    for name in ("neutron.port", "neutron.network", "neutron.taas.tap_service", "neutron.bgpvpn")
}


class Finders:
    """The finders the translation rules name (Heat's RESOLVE): each answers ``id-<value>``."""

    def find_resourceid_by_name_or_id(self, entity: str, value: str) -> str:
        return f"id-{value}"

    def resolve_ext_resource(self, entity: str, value: str) -> str:
        return f"id-{value}"


def harness(plugin, properties: dict, name: str = "thing") -> PluginHarness:
    return PluginHarness(
        plugin, properties, name=name, constraints=NAMES, clients={"neutron": Finders()}
    )


TYPES = {
    "OS::Neutron::PortPair": ("7.0.0", support.UNSUPPORTED),
    "OS::Neutron::PortPairGroup": ("8.0.0", support.UNSUPPORTED),
    "OS::Neutron::FlowClassifier": ("8.0.0", support.UNSUPPORTED),
    "OS::Neutron::PortChain": ("8.0.0", support.UNSUPPORTED),
    "OS::Neutron::TaaS::TapService": ("12.0.0", support.SUPPORTED),
    "OS::Neutron::TaaS::TapFlow": ("12.0.0", support.SUPPORTED),
    "OS::Neutron::L2Gateway": ("12.0.0", support.SUPPORTED),
    "OS::Neutron::L2GatewayConnection": ("12.0.0", support.SUPPORTED),
    "OS::Neutron::BGPVPN": (None, support.SUPPORTED),
    "OS::Neutron::BGPVPN-NET-ASSOCIATION": (None, support.SUPPORTED),
    "OS::Neutron::BGPVPN-ROUTER-ASSOCIATION": (None, support.SUPPORTED),
    "OS::Neutron::BGPVPN-PORT-ASSOCIATION": (None, support.SUPPORTED),
}


def test_neutron_chaining_types_and_constraints_are_registered_under_heat_names():
    mapping = resource_mapping()
    for type_name, (version, status) in TYPES.items():
        assert (
            mapping[type_name].support_status.version,
            mapping[type_name].support_status.status,
        ) == (
            version,
            status,
        ), type_name
    assert {
        "neutron.port_pair", "neutron.port_pair_group", "neutron.flow_classifier",
        "neutron.taas.tap_service", "neutron.taas.tap_flow", "neutron.bgpvpn",
    } <= set(constraint_mapping())  # fmt: skip


def test_neutron_chaining_updates_in_place_only_what_heat_does():
    updatable = {
        type_name: sorted(
            name for name, schema in mapping.properties_schema.items() if schema.update_allowed
        )
        for type_name, mapping in resource_mapping().items()
        if type_name in TYPES
    }
    assert updatable == {
        "OS::Neutron::PortPair": ["description", "name"],
        "OS::Neutron::PortPairGroup": ["description", "name", "port_pairs"],
        "OS::Neutron::FlowClassifier": ["description", "name"],
        "OS::Neutron::PortChain": ["description", "flow_classifiers", "name", "port_pair_groups"],
        "OS::Neutron::TaaS::TapService": ["description", "name"],
        "OS::Neutron::TaaS::TapFlow": ["description", "name"],
        "OS::Neutron::L2Gateway": ["devices", "name"],
        "OS::Neutron::L2GatewayConnection": [],
        "OS::Neutron::BGPVPN": [],
        "OS::Neutron::BGPVPN-NET-ASSOCIATION": [],
        "OS::Neutron::BGPVPN-ROUTER-ASSOCIATION": [],
        "OS::Neutron::BGPVPN-PORT-ASSOCIATION": [],
    }


@pytest.mark.parametrize(
    ("plugin", "properties", "path", "words"),
    [
        (FlowClassifier, {"protocol": "sctp"}, "protocol", '"sctp" is not an allowed value'),
        (FlowClassifier, {"source_port_range_min": 0}, "source_port_range_min", "0"),
        (FlowClassifier, {"source_ip_prefix": "10.0.0.300/8"}, "source_ip_prefix", "net_cidr"),
        (
            TapFlow,
            {"port": "p", "tap_service": "t", "vlan_filter": "1,x"},
            "vlan_filter",
            "1,x",
        ),
        (TapFlow, {"port": "p", "tap_service": "t", "direction": "UP"}, "direction", "UP"),
        (BGPVPN, {"type": "l4"}, "type", "l4"),
        (BGPVPN, {"local_pref": 2**32}, "local_pref", str(2**32)),
        (
            BGPVPNPortAssoc,
            {"bgpvpn_id": "v", "port_id": "p", "routes": [{"type": "static"}]},
            "routes",
            "static",
        ),
    ],
)
def test_neutron_chaining_refuses_bad_values_naming_the_property(plugin, properties, path, words):
    with pytest.raises(ValidationError) as raised:
        harness(plugin, properties).resource.validate()

    assert f"resources.thing.properties.{path}" in (raised.value.path or "")
    assert words in raised.value.message


def test_neutron_chaining_required_properties_are_named():
    with pytest.raises(ValidationError) as raised:
        harness(TapService, {}).resource.validate()

    assert raised.value.path == "resources.thing.properties.port"
    assert "required" in raised.value.message


def test_tap_requests_carry_neutrons_field_names():
    service = harness(TapService, {"port": "p"}).resource
    flow = harness(TapFlow, {"port": "p", "tap_service": "t", "vlan_filter": "5-9"}).resource

    # Heat sends TaaS's name and description as "" when the template gives none.
    assert service.request_body() == {"name": "", "description": "", "port_id": "id-p"}
    assert flow.request_body() == {
        "name": "",
        "description": "",
        "source_port": "id-p",
        "tap_service_id": "id-t",
        "direction": "BOTH",
        "vlan_filter": "5-9",
    }


def test_l2_gateway_request_drops_unset_values_at_every_level():
    gateway = harness(
        L2Gateway,
        {"name": "gw", "devices": [{"device_name": "s1", "interfaces": [{"name": "eth0"}]}]},
    ).resource

    assert gateway.request_body() == {
        "name": "gw",
        "devices": [{"device_name": "s1", "interfaces": [{"name": "eth0"}]}],
    }
