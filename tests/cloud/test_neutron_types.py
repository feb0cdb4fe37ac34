"""The Neutron resource types and the client plugin layer against the real Neutron and Nova
of the test cloud: a stack of every OS::Neutron type created, updated in place, partly
replaced, checked and deleted, with openstacksdk as the witness; the custom constraints'
answers and their cache; seed 004's rules on the real compute API."""

from __future__ import annotations

import contextlib
import secrets
import sqlite3

import pytest
import yaml

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.resources import builtin_mapping
from stoker.resources.openstack.nova.client_plugin import NovaClientPlugin
from stoker.sdk.clients import Version
from stoker.sdk.exceptions import MicroversionUnavailableError
from stoker.template.errors import TemplateErrors
from tests.support.stacks import from_data


@pytest.fixture
def admin_cloud(openstack_cloud):
    """stoker's cloud source set to the test cloud's admin (router:external needs admin)."""
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud
    set_cloud_source(None)


def neutron_stack(
    suffix: str, rule_port: int = 22, sg_rules: list | None = None, net_name: str | None = None
) -> dict:
    """No depends_on anywhere: the router waits for the public subnet, the port for the
    private subnet and the floating IP for the router and its interface through Heat's
    implicit dependencies (Neutron refuses them in any other order)."""
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "public": {
                "type": "OS::Neutron::Net",
                "properties": {
                    "name": f"public-{suffix}",
                    "value_specs": {"router:external": True},
                },
            },
            "public_subnet": {
                "type": "OS::Neutron::Subnet",
                "properties": {
                    "network": {"get_resource": "public"},
                    "cidr": "172.24.4.0/24",
                    "enable_dhcp": False,
                },
            },
            "private": {
                "type": "OS::Neutron::Net",
                "properties": {"name": net_name or f"private-{suffix}"},
            },
            "private_subnet": {
                "type": "OS::Neutron::Subnet",
                "properties": {
                    "network": {"get_resource": "private"},
                    "cidr": "10.20.0.0/24",
                    "dns_nameservers": ["10.20.0.2"],
                },
            },
            "router": {
                "type": "OS::Neutron::Router",
                "properties": {"external_gateway_info": {"network": {"get_resource": "public"}}},
            },
            # Heat's HIDDEN way to set a gateway, which old templates still use.
            "legacy_router": {"type": "OS::Neutron::Router"},
            "legacy_gateway": {
                "type": "OS::Neutron::RouterGateway",
                "properties": {"router_id": {"get_resource": "legacy_router"}, "network": {"get_resource": "public"}},
            },
            "router_interface": {
                "type": "OS::Neutron::RouterInterface",
                # Heat's old name for the subnet: translated to "subnet".
                "properties": {
                    "router": {"get_resource": "router"},
                    "subnet_id": {"get_resource": "private_subnet"},
                },
            },
            "web": {
                "type": "OS::Neutron::SecurityGroup",
                "properties": {
                    "name": f"web-{suffix}",
                    "rules": sg_rules
                    if sg_rules is not None
                    else [
                        {
                            "protocol": "tcp",
                            "port_range_min": 80,
                            "port_range_max": 80,
                            "remote_ip_prefix": "0.0.0.0/0",
                        }
                    ],
                },
            },
            "ssh": {
                "type": "OS::Neutron::SecurityGroupRule",
                "properties": {
                    "security_group": {"get_resource": "web"},
                    "port_range_min": rule_port,
                    "port_range_max": rule_port,
                    "remote_ip_prefix": "10.0.0.0/8",
                },
            },
            "port": {
                "type": "OS::Neutron::Port",
                "properties": {
                    "network": {"get_resource": "private"},
                    "fixed_ips": [{"subnet": {"get_resource": "private_subnet"}}],
                    "security_groups": [{"get_resource": "web"}],
                },
            },
            "floating_ip": {
                "type": "OS::Neutron::FloatingIP",
                "properties": {"floating_network": {"get_resource": "public"}},
            },
            "association": {
                "type": "OS::Neutron::FloatingIPAssociation",
                "properties": {
                    "floatingip_id": {"get_resource": "floating_ip"},
                    "port_id": {"get_resource": "port"},
                },
            },
        },
        "outputs": {
            "port_ip": {"value": {"get_attr": ["port", "fixed_ips", 0, "ip_address"]}},
            "floating_address": {"value": {"get_attr": ["floating_ip", "floating_ip_address"]}},
            "gateway": {"value": {"get_attr": ["router", "external_gateway_info", "network_id"]}},
            # Read through the port (done after the subnet): the network as Neutron shows it.
            "private_subnets": {"value": {"get_attr": ["port", "network", "subnets"]}},
            "private_status": {"value": {"get_attr": ["private", "status"]}},
        },
    }


def physical_ids(service, stack_name: str) -> dict[str, str]:
    return {
        record.name: record.physical_resource_id for record in service.list_resources(stack_name)
    }


def outputs(service, stack_name: str) -> dict:
    return {
        output["output_key"]: output.get("output_value") for output in service.outputs(stack_name)
    }


def test_neutron_types_create_update_check_delete(admin_cloud, make_service):
    """Every OS::Neutron type stoker has, through create, update in place, replacement,
    check and delete; openstacksdk sees each step and nothing is left at the end."""
    suffix = secrets.token_hex(3)
    template = neutron_stack(suffix)
    used_types = {resource["type"] for resource in template["resources"].values()}
    # These have tests of their own: ProviderNet (admins' networks) below; the scopes, pools,
    # RBAC and routes in test_neutron_routing_types.py; the service plugins' types in
    # test_neutron_service_types.py; LBaaS, placeholders that create nothing, in
    # tests/acceptance/test_cli_lenience.py.
    elsewhere = {
        "OS::Neutron::ProviderNet",
        *(f"OS::Neutron::{name}" for name in ("AddressScope", "SubnetPool", "RBACPolicy", "ExtraRoute")),
        *(f"OS::Neutron::{name}" for name in ("ExtraRouteSet", "Trunk", "MeteringLabel", "MeteringRule")),
        *(f"OS::Neutron::{name}" for name in ("Quota", "QoSPolicy", "QoSBandwidthLimitRule")),
        *(f"OS::Neutron::{name}" for name in ("QoSDscpMarkingRule", "QoSMinimumBandwidthRule")),
        "OS::Neutron::QoSMinimumPacketRateRule",
        # test_neutron_vpn_types.py: segments, port forwarding, VPNaaS, FWaaS v1, NSX gateways.
        *(f"OS::Neutron::{name}" for name in ("Segment", "FloatingIPPortForward", "VPNService", "IKEPolicy")),
        *(f"OS::Neutron::{name}" for name in ("IPsecPolicy", "IPsecSiteConnection", "NetworkGateway")),
        *(f"OS::Neutron::{name}" for name in ("Firewall", "FirewallPolicy", "FirewallRule")),
        *(f"OS::Neutron::{name}" for name in ("HealthMonitor", "Pool", "PoolMember", "LoadBalancer")),
        # The add-on service plugins' types: test_neutron_chaining_types.py.
        *(f"OS::Neutron::{name}" for name in ("PortPair", "PortPairGroup", "FlowClassifier", "PortChain")),
        *(f"OS::Neutron::{name}" for name in ("TaaS::TapService", "TaaS::TapFlow", "L2Gateway")),
        *(f"OS::Neutron::{name}" for name in ("L2GatewayConnection", "BGPVPN", "BGPVPN-NET-ASSOCIATION")),
        *(f"OS::Neutron::BGPVPN-{name}-ASSOCIATION" for name in ("ROUTER", "PORT")),
    }
    lbaas = {name for name in builtin_mapping() if name.startswith("OS::Neutron::LBaaS::")}
    assert used_types == {
        name for name in builtin_mapping() if name.startswith("OS::Neutron::")
    } - elsewhere - lbaas
    service = make_service()
    connection = admin_cloud.connect("admin")

    stack = service.create_stack(f"neutron-{suffix}", from_data(template))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack.name)
    network = connection.network.get_network(ids["private"])
    assert network.name == f"private-{suffix}"
    subnet = connection.network.get_subnet(ids["private_subnet"])
    assert (subnet.cidr, subnet.dns_nameservers, subnet.network_id) == (
        "10.20.0.0/24",
        ["10.20.0.2"],
        network.id,
    )
    router = connection.network.get_router(ids["router"])
    assert router.external_gateway_info["network_id"] == ids["public"]
    assert connection.network.get_router(ids["legacy_router"]).external_gateway_info["network_id"] == ids["public"]
    assert ids["router_interface"] == f"{router.id}:subnet_id={subnet.id}"
    assert any(
        port.device_id == router.id for port in connection.network.ports(network_id=network.id)
    )
    port = connection.network.get_port(ids["port"])
    assert port.security_group_ids == [ids["web"]]
    floating_ip = connection.network.get_ip(ids["floating_ip"])
    assert floating_ip.port_id == port.id
    values = outputs(service, stack.name)
    assert values["port_ip"] == port.fixed_ips[0]["ip_address"]
    assert values["floating_address"] == floating_ip.floating_ip_address
    assert values["gateway"] == ids["public"]
    assert values["private_subnets"] == [subnet.id]
    assert values["private_status"] == "ACTIVE"
    rules = connection.network.get_security_group(ids["web"]).security_group_rules
    assert {
        (rule["direction"], rule["port_range_min"])
        for rule in rules
        if rule["direction"] == "ingress"
    } == {
        ("ingress", 80),
        ("ingress", 22),
    }

    # Check reads the live objects: fine now; after the update, a rule deleted behind the
    # stack's back fails it.
    assert service.stack_action(stack.name, "CHECK").state == "CHECK_COMPLETE"

    # In place: the network's name and the group's rules; the rule resource replaced
    # (Heat allows no update of a SecurityGroupRule).
    new_rules = [
        {
            "protocol": "tcp",
            "port_range_min": 443,
            "port_range_max": 443,
            "remote_ip_prefix": "0.0.0.0/0",
        }
    ]
    updated = neutron_stack(
        suffix, rule_port=2222, sg_rules=new_rules, net_name=f"renamed-{suffix}"
    )
    stack = service.update_stack(stack.name, from_data(updated))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = physical_ids(service, stack.name)
    assert {name: after[name] for name in after if name != "ssh"} == {
        name: ids[name] for name in ids if name != "ssh"
    }
    assert after["ssh"] != ids["ssh"]
    assert connection.network.find_security_group_rule(ids["ssh"]) is None
    assert connection.network.get_network(ids["private"]).name == f"renamed-{suffix}"
    ingress = {
        rule["port_range_min"]
        for rule in connection.network.get_security_group(ids["web"]).security_group_rules
        if rule["direction"] == "ingress"
    }
    assert ingress == {443, 2222}

    connection.network.delete_security_group_rule(after["ssh"])
    checked = service.stack_action(stack.name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert "ssh" in checked.status_reason

    deleted = service.delete_stack(stack.name)

    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    for name, find in (
        ("public", connection.network.find_network),
        ("private", connection.network.find_network),
        ("private_subnet", connection.network.find_subnet),
        ("public_subnet", connection.network.find_subnet),
        ("router", connection.network.find_router),
        ("legacy_router", connection.network.find_router),
        ("port", connection.network.find_port),
        ("web", connection.network.find_security_group),
        ("floating_ip", connection.network.find_ip),
    ):
        assert find(after[name]) is None, f"{name} ({after[name]}) is left in the cloud"
    assert list(connection.network.ports(network_id=ids["private"])) == []


def test_neutron_delete_tolerates_objects_already_gone(admin_cloud, make_service):
    suffix = secrets.token_hex(3)
    service = make_service()
    connection = admin_cloud.connect("admin")
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": f"gone-{suffix}"}}
        },
    }
    stack = service.create_stack(f"gone-{suffix}", from_data(template))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    connection.network.delete_network(physical_ids(service, stack.name)["net"])

    assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"


def _validate(service, template: dict) -> str:
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(f"invalid-{secrets.token_hex(3)}", from_data(template))
    return str(raised.value)


def test_neutron_constraint_names_missing_and_ambiguous_networks(admin_cloud, make_service):
    suffix = secrets.token_hex(3)
    service = make_service()
    connection = admin_cloud.connect("admin")

    def port_on(network: str) -> dict:
        return {
            "heat_template_version": "2021-04-16",
            "resources": {
                "port": {"type": "OS::Neutron::Port", "properties": {"network": network}}
            },
        }

    missing = _validate(service, port_on(f"nowhere-{suffix}"))
    assert f"The network (nowhere-{suffix}) could not be found." in missing
    assert "resources.port.properties.network" in missing

    twins = [connection.network.create_network(name=f"twin-{suffix}") for _ in range(2)]
    try:
        ambiguous = _validate(service, port_on(f"twin-{suffix}"))
    finally:
        for network in twins:
            connection.network.delete_network(network)
    assert f"Multiple physical resources were found with name (twin-{suffix})." in ambiguous
    assert "give the network's id instead" in ambiguous


def _neutron_requests(cloud) -> int:
    return sum(
        1
        for line in cloud.access_logs["neutron"].read_text(errors="replace").splitlines()
        if " /v2.0/" in line
    )


def test_neutron_constraint_asks_the_cloud_once_per_value(admin_cloud, make_service):
    """60 ports naming one network by name validate (as create and preview validate) with
    one lookup of that name, not 60."""
    suffix = secrets.token_hex(3)
    service = make_service()
    connection = admin_cloud.connect("admin")
    network = connection.network.create_network(name=f"shared-{suffix}")
    try:
        template = {
            "heat_template_version": "2021-04-16",
            "resources": {
                f"port{index}": {
                    "type": "OS::Neutron::Port",
                    "properties": {"network": f"shared-{suffix}"},
                }
                for index in range(60)
            },
        }
        before = _neutron_requests(admin_cloud)
        # A preview validates as create does (template-validate checks no constraint).
        service.preview_stack(f"ports-{suffix}", from_data(template))
        asked = _neutron_requests(admin_cloud) - before
    finally:
        connection.network.delete_network(network)
    # openstacksdk's find: GET by id (404), then GET ?name=; a token check may add one.
    assert 1 <= asked <= 4, f"{asked} Neutron requests to validate 60 uses of one network"


def test_nova_feature_newer_than_the_cloud_fails_with_the_seed_message(admin_cloud):
    class Context:
        pass

    plugin = NovaClientPlugin(Context())
    maximum = plugin.negotiated_version()
    assert maximum is not None and maximum.startswith("2.")

    with pytest.raises(MicroversionUnavailableError) as raised:
        plugin.require_version("2.999", "a feature from the future")

    assert raised.value.message == (
        f"This cloud supports a maximum microversion of {maximum} for service compute and this "
        "feature only exists on clouds with microversion 2.999. Please contact your cloud provider "
        "for information about when this feature might be available"
    )
    plugin.require_version("2.37", "networks: auto")  # the real Nova offers it: no error
    # A plugin asking its client for a microversion gets the same answer, not a downgrade.
    with pytest.raises(MicroversionUnavailableError):
        plugin.client("2.999")
    assert plugin.client("2.37") is plugin.client()


def _compute_version(response) -> str:
    return response.headers["OpenStack-API-Version"]


def test_nova_rest_path_takes_an_explicit_or_default_microversion(openstack_cloud, tmp_path):
    class Context:
        pass

    configuration = yaml.safe_load(openstack_cloud.clouds_yaml.read_text())
    configuration["clouds"][openstack_cloud.cloud("admin")]["compute_default_microversion"] = "2.53"
    clouds_yaml = tmp_path / "clouds.yaml"
    clouds_yaml.write_text(yaml.safe_dump(configuration))
    set_cloud_source(
        EnvironmentCloudSource(
            {"OS_CLIENT_CONFIG_FILE": str(clouds_yaml), "OS_CLOUD": openstack_cloud.cloud("admin")}
        )
    )
    try:
        from_clouds_yaml = NovaClientPlugin(Context(), environ={})
        assert _compute_version(from_clouds_yaml.rest("GET", "/servers")) == "compute 2.53"
        assert (
            _compute_version(from_clouds_yaml.rest("GET", "/servers", microversion="2.10"))
            == "compute 2.10"
        )
        from_environment = NovaClientPlugin(
            Context(), environ={"OS_COMPUTE_DEFAULT_MICROVERSION": "2.60"}
        )
        assert _compute_version(from_environment.rest("GET", "/servers")) == "compute 2.60"
        # The proxy's own calls negotiate (the newest the cloud offers), whatever the
        # default for the REST layer says (seed 004).
        # openstacksdk uses the newest it knows for the call, within the cloud's range.
        flavor = next(iter(from_clouds_yaml.client().flavors()))
        assert Version.parse("2.53") < Version.parse(flavor.microversion) <= Version.parse(from_clouds_yaml.negotiated_version())
    finally:
        set_cloud_source(None)


def test_provider_net_creates_updates_and_refuses_what_its_type_forbids(admin_cloud, make_service):
    suffix = secrets.token_hex(3)
    service = make_service()
    connection = admin_cloud.connect("admin")
    segment = 500 + secrets.randbelow(500)

    def provider(router_external: bool, **extra) -> dict:
        return {
            "heat_template_version": "2021-04-16",
            "resources": {
                "provider": {
                    "type": "OS::Neutron::ProviderNet",
                    "properties": {
                        "name": f"provider-{suffix}",
                        "network_type": "vxlan",
                        "segmentation_id": str(segment),
                        "router_external": router_external,
                        **extra,
                    },
                }
            },
        }

    flat = provider(False)
    flat["resources"]["provider"]["properties"]["network_type"] = "flat"
    assert "segmentation_id not allowed for network types: local, flat" in _validate(service, flat)
    assert "physical_network not allowed" in _validate(service, provider(False, physical_network="public"))

    stack = service.create_stack(f"provider-{suffix}", from_data(provider(True)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    network = connection.network.get_network(physical_ids(service, stack.name)["provider"])
    assert (network.provider_network_type, network.provider_segmentation_id) == ("vxlan", segment)
    assert network.is_router_external and network.is_shared
    updated = service.update_stack(stack.name, from_data(provider(False)))
    assert updated.state == "UPDATE_COMPLETE", updated.status_reason
    assert connection.network.get_network(network.id).is_router_external is False
    assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"
    assert connection.network.find_network(network.id) is None


def test_neutron_objects_without_names_made_by_a_killed_create_are_found(admin_cloud, make_service, tmp_path):
    """An engine killed after Neutron made a floating IP, a router interface and the floating
    IP's association, before their ids were recorded (none has a name): the engine that
    finishes the create finds all three (the floating IP by the description it was made
    with, the interface on the router, the association on the floating IP's port), so the
    delete undoes them and the public subnet they hold up goes too (before, the association
    was left and the interface's delete raced the floating IP's: 409 in CI of stop 38)."""
    suffix = secrets.token_hex(3)
    url = f"sqlite:///{tmp_path / 'killed.sqlite'}"
    service = make_service(url)
    stack = service.create_stack(f"killed-{suffix}", from_data(neutron_stack(suffix)))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    made = physical_ids(service, stack.name)
    service.close()
    # What a SIGKILL right after the two POSTs leaves in the store.
    with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as store, store:
        store.execute("UPDATE stacks SET action = 'CREATE', status = 'IN_PROGRESS' WHERE name = ?", (stack.name,))
        store.execute(
            "UPDATE resources SET action = 'CREATE', status = 'IN_PROGRESS', physical_resource_id = NULL, handler_token = NULL"
            " WHERE name IN ('floating_ip', 'router_interface', 'association')"
        )

    restarted = make_service(url)
    restarted.recover()
    found = {record.name: record for record in restarted.list_resources(stack.name)}
    for name in ("floating_ip", "router_interface"):
        assert found[name].physical_resource_id == made[name], found[name].status_reason
        assert "found by its name belongs to the stack" in found[name].status_reason
    # The association has no object of its own: the floating IP left on the port is it.
    assert found["association"].physical_resource_id == made["association"], (found["association"].action, found["association"].status, found["association"].status_reason)

    deleted = restarted.delete_stack(stack.name)
    failed = {record.name: record.status_reason for record in restarted.store.list_resources(stack.id) if record.status == "FAILED"}
    assert deleted.state == "DELETE_COMPLETE", (deleted.status_reason, failed)
    network = admin_cloud.connect("admin").network
    assert network.find_network(made["public"]) is None
    assert network.find_router(made["router"]) is None
