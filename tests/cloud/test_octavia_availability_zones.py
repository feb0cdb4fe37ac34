"""OS::Octavia::AvailabilityZoneProfile and OS::Octavia::AvailabilityZone on the real
Octavia of the test cloud (tests/cloud/addons/octavia.py), as its administrator: create,
update in place, replacement of the zone when its profile changes, check, a name change
refused, and delete (also of a zone already gone)."""

from __future__ import annotations

import secrets

from tests.cloud.test_octavia_types import _refused, admin_cloud, outputs, physical_ids, stacks
from tests.support.stacks import from_data

__all__ = ["admin_cloud", "stacks"]

NOVA_ZONE = '{"compute_zone": "nova"}'


def _template(profile_data: str, zone: dict, profile_name: str | None = None) -> dict:
    profile = {"provider_name": "amphora", "availability_zone_data": profile_data}
    if profile_name:
        profile["name"] = profile_name
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "profile": {"type": "OS::Octavia::AvailabilityZoneProfile", "properties": profile},
            "zone": {
                "type": "OS::Octavia::AvailabilityZone",
                "properties": {"availability_zone_profile": {"get_resource": "profile"}, **zone},
            },
        },
        "outputs": {
            "profile_of_zone": {"value": {"get_attr": ["zone", "availability_zone_profile_id"]}}
        },
    }


def test_octavia_availability_zone_profile_and_zone(admin_cloud, stacks):
    service, names = stacks
    lbaas = admin_cloud.connect("admin").load_balancer
    stack_name = f"octavia-az-{secrets.token_hex(3)}"
    names.append(stack_name)

    stack = service.create_stack(
        stack_name, from_data(_template(NOVA_ZONE, {"description": "first"}))
    )

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    profile = lbaas.get_availability_zone_profile(ids["profile"])
    assert (profile.provider_name, profile.availability_zone_data) == ("amphora", NOVA_ZONE)
    assert profile.name.startswith(f"{stack_name}-profile-")
    # The zone's physical id is its name, as in Heat (Octavia keys zones by name).
    assert ids["zone"].startswith(f"{stack_name}-zone-")
    zone = lbaas.get_availability_zone(ids["zone"])
    assert (zone.availability_zone_profile_id, zone.description, zone.is_enabled) == (
        ids["profile"],
        "first",
        True,
    )
    assert outputs(service, stack_name) == {"profile_of_zone": ids["profile"]}
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: the zone's description and state, the profile's name.
    stack = service.update_stack(
        stack_name,
        from_data(
            _template(
                NOVA_ZONE, {"description": "second", "enabled": False}, "renamed-" + stack_name
            )
        ),
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name) == ids
    zone = lbaas.get_availability_zone(ids["zone"])
    assert (zone.description, zone.is_enabled) == ("second", False)
    assert lbaas.get_availability_zone_profile(ids["profile"]).name == "renamed-" + stack_name

    # A new name Octavia cannot give a zone: the update fails naming the property.
    stack = service.update_stack(
        stack_name,
        from_data(_template(NOVA_ZONE, {"name": f"other-{stack_name}"}, "renamed-" + stack_name)),
    )
    assert stack.state == "UPDATE_FAILED"
    assert "properties.name" in stack.status_reason and "cannot rename" in stack.status_reason

    # The zone gone behind stoker's back: delete still completes, and removes the profile.
    lbaas.delete_availability_zone(ids["zone"])
    deleted = service.delete_stack(stack_name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert lbaas.find_availability_zone(ids["zone"], ignore_missing=True) is None
    assert lbaas.find_availability_zone_profile(ids["profile"], ignore_missing=True) is None


def test_octavia_availability_zone_profile_data_must_be_json(admin_cloud, stacks):
    service, _ = stacks
    message = _refused(service, _template("{not json", {}))

    assert "resources.profile.properties.availability_zone_data" in message
    assert "is not a JSON string" in message
