"""The plan is true on the test cloud (issue 32): one stack of real Neutron, Nova and
Cinder resources (a network, subnet, security group and rule, a port, a server on it, a
volume attached to it) goes through a sequence of saved plans applied: an in-place change,
a replacement, a resource added, then removed, and a no-op. For each, the mutating calls
(POST, PUT, PATCH, DELETE) that the services' access logs saw during the apply are exactly
those the plan's actions need, resource by resource, and nothing more: a create is a POST
to its collection, a replacement a POST and a DELETE of the old one, an update in place
PUT/PATCH/POST on the resource, a no-op plan no mutating call at all."""

from __future__ import annotations

import json
import re
import secrets
import time

from tests.cloud.fixture import admin_cloud, deleting_service  # noqa: F401 - fixtures
from tests.support.stacks import from_data

# Resource type -> (the API whose log shows its calls, its collection's path ending).
COLLECTIONS = {
    "OS::Neutron::Net": ("neutron", "/v2.0/networks"),
    "OS::Neutron::Subnet": ("neutron", "/v2.0/subnets"),
    "OS::Neutron::SecurityGroup": ("neutron", "/v2.0/security-groups"),
    "OS::Neutron::SecurityGroupRule": ("neutron", "/v2.0/security-group-rules"),
    "OS::Neutron::Port": ("neutron", "/v2.0/ports"),
    "OS::Nova::Server": ("nova", "/servers"),
    "OS::Cinder::Volume": ("cinder", "/volumes"),
    "OS::Cinder::VolumeAttachment": ("nova", "/os-volume_attachments"),
}
APIS = ("neutron", "nova", "cinder", "glance")
# Neutron tells Nova about a port of a server it changed: a call between the services.
BETWEEN_SERVICES = re.compile(r"^POST /v2\.1/os-server-external-events$")
LINE = re.compile(r"\] (POST|PUT|PATCH|DELETE) (\S+) =>")


def stack_template(suffix: str, port_name: str = "port", rule_port: int = 22, spare: bool = False, server: str = "server") -> dict:
    resources = {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"truth-net-{suffix}"}},
        "subnet": {
            "type": "OS::Neutron::Subnet",
            "properties": {"network": {"get_resource": "net"}, "cidr": "10.43.0.0/24"},
        },
        "sg": {"type": "OS::Neutron::SecurityGroup", "properties": {"name": f"truth-sg-{suffix}"}},
        "rule": {
            "type": "OS::Neutron::SecurityGroupRule",
            "properties": {
                "security_group": {"get_resource": "sg"},
                "protocol": "tcp",
                "port_range_min": rule_port,
                "port_range_max": rule_port,
            },
        },
        "port": {
            "type": "OS::Neutron::Port",
            "properties": {
                "name": f"truth-{port_name}-{suffix}",
                "network": {"get_resource": "net"},
                "security_groups": [{"get_resource": "sg"}],
            },
            "depends_on": ["subnet"],
        },
        "server": {
            "type": "OS::Nova::Server",
            "properties": {
                "name": f"truth-{server}-{suffix}",
                "flavor": "m1.tiny",
                "image": "stoker-tiny",
                "networks": [{"port": {"get_resource": "port"}}],
            },
        },
        "volume": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
        "attachment": {
            "type": "OS::Cinder::VolumeAttachment",
            "properties": {
                "instance_uuid": {"get_resource": "server"},
                "volume_id": {"get_resource": "volume"},
            },
        },
    }
    if spare:
        resources["spare"] = {"type": "OS::Cinder::Volume", "properties": {"size": 1}}
    return {"heat_template_version": "2021-04-16", "resources": resources}


def _offsets(cloud) -> dict[str, int]:
    logs = cloud.access_logs
    return {api: logs[api].stat().st_size for api in APIS}


def _settled(cloud) -> None:
    """Until the access logs stop growing for a second (at most 15 s): a service writes a
    request's line once its answer is sent, which may be after stoker moved on."""
    deadline, last, still_since = time.monotonic() + 15, _offsets(cloud), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - still_since < 1:
        time.sleep(0.2)
        now = _offsets(cloud)
        if now != last:
            last, still_since = now, time.monotonic()


def _mutating_calls(cloud, since: dict[str, int]) -> list[tuple[str, str, str]]:
    """(api, method, path) of each POST/PUT/PATCH/DELETE logged since ``since``."""
    _settled(cloud)
    calls = []
    for api in APIS:
        with cloud.access_logs[api].open("rb") as log:
            log.seek(since[api])
            text = log.read().decode(errors="replace")
        for match in LINE.finditer(text):
            method, path = match.group(1), match.group(2).split("?", 1)[0]
            if not BETWEEN_SERVICES.match(f"{method} {path}"):
                calls.append((api, method, path))
    return calls


def _attributed(calls, planned: dict[str, str], types: dict[str, str], ids: dict[str, set[str]]):
    """resource -> the methods of the calls made for it, and the calls made for none."""
    methods: dict[str, set[str]] = {}
    stray = []
    for api, method, path in calls:
        owner = next((name for name, known in ids.items() if any(pid and pid in path for pid in known)), None)
        if owner is None and method == "POST":
            owner = next(
                (
                    name
                    for name, action in planned.items()
                    if action in ("create", "replace") and COLLECTIONS[types[name]][0] == api
                    and path.endswith(COLLECTIONS[types[name]][1])
                ),
                None,
            )
        if owner is None:
            stray.append(f"{method} {path} ({api})")
        else:
            methods.setdefault(owner, set()).add(method)
    return methods, stray


def _ids(service, name: str) -> tuple[dict[str, str], dict[str, str]]:
    resources = service.list_resources(name)
    return {r.name: r.physical_resource_id for r in resources}, {r.name: r.type for r in resources}


def test_applied_plans_make_exactly_the_planned_cloud_calls(admin_cloud, service):  # noqa: F811 - the fixture
    suffix = secrets.token_hex(3)
    name = f"truth-{suffix}"
    created = service.create_stack(name, from_data(stack_template(suffix)))
    assert created.state == "CREATE_COMPLETE", created.status_reason
    steps = [
        ("in-place", stack_template(suffix, port_name="renamed", server="web"), {"port": "update", "server": "update"}),
        ("replace", stack_template(suffix, port_name="renamed", server="web", rule_port=2222), {"rule": "replace"}),
        ("add", stack_template(suffix, port_name="renamed", server="web", rule_port=2222, spare=True), {"spare": "create"}),
        ("remove", stack_template(suffix, port_name="renamed", server="web", rule_port=2222), {"spare": "delete"}),
        ("no-op", stack_template(suffix, port_name="renamed", server="web", rule_port=2222), {}),
    ]
    expected_methods = {
        "create": lambda found: found == {"POST"},
        "replace": lambda found: found == {"POST", "DELETE"},
        "update": lambda found: bool(found) and found <= {"PUT", "PATCH", "POST"},
        "delete": lambda found: found == {"DELETE"},
    }
    for step, body, expected in steps:
        plan = service.plan_update(name, from_data(body))["plan"]
        planned = {e["address"]: e["action"] for e in plan["resources"] if e["action"] != "no-change"}
        assert planned == expected, step
        before_ids, before_types = _ids(service, name)
        since = _offsets(admin_cloud)
        updated = service.apply_plan(json.loads(json.dumps(plan)))
        assert updated.state == "UPDATE_COMPLETE", f"{step}: {updated.status_reason}"
        calls = _mutating_calls(admin_cloud, since)
        after_ids, after_types = _ids(service, name)
        ids = {
            resource: {before_ids.get(resource), after_ids.get(resource)} - {None}
            for resource in set(before_ids) | set(after_ids)
        }
        methods, stray = _attributed(calls, planned, {**before_types, **after_types}, ids)
        assert stray == [], f"{step}: calls no planned action needs: {stray}"
        assert set(methods) == set(planned), f"{step}: {methods} for the plan {planned}"
        for resource, action in planned.items():
            assert expected_methods[action](methods[resource]), f"{step}: {resource} ({action}) made {methods[resource]}"
        if step == "no-op":
            assert calls == []
