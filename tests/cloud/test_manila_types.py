"""OS::Manila::Share, ShareNetwork, ShareType and SecurityService against the real Manila
the ``manila_service`` add-on starts (API, scheduler and share service, on Manila's dummy
back end): create, update in place, replacement, check (also failing once a share is
deleted behind the stack's back), delete, validation errors in their places, and a
``stoker`` command killed after each commit of a create leaving nothing behind;
openstacksdk is the witness (its raw REST path for security services, which it has no
proxy for).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.template.errors import TemplateErrors
from tests.cloud.addons.manila import SHARE_SERVERS_TYPE
from tests.support.stacks import from_data, states

HOT = "2021-04-16"
STOKER = str(Path(sys.executable).with_name("stoker"))


def _use(cloud, user: str):
    set_cloud_source(EnvironmentCloudSource(cloud.cloud_environ(user)))
    return cloud.connect(user)


@pytest.fixture
def admin(manila_service):
    """The admin's openstacksdk connection; stoker acts as the same user."""
    yield _use(manila_service.cloud, "admin")
    set_cloud_source(None)


@pytest.fixture
def demo(manila_service):
    """The project member's openstacksdk connection; stoker acts as the same user."""
    yield _use(manila_service.cloud, "demo")
    set_cloud_source(None)


def _stacks(make_service):
    service = make_service()
    names: list[str] = []
    yield service, names
    for name in names:
        if service.store.find_stack(name) is not None:
            service.delete_stack(name)


@pytest.fixture
def admin_stacks(make_service, admin):
    """A service acting as the admin, and its stacks deleted at the end whatever happened."""
    yield from _stacks(make_service)


@pytest.fixture
def demo_stacks(make_service, demo):
    """A service acting as the project member, and its stacks deleted at the end."""
    yield from _stacks(make_service)


def physical_ids(service, stack_name: str) -> dict[str, str]:
    return {
        record.name: record.physical_resource_id for record in service.list_resources(stack_name)
    }


def outputs(service, stack_name: str) -> dict:
    return {
        output["output_key"]: output.get("output_value") for output in service.outputs(stack_name)
    }


def gone(read, timeout_s: float = 60) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            read()
        except Exception as error:  # noqa: BLE001 - openstacksdk's NotFoundException
            if getattr(error, "status_code", None) == 404:
                return True
            raise
        time.sleep(0.5)
    return False


def rules(connection, share_id: str) -> set[tuple[str, str, str]]:
    return {
        (rule.access_to, rule.access_type, rule.access_level)
        for rule in connection.shared_file_system.access_rules(share_id)
    }


def settled_rules(connection, share_id: str, wanted: set, timeout_s: float = 60) -> set:
    """The share's rules once they are ``wanted`` (Manila denies a rule asynchronously:
    it is listed, ``queued_to_deny``, until the share service has removed it)."""
    deadline = time.monotonic() + timeout_s
    found = rules(connection, share_id)
    while found != wanted and time.monotonic() < deadline:
        time.sleep(0.5)
        found = rules(connection, share_id)
    return found


def share_template(suffix: str, *, size: int = 1, **share: object) -> dict:
    properties = {
        "share_protocol": "NFS",
        "size": size,
        "name": f"share-{suffix}",
        "description": "stoker's test share",
        "share_type": {"get_resource": "share_type"},
        "metadata": {"purpose": "test", "team": "storage"},
        "access_rules": [
            {"access_to": "192.0.2.0/24", "access_type": "ip", "access_level": "ro"},
            {"access_to": "198.51.100.7", "access_type": "ip"},
        ],
    }
    properties.update(share)
    return {
        "heat_template_version": HOT,
        "resources": {
            "share_type": {
                "type": "OS::Manila::ShareType",
                "properties": {
                    "name": f"type-{suffix}",
                    "driver_handles_share_servers": False,
                    "extra_specs": {"stoker:tier": "gold"},
                },
            },
            "share": {"type": "OS::Manila::Share", "properties": properties},
        },
        "outputs": {
            key: {"value": {"get_attr": ["share", key]}}
            for key in ("export_locations", "status", "host", "project_id", "created_at")
        },
    }


def test_manila_share_type_and_share_create_update_replace_check_delete(admin_stacks, admin):
    service, names = admin_stacks
    manila = admin.shared_file_system
    suffix = secrets.token_hex(3)
    stack_name = f"manila-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(share_template(suffix)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    share_type = manila.get_share_type(ids["share_type"])
    assert share_type.name == f"type-{suffix}"
    assert share_type.extra_specs == {
        "driver_handles_share_servers": "False",
        "snapshot_support": "True",
        "stoker:tier": "gold",
    }
    share = manila.get_share(ids["share"])
    assert (share.name, share.description, share.size, share.share_protocol, share.status) == (
        f"share-{suffix}",
        "stoker's test share",
        1,
        "NFS",
        "available",
    )
    # Manila names the type in "share_type" or "share_type_name", by microversion.
    assert f"type-{suffix}" in (share.share_type, share.share_type_name)
    assert (share.is_public, share.metadata) == (False, {"purpose": "test", "team": "storage"})
    assert rules(admin, ids["share"]) == {
        ("192.0.2.0/24", "ip", "ro"),
        ("198.51.100.7", "ip", "rw"),
    }
    values = outputs(service, stack_name)
    assert values["status"] == "available"
    assert values["host"] == share.host and "@dummy" in share.host
    assert values["project_id"] == share.project_id
    assert values["created_at"] == share.created_at
    paths = [location.path for location in manila.export_locations(ids["share"])]
    assert paths and values["export_locations"] == paths

    # In place: name, description, visibility, metadata (one key gone), access rules (one
    # kept, one denied, one granted), the type's extra specs.
    updated = share_template(
        suffix,
        name=f"renamed-{suffix}",
        description="renamed",
        is_public=True,
        metadata={"purpose": "prod"},
        access_rules=[
            {"access_to": "198.51.100.7", "access_type": "ip"},
            {"access_to": "203.0.113.9", "access_type": "ip", "access_level": "ro"},
        ],
    )
    updated["resources"]["share_type"]["properties"]["extra_specs"] = {"stoker:tier": "silver"}
    stack = service.update_stack(stack_name, from_data(updated))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name) == ids
    share = manila.get_share(ids["share"])
    assert (share.name, share.description, share.is_public, share.metadata) == (
        f"renamed-{suffix}",
        "renamed",
        True,
        {"purpose": "prod"},
    )
    wanted = {("198.51.100.7", "ip", "rw"), ("203.0.113.9", "ip", "ro")}
    assert settled_rules(admin, ids["share"], wanted) == wanted
    assert manila.get_share_type(ids["share_type"]).extra_specs == {
        "driver_handles_share_servers": "False",
        "snapshot_support": "True",
        "stoker:tier": "silver",
    }

    # The size is not updatable: a new share replaces the old one, which is deleted.
    stack = service.update_stack(
        stack_name, from_data(share_template(suffix, size=2, name=f"renamed-{suffix}"))
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    replaced = physical_ids(service, stack_name)["share"]
    assert replaced != ids["share"]
    assert manila.get_share(replaced).size == 2
    assert gone(lambda: manila.get_share(ids["share"]))

    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_COMPLETE", checked.status_reason

    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert gone(lambda: manila.get_share(replaced))
    assert gone(lambda: manila.get_share_type(ids["share_type"]))


def test_manila_check_fails_and_delete_succeeds_after_an_out_of_band_delete(admin_stacks, admin):
    service, names = admin_stacks
    manila = admin.shared_file_system
    suffix = secrets.token_hex(3)
    stack_name = f"manila-gone-{suffix}"
    names.append(stack_name)
    stack = service.create_stack(stack_name, from_data(share_template(suffix, access_rules=[])))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)

    manila.delete_share(ids["share"])
    assert gone(lambda: manila.get_share(ids["share"]))
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert states(service, stack_name) == {"share_type": "CHECK_COMPLETE", "share": "CHECK_FAILED"}

    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert gone(lambda: manila.get_share_type(ids["share_type"]))


def security_services(connection, **query: str) -> list[dict]:
    answer = connection.shared_file_system.get("/security-services/detail", params=query)
    answer.raise_for_status()
    return answer.json()["security_services"]


def network_template(suffix: str, services: list[str], **network: object) -> dict:
    properties = {
        "name": f"share-net-{suffix}",
        "description": "stoker's share network",
        "neutron_network": {"get_resource": "net"},
        "neutron_subnet": {"get_resource": "subnet"},
        "security_services": [{"get_resource": name} for name in services],
    }
    properties.update(network)
    return {
        "heat_template_version": HOT,
        "resources": {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": f"net-{suffix}"}},
            "subnet": {
                "type": "OS::Neutron::Subnet",
                "properties": {"network": {"get_resource": "net"}, "cidr": "10.77.0.0/24"},
            },
            "ldap": {
                "type": "OS::Manila::SecurityService",
                "properties": {
                    "type": "ldap",
                    "server": "ldap.example.org",
                    "user": "reader",
                    "password": "s3cret",
                    "description": "directory",
                },
            },
            "kerberos": {
                "type": "OS::Manila::SecurityService",
                "properties": {
                    "name": f"krb-{suffix}",
                    "type": "kerberos",
                    "domain": "EXAMPLE.ORG",
                    "dns_ip": "192.0.2.53",
                },
            },
            "share_network": {"type": "OS::Manila::ShareNetwork", "properties": properties},
        },
        "outputs": {
            key: {"value": {"get_attr": ["share_network", key]}}
            for key in ("cidr", "ip_version", "network_type", "segmentation_id")
        },
    }


def test_manila_share_network_and_security_services(demo_stacks, demo):
    service, names = demo_stacks
    manila = demo.shared_file_system
    suffix = secrets.token_hex(3)
    stack_name = f"share-net-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(network_template(suffix, ["ldap"])))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    network = manila.get_share_network(ids["share_network"])
    assert (network.name, network.description) == (f"share-net-{suffix}", "stoker's share network")
    # Manila's first microversion shows the network's default subnet on the network.
    answer = manila.get(f"/share-networks/{ids['share_network']}")
    answer.raise_for_status()
    document = answer.json()["share_network"]
    assert (document["neutron_net_id"], document["neutron_subnet_id"]) == (
        ids["net"],
        ids["subnet"],
    )
    ldap = next(found for found in security_services(demo) if found["id"] == ids["ldap"])
    # Unnamed in the template: the resource's physical name.
    assert ldap["name"].startswith(f"{stack_name}-ldap-")
    assert (ldap["type"], ldap["server"], ldap["user"], ldap["description"]) == (
        "ldap",
        "ldap.example.org",
        "reader",
        "directory",
    )
    attached = security_services(demo, share_network_id=ids["share_network"])
    assert [found["id"] for found in attached] == [ids["ldap"]]
    # Manila fills these in when it first makes a share server on the network (below):
    # until then they are what Manila reports, none.
    values = outputs(service, stack_name)
    keys = ("cidr", "ip_version", "network_type", "segmentation_id")
    assert {key: values[key] for key in keys} == {key: document[key] for key in keys}

    # In place: the security services swapped (by name for one), the description, and a
    # security service's server.
    updated = network_template(suffix, [], description="renamed")
    updated["resources"]["share_network"]["properties"]["security_services"] = [f"krb-{suffix}"]
    updated["resources"]["share_network"]["depends_on"] = ["kerberos"]
    updated["resources"]["ldap"]["properties"]["server"] = "ldap2.example.org"
    stack = service.update_stack(stack_name, from_data(updated))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name) == ids
    assert manila.get_share_network(ids["share_network"]).description == "renamed"
    attached = security_services(demo, share_network_id=ids["share_network"])
    assert [found["id"] for found in attached] == [ids["kerberos"]]
    ldap = next(found for found in security_services(demo) if found["id"] == ids["ldap"])
    assert ldap["server"] == "ldap2.example.org"

    # A share on the network, of the add-on's type with share servers: Manila makes a
    # share server with a port on the subnet, and records the network's details.
    updated["resources"]["share"] = {
        "type": "OS::Manila::Share",
        "properties": {
            "share_protocol": "NFS",
            "size": 1,
            "share_type": SHARE_SERVERS_TYPE,
            "share_network": {"get_resource": "share_network"},
        },
    }
    stack = service.update_stack(stack_name, from_data(updated))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    share = manila.get_share(physical_ids(service, stack_name)["share"])
    assert (share.status, share.share_network_id) == ("available", ids["share_network"])
    answer = manila.get(f"/share-networks/{ids['share_network']}")
    answer.raise_for_status()
    assert answer.json()["share_network"]["cidr"] == "10.77.0.0/24"
    # The network's attributes, read when the share network is next updated.
    updated["resources"]["share_network"]["properties"]["description"] = "served"
    stack = service.update_stack(stack_name, from_data(updated))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    values = outputs(service, stack_name)
    assert (values["cidr"], values["ip_version"]) == ("10.77.0.0/24", 4)
    # Manila's policy shows the network's type and segmentation id to administrators only.
    assert (values["network_type"], values["segmentation_id"]) == (None, None)

    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_COMPLETE", checked.status_reason

    deleted = service.delete_stack(stack_name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert gone(lambda: manila.get_share(share.id))
    assert gone(lambda: manila.get_share_network(ids["share_network"]))
    left = {found["id"] for found in security_services(demo)}
    assert not left & {ids["ldap"], ids["kerberos"]}


def _refusal(service, template: dict) -> str:
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(f"invalid-{secrets.token_hex(3)}", from_data(template))
    return str(raised.value)


def test_manila_validation_errors_name_their_place(demo_stacks, demo):
    service, _ = demo_stacks
    suffix = secrets.token_hex(3)
    net = demo.network.create_network(name=f"v-net-{suffix}")
    other = demo.network.create_network(name=f"v-other-{suffix}")
    try:
        subnet = demo.network.create_subnet(
            network_id=other.id, ip_version=4, cidr="10.78.0.0/24", name=f"v-sub-{suffix}"
        )

        def share_network(**properties: object) -> dict:
            return {
                "heat_template_version": HOT,
                "resources": {"sn": {"type": "OS::Manila::ShareNetwork", "properties": properties}},
            }

        refused = _refusal(service, share_network(neutron_network=net.id))
        assert "neutron_network specified without neutron_subnet." in refused
        assert "resources.sn.properties.neutron_network" in refused

        refused = _refusal(service, share_network(neutron_network=net.id, neutron_subnet=subnet.id))
        assert "Provided neutron_subnet does not belong to provided neutron_network." in refused
        assert "resources.sn.properties.neutron_subnet" in refused

        # The manila.* constraints ask the real Manila.
        refused = _refusal(
            service,
            {
                "heat_template_version": HOT,
                "resources": {
                    "share": {
                        "type": "OS::Manila::Share",
                        "properties": {
                            "share_protocol": "NFS",
                            "size": 1,
                            "share_type": f"nowhere-{suffix}",
                            "share_network": f"nowhere-net-{suffix}",
                            "snapshot": f"nowhere-snap-{suffix}",
                        },
                    }
                },
            },
        )
        assert f"The share type (nowhere-{suffix}) could not be found." in refused
        assert "resources.share.properties.share_type" in refused
        assert f"The share network (nowhere-net-{suffix}) could not be found." in refused
        assert f"The share snapshot (nowhere-snap-{suffix}) could not be found." in refused
        assert "resources.share.properties.snapshot" in refused

        refused = _refusal(
            service,
            {
                "heat_template_version": HOT,
                "resources": {
                    "share": {
                        "type": "OS::Manila::Share",
                        "properties": {
                            "share_protocol": "NFS",
                            "size": 1,
                            "access_rules": [{"access_to": "x", "access_type": "mac"}],
                        },
                    }
                },
            },
        )
        assert "resources.share.properties.access_rules[0].access_type" in refused
        assert "mac" in refused
    finally:
        demo.network.delete_network(net.id)
        demo.network.delete_network(other.id)


def has_stack(url: str, name: str) -> bool:
    from stoker.service import Service
    from stoker.settings import Settings

    service = Service(Settings(database_url=url))
    try:
        return service.store.find_stack(name) is not None
    finally:
        service.close()


def test_manila_share_crash_after_every_commit_of_create_leaves_nothing(
    manila_service, demo, tmp_path
):
    """The ``stoker`` command SIGKILLed after each store commit of a create in turn: a share,
    share network or security service Manila made before its id was recorded is found again
    by its physical name (``find_created``) when the next command resumes, so the final
    delete leaves none."""
    cloud = manila_service.cloud
    template = tmp_path / "share.yaml"
    template.write_text(
        json.dumps(
            {
                "heat_template_version": HOT,
                "resources": {
                    "ldap": {
                        "type": "OS::Manila::SecurityService",
                        "properties": {"type": "ldap", "server": "ldap.example.org"},
                    },
                    "share_network": {
                        "type": "OS::Manila::ShareNetwork",
                        "properties": {"security_services": [{"get_resource": "ldap"}]},
                    },
                    "share": {
                        "type": "OS::Manila::Share",
                        "properties": {
                            "share_protocol": "NFS",
                            "size": 1,
                            "access_rules": [{"access_to": "192.0.2.1", "access_type": "ip"}],
                        },
                    },
                },
            }
        )
    )
    url = f"sqlite:///{tmp_path / 'stoker.sqlite'}"
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("OS_", "STOKER_"))
    }
    environment.update(OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml), STOKER_DATABASE_URL=url)

    def run(*arguments: str, fault: int = 0) -> subprocess.CompletedProcess:
        env = (
            dict(environment, STOKER_FAULT_KILL_AFTER_COMMITS=str(fault)) if fault else environment
        )
        return subprocess.run(
            [STOKER, "--os-cloud", cloud.cloud("demo"), "stack", *arguments],
            env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip

    manila = demo.shared_file_system
    prefix = f"crash-share-{secrets.token_hex(2)}"

    def made() -> list[str]:
        return (
            [share.name for share in manila.shares() if share.name.startswith(prefix)]
            + [found.name for found in manila.share_networks() if (found.name or "").startswith(prefix)]
            + [found["name"] for found in security_services(demo) if (found["name"] or "").startswith(prefix)]
        )  # fmt: skip

    names, completed = [], False
    for commits in range(1, 25):
        name = f"{prefix}-{commits}"
        completed = (
            run("create", name, "-t", str(template), "--wait", fault=commits).returncode == 0
        )
        names.append(name)
        if completed:
            break
    assert completed, "the create never ran to its end without a crash"
    assert made(), "no create got as far as Manila"
    # One command resumes what each crash interrupted and deletes every stack.
    existing = [name for name in names if has_stack(url, name)]
    deleted = run("delete", *existing, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    deadline = time.monotonic() + 60
    while made() and time.monotonic() < deadline:
        time.sleep(1)
    assert made() == []
