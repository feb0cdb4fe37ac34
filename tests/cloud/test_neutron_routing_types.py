"""OS::Neutron::AddressScope, SubnetPool, RBACPolicy, ExtraRoute and ExtraRouteSet against
the real Neutron of the test cloud: created, updated in place, refused where Heat refuses
(an action the object type lacks, prefixes that shrink, a route the router already has),
checked, and deleted, openstacksdk the witness."""

from __future__ import annotations

import secrets

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.template.errors import TemplateErrors
from tests.support.stacks import from_data


@pytest.fixture
def admin_cloud(openstack_cloud):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture
def stacks(make_service, admin_cloud):
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


def hot(resources: dict) -> dict:
    return {"heat_template_version": "2021-04-16", "resources": resources}


def test_address_scope_and_subnet_pool_with_a_subnet_from_it(admin_cloud, stacks):
    service, names = stacks
    connection = admin_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    stack_name = f"pool-{suffix}"
    names.append(stack_name)
    second = f"10.{secrets.randbelow(200) + 20}.0.0/16"

    def template(pool_name: str, prefixes: list[str], quota: int) -> dict:
        return hot(
            {
                "scope": {
                    "type": "OS::Neutron::AddressScope",
                    "properties": {"name": f"scope-{suffix}"},
                },
                "pool": {
                    "type": "OS::Neutron::SubnetPool",
                    "properties": {
                        "name": pool_name,
                        "prefixes": prefixes,
                        "address_scope": {"get_resource": "scope"},
                        "default_prefixlen": 26,
                        "min_prefixlen": 24,
                        "max_prefixlen": 28,
                        "default_quota": quota,
                        "tags": ["stoker"],
                    },
                },
                "net": {"type": "OS::Neutron::Net"},
                "subnet": {
                    "type": "OS::Neutron::Subnet",
                    "properties": {
                        "network": {"get_resource": "net"},
                        "subnetpool": {"get_resource": "pool"},
                    },
                },
            }
        )

    first = f"10.{secrets.randbelow(200) + 20}.{secrets.randbelow(250)}.0/24"
    stack = service.create_stack(stack_name, from_data(template(f"pool-{suffix}", [first], 256)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    scope = connection.network.get_address_scope(ids["scope"])
    pool = connection.network.get_subnet_pool(ids["pool"])
    assert (scope.name, scope.ip_version, scope.is_shared) == (f"scope-{suffix}", 4, False)
    assert (pool.name, pool.prefixes, pool.address_scope_id, pool.default_prefix_length) == (
        f"pool-{suffix}",
        [first],
        ids["scope"],
        26,
    )
    assert pool.tags == ["stoker"] and pool.default_quota == 256
    subnet = connection.network.get_subnet(ids["subnet"])
    assert subnet.subnet_pool_id == ids["pool"] and subnet.cidr.endswith("/26")
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: renamed, a prefix added, the quota changed.
    stack = service.update_stack(
        stack_name, from_data(template(f"renamed-{suffix}", [first, second], 512))
    )

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["pool"] == ids["pool"]
    pool = connection.network.get_subnet_pool(ids["pool"])
    assert pool.name == f"renamed-{suffix}" and sorted(pool.prefixes) == sorted([first, second])
    assert pool.default_quota == 512

    # Prefixes may only grow, as Heat says.
    stack = service.update_stack(
        stack_name, from_data(template(f"renamed-{suffix}", [second], 512))
    )

    assert stack.state == "UPDATE_FAILED"
    assert "should be superset of existing value" in stack.status_reason

    service.delete_stack(stack_name)
    assert connection.network.find_subnet_pool(ids["pool"], ignore_missing=True) is None
    assert connection.network.find_address_scope(ids["scope"], ignore_missing=True) is None


def test_subnet_pool_refuses_contradicting_prefix_bounds(admin_cloud, stacks):
    service, _ = stacks
    pool = {"prefixes": ["10.9.0.0/16"], "min_prefixlen": 28, "max_prefixlen": 24}

    with pytest.raises(TemplateErrors) as refused:
        service.create_stack(
            f"pool-{secrets.token_hex(3)}",
            from_data(hot({"pool": {"type": "OS::Neutron::SubnetPool", "properties": pool}})),
        )

    assert "Illegal prefix bounds: max_prefixlen=24, min_prefixlen=28." in str(refused.value)
    assert "resources.pool" in str(refused.value)


def test_rbac_policy_shares_a_network_with_another_project(admin_cloud, stacks):
    service, names = stacks
    connection = admin_cloud.connect("admin")
    demo = admin_cloud.connect("demo")
    demo_project = connection.identity.find_project("demo")
    admin_project = connection.identity.find_project("admin")
    suffix = secrets.token_hex(3)
    stack_name = f"rbac-{suffix}"
    names.append(stack_name)

    def template(target: str) -> dict:
        return hot(
            {
                "net": {"type": "OS::Neutron::Net", "properties": {"name": f"shared-{suffix}"}},
                "share": {
                    "type": "OS::Neutron::RBACPolicy",
                    "properties": {
                        "object_type": "network",
                        "action": "access_as_shared",
                        # By name: resolved to its id as Heat's translation rule does.
                        "object_id": {"get_attr": ["net", "name"]},
                        "target_tenant": target,
                    },
                },
            }
        )

    stack = service.create_stack(stack_name, from_data(template(demo_project.id)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    policy = connection.network.get_rbac_policy(ids["share"])
    assert (policy.object_id, policy.target_project_id, policy.action) == (
        ids["net"],
        demo_project.id,
        "access_as_shared",
    )
    assert demo.network.find_network(ids["net"], ignore_missing=True) is not None

    stack = service.update_stack(stack_name, from_data(template(admin_project.id)))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["share"] == ids["share"]
    assert connection.network.get_rbac_policy(ids["share"]).target_project_id == admin_project.id
    assert demo.network.find_network(ids["net"], ignore_missing=True) is None

    service.delete_stack(stack_name)
    assert connection.network.find_rbac_policy(ids["share"], ignore_missing=True) is None


def test_rbac_policy_refuses_an_action_its_object_type_lacks(admin_cloud, stacks):
    service, _ = stacks
    connection = admin_cloud.connect("admin")
    group = connection.network.create_security_group(name=f"rbac-{secrets.token_hex(3)}")
    share = {
        "object_type": "security_group",
        "action": "access_as_external",
        "object_id": group.id,
        "target_tenant": "y",
    }

    with pytest.raises(TemplateErrors) as refused:
        service.create_stack(
            f"rbac-{secrets.token_hex(3)}",
            from_data(hot({"share": {"type": "OS::Neutron::RBACPolicy", "properties": share}})),
        )

    assert (
        'Invalid action "access_as_external" for object type security_group. Valid actions: access_as_shared'
        in str(refused.value)
    )
    assert "resources.share.properties.action" in str(refused.value)
    connection.network.delete_security_group(group)


def _routed(suffix: str, third: int, extra: dict) -> dict:
    return hot(
        {
            "net": {"type": "OS::Neutron::Net"},
            "subnet": {
                "type": "OS::Neutron::Subnet",
                "properties": {"network": {"get_resource": "net"}, "cidr": f"192.168.{third}.0/24"},
            },
            "router": {"type": "OS::Neutron::Router", "properties": {"name": f"routed-{suffix}"}},
            "interface": {
                "type": "OS::Neutron::RouterInterface",
                "properties": {
                    "router": {"get_resource": "router"},
                    "subnet": {"get_resource": "subnet"},
                },
            },
            **extra,
        }
    )


def _routes(connection, router_id: str) -> list[tuple[str, str]]:
    return sorted(
        (r["destination"], r["nexthop"])
        for r in connection.network.get_router(router_id).routes or []
    )


def test_extra_route_set_adds_and_removes_only_its_routes(admin_cloud, stacks):
    service, names = stacks
    connection = admin_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    third = secrets.randbelow(200) + 20
    nexthop = f"192.168.{third}.10"
    stack_name = f"routes-{suffix}"
    names.append(stack_name)

    def template(routes: list[dict]) -> dict:
        # No depends_on: the set follows the router's interface implicitly, as in Heat
        # (Neutron refuses a nexthop not on a subnet of the router).
        return _routed(
            suffix,
            third,
            {
                "routes": {
                    "type": "OS::Neutron::ExtraRouteSet",
                    "properties": {"router": {"get_resource": "router"}, "routes": routes},
                }
            },
        )

    a = {"destination": "10.200.1.0/24", "nexthop": nexthop}
    b = {"destination": "10.200.2.0/24", "nexthop": nexthop}
    c = {"destination": "10.200.3.0/24", "nexthop": nexthop}
    stack = service.create_stack(stack_name, from_data(template([a, b])))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    router_id = physical_ids(service, stack_name)["router"]
    assert _routes(connection, router_id) == [
        ("10.200.1.0/24", nexthop),
        ("10.200.2.0/24", nexthop),
    ]
    # A route added outside the stack stays through the stack's updates.
    connection.network.add_extra_routes_to_router(
        router_id, {"router": {"routes": [{"destination": "10.201.0.0/24", "nexthop": nexthop}]}}
    )

    stack = service.update_stack(stack_name, from_data(template([b, c])))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert _routes(connection, router_id) == [
        ("10.200.2.0/24", nexthop),
        ("10.200.3.0/24", nexthop),
        ("10.201.0.0/24", nexthop),
    ]
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # A route the router already has is refused, as Heat's PhysicalResourceExists.
    stack = service.update_stack(
        stack_name,
        from_data(template([b, c, {"destination": "10.201.0.0/24", "nexthop": nexthop}])),
    )

    assert stack.state == "UPDATE_FAILED"
    assert (
        f"The physical resource for ({router_id},10.201.0.0/24={nexthop}) exists."
        in stack.status_reason
    )

    connection.network.remove_extra_routes_from_router(
        router_id, {"router": {"routes": [{"destination": "10.201.0.0/24", "nexthop": nexthop}]}}
    )
    service.delete_stack(stack_name)
    assert connection.network.find_router(router_id, ignore_missing=True) is None


def test_extra_route_single_route(admin_cloud, stacks):
    service, names = stacks
    connection = admin_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    third = secrets.randbelow(200) + 20
    stack_name = f"route-{suffix}"
    names.append(stack_name)
    route = {
        "router_id": {"get_resource": "router"},
        "destination": "10.210.0.0/24",
        "nexthop": f"192.168.{third}.20",
    }

    stack = service.create_stack(
        stack_name,
        from_data(
            _routed(
                suffix, third, {"route": {"type": "OS::Neutron::ExtraRoute", "properties": route}}
            )
        ),
    )

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    assert ids["route"] == f"{ids['router']}:10.210.0.0/24:192.168.{third}.20"
    assert _routes(connection, ids["router"]) == [("10.210.0.0/24", f"192.168.{third}.20")]
    statuses = {r["path"]: r["status"] for r in service.detect_drift(stack_name).resources}
    assert statuses["route"] == "IN_SYNC", statuses

    # Removed behind the stack's back: drift and check say so; delete still completes.
    connection.network.update_router(ids["router"], routes=[])
    statuses = {r["path"]: r["status"] for r in service.detect_drift(stack_name).resources}
    assert statuses["route"] == "DELETED" and statuses["router"] == "IN_SYNC", statuses
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_FAILED"
    service.delete_stack(stack_name)
    assert connection.network.find_router(ids["router"], ignore_missing=True) is None
