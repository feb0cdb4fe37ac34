"""The administrators' Nova and Cinder types against the real Nova and Cinder of the test
cloud: OS::Nova::HostAggregate, OS::Nova::Quota, OS::Cinder::Quota,
OS::Cinder::EncryptedVolumeType, OS::Cinder::QoSSpecs and OS::Cinder::QoSAssociation.
Each is created, updated in place, checked, and deleted (also when already gone), with
openstacksdk as the witness; quotas are set on a project made for the test and come back
to the defaults on delete."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

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
    """A service, and the stacks a test makes deleted at the end whatever happened."""
    service = make_service()
    names: list[str] = []
    yield service, names
    for name in names:
        if service.store.find_stack(name) is not None:
            service.delete_stack(name)


@pytest.fixture
def project(admin_cloud) -> Iterator[object]:
    """A project of its own (quotas are per project), the admin a member of it."""
    connection = admin_cloud.connect("admin")
    made = connection.identity.create_project(
        name=f"quota-{secrets.token_hex(3)}", domain_id="default"
    )
    admin = connection.identity.find_user("admin")
    member = connection.identity.find_role("member")
    connection.identity.assign_project_role_to_user(made, admin, member)
    yield made
    connection.identity.delete_project(made)


def physical_ids(service, stack_name: str) -> dict[str, str]:
    return {
        record.name: record.physical_resource_id for record in service.list_resources(stack_name)
    }


def hot(resources: dict, outputs: dict | None = None) -> dict:
    return {"heat_template_version": "2021-04-16", "resources": resources, "outputs": outputs or {}}


def compute_host(connection) -> str:
    return next(iter(connection.compute.services(binary="nova-compute"))).host


def test_host_aggregate_create_update_check_delete(admin_cloud, stacks):
    service, names = stacks
    connection = admin_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    host = compute_host(connection)
    stack_name = f"aggregate-{suffix}"
    names.append(stack_name)

    def aggregate(name: str, hosts: list[str], metadata: dict) -> dict:
        properties = {
            "name": name,
            "availability_zone": f"zone-{suffix}",
            "hosts": hosts,
            "metadata": metadata,
        }
        return hot(
            {"agg": {"type": "OS::Nova::HostAggregate", "properties": properties}},
            {"shown": {"value": {"get_attr": ["agg", "show", "name"]}}},
        )

    stack = service.create_stack(
        stack_name, from_data(aggregate(f"agg-{suffix}", [host], {"ssd": "true", "tier": 1}))
    )

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    aggregate_id = physical_ids(service, stack_name)["agg"]
    found = connection.compute.get_aggregate(aggregate_id)
    assert (found.name, found.availability_zone, found.hosts) == (
        f"agg-{suffix}",
        f"zone-{suffix}",
        [host],
    )
    assert found.metadata == {"ssd": "true", "tier": "1", "availability_zone": f"zone-{suffix}"}
    assert {o["output_key"]: o["output_value"] for o in service.outputs(stack_name)} == {
        "shown": f"agg-{suffix}"
    }
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # Every property in place: renamed, the host taken out, one key dropped and one changed.
    stack = service.update_stack(
        stack_name, from_data(aggregate(f"renamed-{suffix}", [], {"tier": 2}))
    )

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["agg"] == aggregate_id
    found = connection.compute.get_aggregate(aggregate_id)
    assert (found.name, found.hosts) == (f"renamed-{suffix}", [])
    assert found.metadata == {"tier": "2", "availability_zone": f"zone-{suffix}"}

    # Deleted behind the stack's back: check fails, delete still completes.
    connection.compute.delete_aggregate(aggregate_id)
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_FAILED"
    service.delete_stack(stack_name)
    assert service.store.find_stack(stack_name) is None


def test_host_aggregate_refuses_an_unknown_host(admin_cloud, stacks):
    service, _ = stacks
    template = hot(
        {
            "agg": {
                "type": "OS::Nova::HostAggregate",
                "properties": {"name": "x", "hosts": ["no-such-host"]},
            }
        }
    )

    with pytest.raises(TemplateErrors) as refused:
        service.create_stack(f"aggregate-{secrets.token_hex(3)}", from_data(template))

    assert "resources.agg.properties.hosts[0]" in str(refused.value)
    assert "The host (no-such-host) could not be found." in str(refused.value)
    assert "could not look up" not in str(refused.value)


def _nova_quota(connection, project_id: str, microversion: str = "2.35") -> dict:
    response = connection.compute.get(f"/os-quota-sets/{project_id}", microversion=microversion)
    response.raise_for_status()
    return response.json()["quota_set"]


def test_nova_quota_sets_limits_newer_microversions_removed_then_reverts(
    admin_cloud, stacks, project
):
    service, names = stacks
    connection = admin_cloud.connect("admin")
    defaults = _nova_quota(connection, project.id)
    stack_name = f"nova-quota-{secrets.token_hex(3)}"
    names.append(stack_name)

    def quota(**limits: int) -> dict:
        return hot(
            {
                "quota": {
                    "type": "OS::Nova::Quota",
                    "properties": {"project": project.name, **limits},
                }
            }
        )

    # floating_ips left Nova's quota API at 2.36: set at 2.35, as seed 004 asks.
    stack = service.create_stack(stack_name, from_data(quota(cores=7, key_pairs=4, floating_ips=3)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    current = _nova_quota(connection, project.id)
    assert (current["cores"], current["key_pairs"], current["floating_ips"]) == (7, 4, 3)
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"
    # Drift reads the project's quota set: in sync, then a limit changed by hand.
    assert {r["path"]: r["status"] for r in service.detect_drift(stack_name).resources} == {"quota": "IN_SYNC"}
    connection.compute.put(f"/os-quota-sets/{project.id}", json={"quota_set": {"cores": 9}}).raise_for_status()
    drifted = service.detect_drift(stack_name).resources[0]
    assert (drifted["status"], drifted["properties"]) == ("MODIFIED", [{"name": "cores", "expected": 7, "actual": 9}]), drifted

    stack = service.update_stack(stack_name, from_data(quota(cores=-1, key_pairs=4, ram=2048)))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    current = _nova_quota(connection, project.id)
    assert (current["cores"], current["ram"], current["key_pairs"]) == (-1, 2048, 4)

    service.delete_stack(stack_name)
    current = _nova_quota(connection, project.id)
    assert (current["cores"], current["ram"], current["key_pairs"]) == (
        defaults["cores"],
        defaults["ram"],
        defaults["key_pairs"],
    )


def test_quota_without_a_limit_is_refused_with_heats_message(admin_cloud, stacks, project):
    service, _ = stacks
    for quota_type in ("OS::Nova::Quota", "OS::Cinder::Quota"):
        template = hot({"quota": {"type": quota_type, "properties": {"project": project.name}}})

        with pytest.raises(TemplateErrors) as refused:
            service.create_stack(f"quota-{secrets.token_hex(3)}", from_data(template))

        assert "At least one of the following properties must be specified:" in str(refused.value)
        assert "resources.quota" in str(refused.value)


def test_cinder_quota_sets_limits_refuses_one_below_usage_then_reverts(
    admin_cloud, stacks, project
):
    service, names = stacks
    connection = admin_cloud.connect("admin")
    defaults = connection.block_storage.get_quota_set(project.id)
    in_project = admin_cloud.connect(
        "admin", project_name=project.name, project_domain_name="Default"
    )
    volume = in_project.block_storage.create_volume(size=1, name=f"used-{secrets.token_hex(3)}")
    in_project.block_storage.wait_for_status(volume, "available", wait=120)
    stack_name = f"cinder-quota-{secrets.token_hex(3)}"
    names.append(stack_name)

    def quota(**limits: int) -> dict:
        return hot(
            {
                "quota": {
                    "type": "OS::Cinder::Quota",
                    "properties": {"project": project.id, **limits},
                }
            }
        )

    try:
        stack = service.create_stack(
            stack_name, from_data(quota(volumes=5, gigabytes=20, snapshots=-1))
        )

        assert stack.state == "CREATE_COMPLETE", stack.status_reason
        current = connection.block_storage.get_quota_set(project.id)
        assert (current.volumes, current.gigabytes, current.snapshots) == (5, 20, -1)
        assert {r["path"]: r["status"] for r in service.detect_drift(stack_name).resources} == {"quota": "IN_SYNC"}
        connection.block_storage.update_quota_set(project.id, gigabytes=30)
        drifted = service.detect_drift(stack_name).resources[0]
        assert (drifted["status"], drifted["properties"]) == ("MODIFIED", [{"name": "gigabytes", "expected": 20, "actual": 30}]), drifted
        connection.block_storage.update_quota_set(project.id, gigabytes=20)

        # One volume is in use: a limit of none is refused with Heat's words, nothing changed.
        stack = service.update_stack(
            stack_name, from_data(quota(volumes=0, gigabytes=20, snapshots=-1))
        )

        assert stack.state == "UPDATE_FAILED"
        assert (
            "Invalid quota volumes value(s): 0. Can not be less than the current usage value(s): 1."
            in stack.status_reason
        )
        assert connection.block_storage.get_quota_set(project.id).volumes == 5

        service.delete_stack(stack_name)
        assert connection.block_storage.get_quota_set(project.id).volumes == defaults.volumes
    finally:
        in_project.block_storage.delete_volume(volume)
        in_project.block_storage.wait_for_delete(volume, wait=120)


def test_encrypted_volume_type_and_qos_specs_with_their_association(admin_cloud, stacks):
    service, names = stacks
    connection = admin_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    stack_name = f"volume-qos-{suffix}"
    names.append(stack_name)

    def template(cipher: str, key_size: int, specs: dict, associated: list) -> dict:
        return hot(
            {
                "fast": {
                    "type": "OS::Cinder::VolumeType",
                    "properties": {"name": f"fast-{suffix}"},
                },
                "slow": {
                    "type": "OS::Cinder::VolumeType",
                    "properties": {"name": f"slow-{suffix}"},
                },
                "encrypted": {
                    "type": "OS::Cinder::EncryptedVolumeType",
                    "properties": {
                        "volume_type": {"get_resource": "fast"},
                        "provider": "luks",
                        "cipher": cipher,
                        "key_size": key_size,
                    },
                },
                "qos": {"type": "OS::Cinder::QoSSpecs", "properties": {"specs": specs}},
                "association": {
                    "type": "OS::Cinder::QoSAssociation",
                    "properties": {
                        "qos_specs": {"get_resource": "qos"},
                        "volume_types": associated,
                    },
                    "depends_on": ["fast", "slow"],
                },
            }
        )

    stack = service.create_stack(
        stack_name,
        from_data(
            template(
                "aes-xts-plain64", 256, {"read_iops_sec": 100, "consumer": "back-end"}, [{"get_resource": "fast"}]
            )
        ),
    )

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    encryption = connection.block_storage.get_type_encryption(ids["fast"])
    assert (
        encryption.provider,
        encryption.cipher,
        encryption.key_size,
        encryption.control_location,
    ) == (
        "luks",
        "aes-xts-plain64",
        256,
        "front-end",
    )
    assert ids["encrypted"] == ids["fast"]
    qos = connection.block_storage.get_qos_spec(ids["qos"])
    assert qos.name.startswith(f"{stack_name}-qos-")
    assert qos.specs == {"read_iops_sec": "100"} and qos.consumer == "back-end"
    assert {a.id for a in connection.block_storage.qos_spec_associations(ids["qos"])} == {
        ids["fast"]
    }
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: the cipher and key size; one spec changed, one added, one dropped; the
    # association moved from fast to slow, named (resolved to its id as Heat's
    # translation rule does).
    stack = service.update_stack(
        stack_name,
        from_data(
            template("aes-cbc-essiv", 128, {"write_iops_sec": 50, "consumer": "both"}, [f"slow-{suffix}"])
        ),
    )

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name) == ids
    encryption = connection.block_storage.get_type_encryption(ids["fast"])
    assert (encryption.cipher, encryption.key_size) == ("aes-cbc-essiv", 128)
    qos = connection.block_storage.get_qos_spec(ids["qos"])
    assert qos.specs == {"write_iops_sec": "50"} and qos.consumer == "both"
    assert {a.id for a in connection.block_storage.qos_spec_associations(ids["qos"])} == {
        ids["slow"]
    }

    service.delete_stack(stack_name)

    assert connection.block_storage.find_qos_spec(ids["qos"], ignore_missing=True) is None
    assert connection.block_storage.find_type(ids["fast"], ignore_missing=True) is None
    assert connection.block_storage.find_type(ids["slow"], ignore_missing=True) is None
