"""Every importable Nova, Neutron, Cinder and Glance type taken over by ``stack import`` on the
real test cloud: a stack made by stoker is abandoned (its objects stay, the stack is
forgotten), then a new stack imports every one of them by the id the first one had. The
import creates nothing (no resource is created, the services' object counts do not
move), holds the same ids and no drift; an update with the same template touches none of
them; the delete removes them all.

The objects are made by stoker here so that one template covers every type with the
properties real templates give them (test_import_cloud.py imports objects made with
openstacksdk); what is checked is the taking over, which does not care who made them."""

from __future__ import annotations

import secrets

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from tests.cloud.fixture import admin_cloud  # noqa: F401 - the fixture
from tests.support.stacks import from_data


def public_key() -> str:
    key = ed25519.Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()


def template(suffix: str, key: str) -> dict:
    """One resource of each importable type of the three services (admin-only ones too)."""
    name = f"rt-{suffix}"
    resources = {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"{name}-net"}},
        "subnet": {
            "type": "OS::Neutron::Subnet",
            "properties": {"network": {"get_resource": "net"}, "cidr": "10.47.0.0/24", "name": f"{name}-subnet"},
        },
        "router": {"type": "OS::Neutron::Router", "properties": {"name": f"{name}-router"}},
        "interface": {
            "type": "OS::Neutron::RouterInterface",
            "properties": {"router": {"get_resource": "router"}, "subnet": {"get_resource": "subnet"}},
        },
        "sg": {"type": "OS::Neutron::SecurityGroup", "properties": {"name": f"{name}-sg", "description": "round trip"}},
        "rule": {
            "type": "OS::Neutron::SecurityGroupRule",
            "properties": {"security_group": {"get_resource": "sg"}, "protocol": "tcp", "port_range_min": 22, "port_range_max": 22},
        },
        "port": {
            "type": "OS::Neutron::Port",
            "properties": {"network": {"get_resource": "net"}, "name": f"{name}-port", "security_groups": [{"get_resource": "sg"}]},
            "depends_on": ["subnet"],
        },
        "scope": {"type": "OS::Neutron::AddressScope", "properties": {"name": f"{name}-scope", "ip_version": 4}},
        "pool": {
            "type": "OS::Neutron::SubnetPool",
            "properties": {"name": f"{name}-pool", "prefixes": ["10.48.0.0/16"], "address_scope": {"get_resource": "scope"}},
        },
        "qos": {"type": "OS::Neutron::QoSPolicy", "properties": {"name": f"{name}-qos"}},
        "limit": {"type": "OS::Neutron::QoSBandwidthLimitRule", "properties": {"policy": {"get_resource": "qos"}, "max_kbps": 1000}},
        "label": {"type": "OS::Neutron::MeteringLabel", "properties": {"name": f"{name}-label"}},
        "keypair": {"type": "OS::Nova::KeyPair", "properties": {"name": f"{name}-key", "public_key": key}},
        "group": {"type": "OS::Nova::ServerGroup", "properties": {"name": f"{name}-group", "policies": ["anti-affinity"]}},
        "flavor": {"type": "OS::Nova::Flavor", "properties": {"name": f"{name}-flavor", "ram": 64, "vcpus": 1, "disk": 0}},
        "vtype": {"type": "OS::Cinder::VolumeType", "properties": {"name": f"{name}-vtype"}},
        "volume": {"type": "OS::Cinder::Volume", "properties": {"size": 1, "name": f"{name}-volume"}},
        # A copy of the cloud's image (no URL: stoker refuses them unless the operator allows).
        "image": {"type": "OS::Glance::Image", "properties": {"name": f"{name}-image", "disk_format": "raw", "container_format": "bare", "source_image": "stoker-tiny", "tags": ["rt"]}},
        "web": {
            "type": "OS::Nova::Server",
            "properties": {
                "name": f"{name}-web",
                "flavor": "m1.tiny",
                "image": "stoker-tiny",
                "key_name": {"get_resource": "keypair"},
                "metadata": {"role": "web"},
                "networks": [{"port": {"get_resource": "port"}}],
            },
        },
    }
    return {"heat_template_version": "2021-04-16", "resources": resources}


def counts(connection) -> dict[str, int]:
    network, compute, volumes = connection.network, connection.compute, connection.block_storage
    return {
        "networks": len(list(network.networks())),
        "subnets": len(list(network.subnets())),
        "routers": len(list(network.routers())),
        "ports": len(list(network.ports())),
        "security_groups": len(list(network.security_groups())),
        "rules": len(list(network.security_group_rules())),
        "scopes": len(list(network.address_scopes())),
        "pools": len(list(network.subnet_pools())),
        "qos": len(list(network.qos_policies())),
        "labels": len(list(network.metering_labels())),
        "keypairs": len(list(compute.keypairs())),
        "groups": len(list(compute.server_groups(all_projects=True))),
        "flavors": len(list(compute.flavors(is_public=None))),
        "volume_types": len(list(volumes.types())),
        "volumes": len(list(volumes.volumes(all_projects=True))),
        "servers": len(list(compute.servers(all_projects=True))),
        "images": len(list(connection.image.images())),
    }


def resource_events(service, stack_name: str) -> list[tuple[str, str]]:
    return [
        (event.resource_name, f"{event.resource_action}_{event.resource_status}")
        for event in service.list_events(stack_name)
        if event.resource_name != stack_name
    ]


def round_trip(
    service, data: dict, stack_name: str, count=None, parameters: dict | None = None, not_checked: frozenset[str] = frozenset()
) -> None:
    """Make ``data`` as a stack, abandon it, import every object into a new stack by its
    id and check the import, an update that changes nothing, and the delete. ``count``:
    the services' object counts, which the import and the update must not move and the
    delete must bring down for every kind. ``not_checked``: the resources whose drift
    cannot be told (every other one is IN_SYNC)."""
    made, taken = f"{stack_name}-made", f"{stack_name}-taken"
    project = service.settings.project
    abandoned: dict[str, str] = {}
    try:
        created = service.create_stack(made, from_data(data), parameters=parameters, project_id=project)
        assert created.state == "CREATE_COMPLETE", created.status_reason
        ids = {record.name: record.physical_resource_id for record in service.list_resources(made)}
        assert sorted(ids) == sorted(data.get("resources") or data["Resources"]) and all(ids.values()), ids
        service.abandon_stack(made)  # forgotten; every object stays
        abandoned = ids
        before = count() if count else None

        stack = service.import_stack(taken, from_data(data), ids, parameters=parameters, project_id=project)
        abandoned = {}  # taken over: the stack holds them now

        assert stack.state == "ADOPT_COMPLETE", stack.status_reason
        assert {record.name: record.physical_resource_id for record in service.list_resources(taken)} == ids
        states = {record.name: record.state for record in service.list_resources(taken)}
        assert set(states.values()) == {"ADOPT_COMPLETE"}, states
        assert not [event for event in resource_events(service, taken) if event[1].startswith("CREATE")]
        if count:
            assert count() == before  # nothing was made
        drift = service.detect_drift(taken)
        assert {r["path"]: r["status"] for r in drift.resources} == {
            name: "NOT_CHECKED" if name in not_checked else "IN_SYNC" for name in ids
        }, drift.resources

        seen = len(resource_events(service, taken))
        updated = service.update_stack(taken, from_data(data), parameters=parameters)
        assert updated.state == "UPDATE_COMPLETE", updated.status_reason
        assert resource_events(service, taken)[seen:] == []  # the update touched none of them
        if count:
            assert count() == before

        deleted = service.delete_stack(taken)
        assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
        if count:
            after = count()
            gone = {kind: before[kind] - after[kind] for kind in before}
            assert {kind: number for kind, number in gone.items() if number <= 0} == {}, gone
    finally:
        if abandoned and service.store.find_stack(taken, project) is None:
            # The import was refused: its objects are taken over as they are, to be deleted.
            service.import_stack(taken, from_data(data), abandoned, parameters=parameters, accept_differences=True, project_id=project)
        for name in (taken, made):
            if service.store.find_stack(name, project) is not None:
                service.delete_stack(name)


def test_every_nova_neutron_and_cinder_type_is_imported_by_the_id_it_had(admin_cloud, make_service):  # noqa: F811 - the fixture
    service = make_service(enable_stack_abandon=True)
    connection = admin_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    round_trip(service, template(suffix, public_key()), f"rt-{suffix}", lambda: counts(connection), not_checked=frozenset({"interface"}))


def keystone_template(suffix: str) -> dict:
    resources = {
        "domain": {"type": "OS::Keystone::Domain", "properties": {"name": f"rt-dom-{suffix}", "description": "round trip"}},
        "project": {"type": "OS::Keystone::Project", "properties": {"name": f"rt-project-{suffix}", "domain": {"get_resource": "domain"}, "tags": ["a"]}},
        "role": {"type": "OS::Keystone::Role", "properties": {"name": f"rt-role-{suffix}"}},
        "group": {"type": "OS::Keystone::Group", "properties": {"name": f"rt-group-{suffix}", "description": "round trip"}},
        "user": {
            "type": "OS::Keystone::User",
            "properties": {"name": f"rt-user-{suffix}", "password": {"get_param": "password"}, "default_project": {"get_resource": "project"}, "groups": [{"get_resource": "group"}]},
        },
        "parent": {"type": "OS::Keystone::Region", "properties": {"id": f"rt-parent-{suffix}", "description": "top"}},
        "region": {"type": "OS::Keystone::Region", "properties": {"id": f"rt-region-{suffix}", "parent_region": {"get_resource": "parent"}}},
        "service": {"type": "OS::Keystone::Service", "properties": {"type": f"rt-kind-{suffix}", "name": f"rt-service-{suffix}"}},
        "endpoint": {
            "type": "OS::Keystone::Endpoint",
            "properties": {"service": {"get_resource": "service"}, "region": {"get_resource": "region"}, "interface": "public", "url": "http://127.0.0.1:1/rt"},
        },
    }
    return {
        "heat_template_version": "2021-04-16",
        "parameters": {"password": {"type": "string", "hidden": True}},
        "resources": resources,
    }


def test_every_keystone_type_is_imported_by_the_id_it_had(admin_cloud, make_service):  # noqa: F811 - the fixture
    service = make_service(enable_stack_abandon=True)
    identity = admin_cloud.connect("admin").identity

    def count() -> dict[str, int]:
        return {
            "domains": len(list(identity.domains())),
            "projects": len(list(identity.projects())),
            "roles": len(list(identity.roles())),
            "groups": len(list(identity.groups())),
            "users": len(list(identity.users())),
            "regions": len(list(identity.regions())),
            "services": len(list(identity.services())),
            "endpoints": len(list(identity.endpoints())),
        }

    suffix = secrets.token_hex(3)
    round_trip(service, keystone_template(suffix), f"rt-ks-{suffix}", count, {"password": "Rt-secret-1"})


def test_admin_and_association_types_are_imported_by_the_id_they_had(admin_cloud, make_service):  # noqa: F811 - the fixture
    """Neutron's provider network, RBAC policy, extra routes (a set and a single one), router gateway and floating IP
    association; Cinder's encrypted volume type and QoS specs; Nova's host aggregate;
    Keystone's role assignments; and the CloudFormation volume and instance."""
    service = make_service(enable_stack_abandon=True)
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    host = next(iter(connection.compute.services(binary="nova-compute"))).host
    keystone = connection.identity
    role = keystone.create_role(name=f"rt-role-{suffix}")
    user = keystone.create_user(name=f"rt-user-{suffix}", domain_id="default")
    group = keystone.create_group(name=f"rt-group-{suffix}", domain_id="default")
    project = keystone.create_project(name=f"rt-project-{suffix}", domain_id="default")
    roles = [{"role": role.id, "project": project.id}]
    resources = {
        "public": {"type": "OS::Neutron::ProviderNet", "properties": {"name": f"rt-public-{suffix}", "network_type": "vxlan", "router_external": True}},
        "public_subnet": {"type": "OS::Neutron::Subnet", "properties": {"network": {"get_resource": "public"}, "cidr": "172.27.0.0/24", "enable_dhcp": False}},
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"rt-private-{suffix}"}},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {"network": {"get_resource": "net"}, "cidr": "10.52.0.0/24"}},
        "router": {"type": "OS::Neutron::Router", "properties": {"name": f"rt-router-{suffix}"}},
        "gateway": {"type": "OS::Neutron::RouterGateway", "properties": {"router_id": {"get_resource": "router"}, "network": {"get_resource": "public"}}, "depends_on": ["public_subnet"]},
        "interface": {"type": "OS::Neutron::RouterInterface", "properties": {"router": {"get_resource": "router"}, "subnet": {"get_resource": "subnet"}}},
        "routes": {
            "type": "OS::Neutron::ExtraRouteSet",
            "properties": {"router": {"get_resource": "router"}, "routes": [{"destination": "10.201.0.0/24", "nexthop": "10.52.0.50"}]},
            "depends_on": ["interface"],
        },
        # Heat's older, single route (UNSUPPORTED there), beside the set on the same router.
        "route": {
            "type": "OS::Neutron::ExtraRoute",
            "properties": {"router_id": {"get_resource": "router"}, "destination": "10.202.0.0/24", "nexthop": "10.52.0.51"},
            "depends_on": ["routes"],
        },
        "share": {"type": "OS::Neutron::RBACPolicy", "properties": {"object_type": "network", "action": "access_as_shared", "object_id": {"get_resource": "net"}, "target_tenant": project.id}},
        "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "net"}}, "depends_on": ["subnet"]},
        "floating_ip": {"type": "OS::Neutron::FloatingIP", "properties": {"floating_network": {"get_resource": "public"}}, "depends_on": ["gateway", "interface"]},
        "association": {"type": "OS::Neutron::FloatingIPAssociation", "properties": {"floatingip_id": {"get_resource": "floating_ip"}, "port_id": {"get_resource": "port"}}},
        "vtype": {"type": "OS::Cinder::VolumeType", "properties": {"name": f"rt-enc-{suffix}"}},
        "encryption": {"type": "OS::Cinder::EncryptedVolumeType", "properties": {"volume_type": {"get_resource": "vtype"}, "provider": "luks", "cipher": "aes-xts-plain64", "key_size": 256}},
        "qos": {"type": "OS::Cinder::QoSSpecs", "properties": {"specs": {"read_iops_sec": "100"}}},
        "aggregate": {"type": "OS::Nova::HostAggregate", "properties": {"name": f"rt-agg-{suffix}", "availability_zone": f"rt-zone-{suffix}", "hosts": [host], "metadata": {"ssd": "true"}}},
        "for_user": {"type": "OS::Keystone::UserRoleAssignment", "properties": {"user": user.id, "roles": roles}},
        "for_group": {"type": "OS::Keystone::GroupRoleAssignment", "properties": {"group": group.id, "roles": roles}},
    }
    data = {"heat_template_version": "2021-04-16", "resources": resources}
    data_cfn = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {
            "disk": {"Type": "AWS::EC2::Volume", "Properties": {"AvailabilityZone": "nova", "Size": 1, "Tags": [{"Key": "role", "Value": "data"}]}},
            "net": {"Type": "OS::Neutron::Net", "Properties": {"name": f"rt-cfn-{suffix}"}},
            "subnet": {"Type": "OS::Neutron::Subnet", "Properties": {"network": {"Ref": "net"}, "cidr": "10.53.0.0/24"}},
            # Its port a resource of its own: one the instance made for a SubnetId is not
            # known to the stack that imports it (docs/import.md), and would stay.
            "port": {"Type": "OS::Neutron::Port", "Properties": {"network": {"Ref": "net"}}, "DependsOn": "subnet"},
            "web": {
                "Type": "AWS::EC2::Instance",
                "Properties": {
                    "ImageId": "stoker-tiny", "InstanceType": "m1.tiny", "Tags": [{"Key": "role", "Value": "web"}],
                    "NetworkInterfaces": [{"NetworkInterfaceId": {"Ref": "port"}, "DeviceIndex": "0"}],
                },
            },
        },
    }
    try:
        # Attachments with no object of their own to compare (as a router interface).
        attachments = frozenset({"interface", "gateway", "association", "for_user", "for_group"})
        round_trip(service, data, f"rt-admin-{suffix}", not_checked=attachments)
        round_trip(service, data_cfn, f"rt-cfn-{suffix}")
    finally:
        for made in (user, group, role, project):
            getattr(keystone, f"delete_{type(made).__name__.lower()}")(made, ignore_missing=True)


def test_quotas_are_imported_by_the_project_they_limit(admin_cloud, make_service):  # noqa: F811 - the fixture
    """Nova's, Cinder's and Neutron's quotas of a project, taken over by the project's id:
    no drift, an update changes nothing, the delete gives the project its defaults back."""
    service = make_service(enable_stack_abandon=True)
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    project = connection.identity.create_project(name=f"rt-quota-{suffix}", domain_id="default")

    def limits() -> tuple:
        nova = connection.compute.get_quota_set(project.id)
        cinder = connection.block_storage.get_quota_set(project.id)
        neutron = connection.network.get_quota(project.id)
        return (nova.cores, nova.key_pairs), (cinder.volumes, cinder.gigabytes), (neutron.networks, neutron.ports)

    defaults = limits()
    resources = {
        "nova": {"type": "OS::Nova::Quota", "properties": {"project": project.id, "cores": 7, "key_pairs": 4}},
        "cinder": {"type": "OS::Cinder::Quota", "properties": {"project": project.id, "volumes": 5, "gigabytes": 50}},
        "neutron": {"type": "OS::Neutron::Quota", "properties": {"project": project.id, "network": 3, "port": 30}},
    }
    try:
        round_trip(service, {"heat_template_version": "2021-04-16", "resources": resources}, f"rt-quota-{suffix}")
        assert limits() == defaults
    finally:
        connection.identity.delete_project(project, ignore_missing=True)
