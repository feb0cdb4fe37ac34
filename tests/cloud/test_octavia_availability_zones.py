"""OS::Octavia::AvailabilityZoneProfile and OS::Octavia::AvailabilityZone (Heat 24.0.0's,
as Heat 27 has them) against the real Octavia of the test cloud (``octavia_service``, the
amphora provider with its no-op drivers, which validates a profile's data against the
amphora driver's schema): created, updated in place, the zone replaced when its profile
changes, checked, deleted (also after the zone was deleted behind the stack's back), a
name change refused by Octavia as it refuses Heat's, and crash safety: the ``stoker``
command SIGKILLed after each store commit of a create in turn, then the next command
finishes, and nothing named for the stack is left in Octavia. openstacksdk is the witness.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stoker.resources.openstack.cloud import EnvironmentCloudSource, set_cloud_source
from tests.support.stacks import from_data

STOKER = str(Path(sys.executable).with_name("stoker"))
WAIT_S = 300


@pytest.fixture
def admin_cloud(openstack_cloud, octavia_service):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture
def stacks(make_service, admin_cloud):
    """A service, and the stacks a test makes deleted at the end whatever happened."""
    service = make_service()
    names: list[str] = []
    yield service, names
    for name in names:
        if service.store.find_stack(name) is not None:
            service.delete_stack(name)


def zones_template(zone: dict, first_data: str, second: dict | None = None) -> dict:
    """Two profiles (no names: each gets its physical resource name) and a zone on one."""
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "first": {
                "type": "OS::Octavia::AvailabilityZoneProfile",
                "properties": {"provider_name": "amphora", "availability_zone_data": first_data},
            },
            "second": {
                "type": "OS::Octavia::AvailabilityZoneProfile",
                "properties": {
                    "provider_name": "amphora",
                    "availability_zone_data": json.dumps({"compute_zone": "az-two"}),
                    **(second or {}),
                },
            },
            "zone": {"type": "OS::Octavia::AvailabilityZone", "properties": zone},
        },
        "outputs": {
            "profile_of_zone": {"value": {"get_attr": ["zone", "availability_zone_profile_id"]}}
        },
    }


def physical_ids(service, stack_name: str) -> dict[str, str]:
    return {
        record.name: record.physical_resource_id for record in service.list_resources(stack_name)
    }


def test_availability_zone_profile_and_zone_create_update_replace_check_delete(admin_cloud, stacks):
    service, names = stacks
    lbaas = admin_cloud.connect("admin").load_balancer
    stack_name = f"octavia-az-{secrets.token_hex(3)}"
    names.append(stack_name)
    nova = json.dumps({"compute_zone": "nova"})
    on_first = {"availability_zone_profile": {"get_resource": "first"}, "description": "one"}

    stack = service.create_stack(stack_name, from_data(zones_template(on_first, nova)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    first = lbaas.get_availability_zone_profile(ids["first"])
    assert (first.name, first.provider_name, first.availability_zone_data) == (
        f"{stack_name}-first-" + first.name.rsplit("-", 1)[1],
        "amphora",
        nova,
    )
    # Octavia names availability zones by name: the zone's physical id is its name.
    assert ids["zone"].startswith(f"{stack_name}-zone-")
    zone = lbaas.get_availability_zone(ids["zone"])
    assert (zone.name, zone.availability_zone_profile_id, zone.description, zone.is_enabled) == (
        ids["zone"],
        ids["first"],
        "one",
        True,
    )
    assert service.outputs(stack_name)[0]["output_value"] == ids["first"]
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: the zone's description and state; the unused profile's name and data.
    second = {"name": f"{stack_name}-renamed", "availability_zone_data": '{"compute_zone": "b"}'}
    off = {**on_first, "description": "two", "enabled": False}
    stack = service.update_stack(stack_name, from_data(zones_template(off, nova, second)))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name) == ids
    zone = lbaas.get_availability_zone(ids["zone"])
    assert (zone.description, zone.is_enabled) == ("two", False)
    renamed = lbaas.get_availability_zone_profile(ids["second"])
    assert (renamed.name, renamed.availability_zone_data) == (
        f"{stack_name}-renamed",
        '{"compute_zone": "b"}',
    )

    # A new profile is a new zone (replacement): the old one is gone from Octavia.
    on_second = {**off, "availability_zone_profile": {"get_resource": "second"}}
    stack = service.update_stack(stack_name, from_data(zones_template(on_second, nova, second)))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    replaced = physical_ids(service, stack_name)
    assert replaced["zone"] != ids["zone"] and replaced["first"] == ids["first"]
    assert lbaas.find_availability_zone(ids["zone"]) is None
    assert (
        lbaas.get_availability_zone(replaced["zone"]).availability_zone_profile_id == ids["second"]
    )

    # Heat's schema lets the name change in place; Octavia's update takes only the
    # description and state, and refuses it: the update fails with Octavia's reason.
    named = {**on_second, "name": f"{stack_name}-named"}
    stack = service.update_stack(stack_name, from_data(zones_template(named, nova, second)))
    assert stack.state == "UPDATE_FAILED"
    assert "zone" in stack.status_reason and "name" in stack.status_reason, stack.status_reason
    assert lbaas.get_availability_zone(replaced["zone"]).name == replaced["zone"]

    # The zone deleted behind the stack's back: the stack's delete tolerates it.
    lbaas.delete_availability_zone(replaced["zone"])
    deleted = service.delete_stack(stack_name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert lbaas.find_availability_zone(replaced["zone"]) is None
    for profile in (ids["first"], ids["second"]):
        assert lbaas.find_availability_zone_profile(profile) is None


def test_availability_zone_profile_data_refused_by_the_provider_names_the_resource(
    admin_cloud, stacks
):
    service, names = stacks
    stack_name = f"octavia-azbad-{secrets.token_hex(3)}"
    names.append(stack_name)
    template = zones_template(
        {"availability_zone_profile": {"get_resource": "first"}},
        json.dumps({"compute_zone": "nova", "no_such_key": 1}),
    )

    stack = service.create_stack(stack_name, from_data(template))

    assert stack.state == "CREATE_FAILED"
    assert "first" in stack.status_reason and "no_such_key" in stack.status_reason


def left_in_octavia(lbaas, stack_name: str) -> dict[str, list[str]]:
    prefix = f"{stack_name}-"
    return {
        "zones": [z.name for z in lbaas.availability_zones() if z.name.startswith(prefix)],
        "profiles": [
            p.name for p in lbaas.availability_zone_profiles() if p.name.startswith(prefix)
        ],
    }


def test_availability_zone_create_killed_at_each_commit_then_finished_leaves_nothing(
    openstack_cloud, octavia_service, tmp_path
):
    lbaas = openstack_cloud.connect("admin").load_balancer
    template = tmp_path / "zones.yaml"
    template.write_text(
        yaml.safe_dump(
            zones_template(
                {"availability_zone_profile": {"get_resource": "first"}},
                json.dumps({"compute_zone": "nova"}),
            )
        )
    )
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("OS_", "STOKER_"))
    }
    environment.update(
        OS_CLIENT_CONFIG_FILE=str(openstack_cloud.clouds_yaml),
        STOKER_DATABASE_URL=f"sqlite:///{tmp_path / 'stoker.sqlite'}",
    )

    def stoker(*command: str, kill_after: int | None = None) -> subprocess.CompletedProcess:
        run_environment = dict(environment)
        if kill_after is not None:
            run_environment["STOKER_FAULT_KILL_AFTER_COMMITS"] = str(kill_after)
        return subprocess.run(
            [STOKER, "--os-cloud", openstack_cloud.cloud("admin"), "stack", *command],
            env=run_environment, capture_output=True, text=True, timeout=WAIT_S, check=False,
        )  # fmt: skip

    suffix = secrets.token_hex(3)
    nothing = {"zones": [], "profiles": []}
    crashes = 0
    # A point every third commit until the create completes (about 15 commits): each
    # resource's IN_PROGRESS, id and COMPLETE commits are cut, the run stays in minutes.
    for commits in range(1, 40, 3):
        name = f"azc{commits}-{suffix}"
        created = stoker("create", name, "-t", str(template), "--wait", kill_after=commits)
        if created.returncode == 0:
            break  # the create ran to its end before that many commits
        assert created.returncode == -9, created.stderr
        crashes += 1
        if stoker("show", name).returncode != 0:
            assert left_in_octavia(lbaas, name) == nothing
            continue
        # The next command resumes the create; every object is the stack's own.
        retried = stoker("update", name, "-t", str(template), "--wait")
        assert retried.returncode == 0, (commits, retried.stderr)
        left = left_in_octavia(lbaas, name)
        assert (len(left["zones"]), len(left["profiles"])) == (1, 2), (commits, left)
        deleted = stoker("delete", name, "--yes", "--wait")
        assert deleted.returncode == 0, deleted.stderr
        assert left_in_octavia(lbaas, name) == nothing, (commits, created.stderr)
    else:
        raise AssertionError("the create never completed")
    assert crashes >= 3  # the stack's and the resources' commits were crash points
    deleted = stoker("delete", name, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert left_in_octavia(lbaas, name) == nothing
