"""OS::Ironic::Port against the real Ironic the ``ironic_service`` add-on starts (API and
conductor, ``fake-hardware`` nodes): create on a node named by name, the attributes,
updates in place (address, extra, PXE, into a port group named by name, properties taken
out), delete tolerating a port already gone, Heat's
``ironic.node`` and ``ironic.portgroup`` constraints, and a create the ``stoker`` command
is killed in the middle of, finished by the next command without a second port or an
orphan (``find_created``: Ironic keeps a port's address unique). openstacksdk's baremetal
proxy, as the cloud's admin, is the witness; stoker acts as the same user (Ironic's
default policy lets a project's admin manage nodes and ports).

Not tested: moving a port to another node (``node`` updated). Ironic 39 fails that PATCH
itself with a 500 (its conductor's save inserts the new node again: "Duplicate entry ...
for key 'uniq_nodes0uuid'", with SQLAlchemy 2.0 as with the 2.1 the cloud pins, and for a
bare PATCH with curl); stoker sends the same JSON patch Heat does.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.template.errors import TemplateErrors
from tests.support.stacks import from_data

HOT = "2021-04-16"
STOKER = str(Path(sys.executable).with_name("stoker"))
WAIT_S = 300


@pytest.fixture
def baremetal(ironic_service, openstack_cloud):
    """The admin's openstacksdk baremetal proxy; stoker acts as the same user."""
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud.connect("admin").baremetal
    set_cloud_source(None)


@pytest.fixture
def nodes(baremetal):
    """Makes fake-hardware nodes (``nodes(n)``), deleted with their ports at the end."""
    made = []

    def make(count: int = 1) -> list:
        for _ in range(count):
            made.append(
                baremetal.create_node(
                    name=f"stoker-node-{secrets.token_hex(3)}", driver="fake-hardware"
                )
            )
        return made[-count:]

    yield make
    for node in made:
        for port in baremetal.ports(node_id=node.id):
            baremetal.delete_port(port, ignore_missing=True)
        for group in baremetal.port_groups(node=node.id):
            baremetal.delete_port_group(group, ignore_missing=True)
        baremetal.delete_node(node, ignore_missing=True)


@pytest.fixture
def stacks(make_service, baremetal):
    service = make_service()
    names: list[str] = []
    yield service, names
    for name in names:
        if service.store.find_stack(name) is not None:
            service.delete_stack(name)


def mac() -> str:
    return "52:54:00:" + ":".join(secrets.token_hex(1) for _ in range(3))


def port_template(**properties: object) -> dict:
    return {
        "heat_template_version": HOT,
        "resources": {"port": {"type": "OS::Ironic::Port", "properties": properties}},
        "outputs": {
            name: {"value": {"get_attr": ["port", name]}}
            for name in ("address", "node_uuid", "portgroup_uuid", "extra", "pxe_enabled",
                         "physical_network", "local_link_connection", "is_smartnic")
        }
        | {"shown": {"value": {"get_attr": ["port", "show", "address"]}}},
    }  # fmt: skip


def port_id(service, stack_name: str) -> str:
    return next(
        record.physical_resource_id
        for record in service.list_resources(stack_name)
        if record.name == "port"
    )


def outputs(service, stack_name: str) -> dict:
    return {item["output_key"]: item.get("output_value") for item in service.outputs(stack_name)}


def test_ironic_port_create_attributes_update_in_place_and_delete(stacks, baremetal, nodes):
    service, names = stacks
    (first,) = nodes(1)
    address = mac()
    link = {"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Ethernet3/1", "switch_info": "leaf-1"}
    stack_name = f"ironic-{secrets.token_hex(3)}"
    names.append(stack_name)

    stack = service.create_stack(
        stack_name,
        from_data(
            port_template(
                node=first.name, address=address, extra={"rack": "r1"}, pxe_enabled=False,
                physical_network="physnet1", local_link_connection=link,
            )
        ),
    )  # fmt: skip

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    created_id = port_id(service, stack_name)
    port = baremetal.get_port(created_id)
    assert (port.address, port.node_id, port.extra, port.is_pxe_enabled) == (
        address,
        first.id,
        {"rack": "r1"},
        False,
    )
    assert (port.physical_network, port.local_link_connection) == ("physnet1", link)
    shown = outputs(service, stack_name)
    assert shown["node_uuid"] == first.id  # the name resolved to the node's UUID
    assert (shown["address"], shown["shown"], shown["extra"]) == (address, address, {"rack": "r1"})
    assert (shown["pxe_enabled"], shown["physical_network"], shown["portgroup_uuid"]) == (
        False,
        "physnet1",
        None,
    )
    assert shown["local_link_connection"] == link
    assert shown["is_smartnic"] is False

    # The address, extra and PXE changed in place; the physical network and the link,
    # taken out of the template, are removed from the port.
    new_address = mac()
    stack = service.update_stack(
        stack_name,
        from_data(
            port_template(
                node=first.name, address=new_address, extra={"rack": "r2", "row": "3"},
                pxe_enabled=True,
            )
        ),
    )  # fmt: skip

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert port_id(service, stack_name) == created_id
    port = baremetal.get_port(created_id)
    assert (port.address, port.node_id) == (new_address, first.id)
    assert (port.extra, port.is_pxe_enabled) == ({"rack": "r2", "row": "3"}, True)
    assert port.physical_network is None
    assert not port.local_link_connection

    # Into a port group of its node (one in ``enroll`` takes connectivity changes), named
    # by name; the node given by UUID now, which resolves to the same node: no change.
    group = baremetal.create_port_group(node_id=first.id, name=f"stoker-pg-{secrets.token_hex(3)}")
    stack = service.update_stack(
        stack_name,
        from_data(
            port_template(
                node=first.id, address=new_address, portgroup=group.name,
                extra={"rack": "r2", "row": "3"}, pxe_enabled=True,
            )
        ),
    )  # fmt: skip

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert port_id(service, stack_name) == created_id
    port = baremetal.get_port(created_id)
    assert (port.address, port.node_id, port.port_group_id) == (new_address, first.id, group.id)
    assert outputs(service, stack_name)["portgroup_uuid"] == group.id

    # Delete tolerates a port already gone.
    baremetal.delete_port(created_id)
    service.delete_stack(stack_name)
    names.remove(stack_name)
    assert baremetal.find_port(created_id, ignore_missing=True) is None


def test_ironic_port_delete_removes_the_port(stacks, baremetal, nodes):
    service, names = stacks
    (node,) = nodes(1)
    stack_name = f"ironic-{secrets.token_hex(3)}"
    names.append(stack_name)
    stack = service.create_stack(stack_name, from_data(port_template(node=node.id, address=mac())))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    created_id = port_id(service, stack_name)

    service.delete_stack(stack_name)
    names.remove(stack_name)

    assert baremetal.find_port(created_id, ignore_missing=True) is None
    assert list(baremetal.ports(node_id=node.id)) == []


def _refusal(service, template: dict) -> str:
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(f"invalid-{secrets.token_hex(3)}", from_data(template))
    return str(raised.value)


def test_ironic_constraints_refuse_a_missing_node_or_port_group(stacks, baremetal, nodes):
    service, _ = stacks
    (node,) = nodes(1)

    message = _refusal(service, port_template(node="no-such-node", address=mac()))
    assert "resources.port.properties.node" in message, message
    assert "The Node (no-such-node) could not be found." in message, message

    message = _refusal(
        service, port_template(node=node.name, address=mac(), portgroup="no-such-group")
    )
    assert "resources.port.properties.portgroup" in message, message
    assert "The PortGroup (no-such-group) could not be found." in message, message

    message = _refusal(service, port_template(node=node.name))
    assert "resources.port.properties" in message and "address" in message, message


def test_ironic_port_with_a_taken_address_fails_with_ironics_words(stacks, baremetal, nodes):
    service, names = stacks
    (node,) = nodes(1)
    address = mac()
    baremetal.create_port(node_id=node.id, address=address)
    stack_name = f"ironic-{secrets.token_hex(3)}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(port_template(node=node.id, address=address)))

    assert stack.state == "CREATE_FAILED"
    assert address in stack.status_reason and "already exists" in stack.status_reason, (
        stack.status_reason
    )


class Commands:
    """The stoker command on one store, as the cloud's admin."""

    def __init__(self, cloud, tmp_path: Path, template: dict):
        self.template = tmp_path / "ironic.yaml"
        self.template.write_text(yaml.safe_dump(template))
        self.environment = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("OS_", "STOKER_"))
        }
        self.environment.update(
            OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml),
            STOKER_DATABASE_URL=f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        )
        self.cloud = ["--os-cloud", cloud.cloud("admin")]

    def run(self, *command: str, kill_after: int | None = None) -> subprocess.CompletedProcess:
        environment = dict(self.environment)
        if kill_after is not None:
            environment["STOKER_FAULT_KILL_AFTER_COMMITS"] = str(kill_after)
        return subprocess.run(
            [STOKER, *self.cloud, "stack", *command],
            env=environment,
            capture_output=True,
            text=True,
            timeout=WAIT_S,
            check=False,
        )


def test_ironic_port_create_killed_at_each_commit_then_finished_leaves_one_port(
    openstack_cloud, baremetal, nodes, tmp_path
):
    (node,) = nodes(1)
    address = mac()
    commands = Commands(openstack_cloud, tmp_path, port_template(node=node.name, address=address))
    crashes = 0
    for commits in range(1, 30):
        name = f"ic{commits}-{secrets.token_hex(3)}"
        created = commands.run(
            "create", name, "-t", str(commands.template), "--wait", kill_after=commits
        )
        if created.returncode == 0:
            break  # the create ran to its end before that many commits
        assert created.returncode == -9, created.stderr
        crashes += 1
        if commands.run("show", name).returncode != 0:
            # Killed before the stack was recorded: nothing was asked of Ironic.
            assert list(baremetal.ports(address=address)) == []
            continue
        # The next command resumes the create: the port a killed create made is found by
        # its address and owned by the stack (a second create would be refused: the
        # address is taken).
        retried = commands.run("update", name, "-t", str(commands.template), "--wait")
        assert retried.returncode == 0, (commits, retried.stdout, retried.stderr)
        assert len(list(baremetal.ports(address=address))) == 1
        deleted = commands.run("delete", name, "--yes", "--wait")
        assert deleted.returncode == 0, deleted.stderr
        assert list(baremetal.ports(address=address)) == [], commits
    else:
        raise AssertionError("the create never completed")
    assert crashes >= 3
    assert len(list(baremetal.ports(address=address))) == 1
    deleted = commands.run("delete", name, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert list(baremetal.ports(address=address)) == []
