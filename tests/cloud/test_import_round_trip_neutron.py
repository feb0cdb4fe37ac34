"""Neutron's extension types taken over by ``stack import`` on the real test cloud, as
test_import_round_trip.py does for the core ones: a stack made by stoker is abandoned,
then a new stack imports every one of its objects by the id it had. The import creates
nothing, holds the same ids and no drift; an update with the same template touches none
of them; the delete removes them.

One stack each for the VPN family (with a floating IP, its port forwarding and a
segment), the service chain (SFC) with port mirroring (TaaS), and a trunk with the QoS
rules and a metering rule. The templates are the ones the families' own tests use."""

from __future__ import annotations

import secrets

from tests.cloud.fixture import admin_cloud  # noqa: F401 - the fixture
from tests.cloud.test_import_round_trip import round_trip
from tests.cloud.test_neutron_chaining_types import network_and_ports, sfc_template
from tests.cloud.test_neutron_vpn_types import ipsec_policy, vpn_template  # noqa: F401 - the fixture

# The types with no live object of their own to compare: a router interface (a port of
# the router), and Heat's Segment (its ``show`` has nothing that changes in place but the
# name, which it reads under another field).
NO_LIVE_OBJECT = frozenset({"interface"})


def test_vpn_floating_ip_port_forward_and_segment_are_imported(admin_cloud, make_service, ipsec_policy):  # noqa: F811 - the fixtures
    service = make_service(enable_stack_abandon=True)
    suffix = secrets.token_hex(3)
    round_trip(service, vpn_template(ipsec_policy=ipsec_policy), f"rt-vpn-{suffix}", not_checked=NO_LIVE_OBJECT)


def test_service_chain_and_port_mirroring_are_imported(admin_cloud, make_service):  # noqa: F811 - the fixture
    service = make_service(enable_stack_abandon=True)
    suffix = secrets.token_hex(3)
    data = sfc_template(suffix, f"pair-a-{suffix}", "tcp", second_pair=False)
    data["resources"].update({name: value for name, value in network_and_ports("probe", "mirrored").items() if name not in data["resources"]})
    data["resources"]["tap"] = {"type": "OS::Neutron::TaaS::TapService", "properties": {"name": f"tap-{suffix}", "port": {"get_resource": "probe"}}}
    data["resources"]["flow"] = {
        "type": "OS::Neutron::TaaS::TapFlow",
        "properties": {"port": {"get_resource": "mirrored"}, "tap_service": {"get_resource": "tap"}, "direction": "IN", "vlan_filter": "10,20-29"},
    }
    data.pop("outputs", None)
    round_trip(service, data, f"rt-sfc-{suffix}")


def test_trunk_qos_rules_and_metering_rule_are_imported(admin_cloud, make_service):  # noqa: F811 - the fixture
    service = make_service(enable_stack_abandon=True)
    suffix = secrets.token_hex(3)
    policy = {"get_resource": "policy"}
    resources = {
        **network_and_ports("parent", "child", cidr="192.168.78.0/24"),
        "trunk": {
            "type": "OS::Neutron::Trunk",
            "properties": {
                "name": f"rt-trunk-{suffix}",
                "port": {"get_resource": "parent"},
                "sub_ports": [{"port": {"get_resource": "child"}, "segmentation_type": "vlan", "segmentation_id": 101}],
            },
        },
        "policy": {"type": "OS::Neutron::QoSPolicy", "properties": {"description": "round trip"}},
        "dscp": {"type": "OS::Neutron::QoSDscpMarkingRule", "properties": {"policy": policy, "dscp_mark": 16}},
        "minimum": {"type": "OS::Neutron::QoSMinimumBandwidthRule", "properties": {"policy": policy, "min_kbps": 500}},
        "packets": {"type": "OS::Neutron::QoSMinimumPacketRateRule", "properties": {"policy": policy, "min_kpps": 100, "direction": "any"}},
        "label": {"type": "OS::Neutron::MeteringLabel", "properties": {"name": f"rt-label-{suffix}"}},
        "rule": {"type": "OS::Neutron::MeteringRule", "properties": {"metering_label_id": {"get_resource": "label"}, "remote_ip_prefix": "10.0.0.0/24"}},
    }
    round_trip(service, {"heat_template_version": "2021-04-16", "resources": resources}, f"rt-trunk-{suffix}")


def test_l2_gateway_and_bgpvpn_with_its_associations_are_imported(admin_cloud, make_service):  # noqa: F811 - the fixture
    service = make_service(enable_stack_abandon=True)
    suffix = secrets.token_hex(3)
    vpn = {"get_resource": "vpn"}
    resources = {
        **network_and_ports("port", cidr="192.168.95.0/24"),
        "gateway": {
            "type": "OS::Neutron::L2Gateway",
            "properties": {"name": f"rt-gw-{suffix}", "devices": [{"device_name": "switch1", "interfaces": [{"name": "eth0"}]}]},
        },
        "link": {
            "type": "OS::Neutron::L2GatewayConnection",
            "properties": {"l2_gateway_id": {"get_resource": "gateway"}, "network_id": {"get_resource": "net"}, "segmentation_id": "100"},
        },
        "router": {"type": "OS::Neutron::Router"},
        "vpn": {"type": "OS::Neutron::BGPVPN", "properties": {"name": f"rt-vpn-{suffix}", "route_targets": ["64512:7"]}},
        "net_association": {"type": "OS::Neutron::BGPVPN-NET-ASSOCIATION", "properties": {"bgpvpn_id": vpn, "network_id": {"get_resource": "net"}}},
        "router_association": {"type": "OS::Neutron::BGPVPN-ROUTER-ASSOCIATION", "properties": {"bgpvpn_id": vpn, "router_id": {"get_resource": "router"}}},
        "port_association": {
            "type": "OS::Neutron::BGPVPN-PORT-ASSOCIATION",
            "properties": {"bgpvpn_id": vpn, "port_id": {"get_resource": "port"}, "routes": [{"type": "prefix", "prefix": "10.77.0.0/16", "local_pref": 100}]},
        },
    }
    round_trip(service, {"heat_template_version": "2021-04-16", "resources": resources}, f"rt-l2-{suffix}")
