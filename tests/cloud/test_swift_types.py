"""OS::Swift::Container against the real Swift of the test cloud (its proxy with
keystoneauth and the account, container and object servers on local files,
``tests/cloud/addons/swift.py``): create with ACLs and metadata, the URL and usage
attributes, replacement (Heat updates nothing in place), check reading the live
container (failing once it is deleted behind the stack's back), delete tolerating a
container already gone, ``PurgeOnDelete`` both ways, validation errors placed at the
property, and the types listed with their schema by the ``stoker`` command. openstacksdk,
as the project's member, is the witness; nothing may be left in Swift."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.sdk.exceptions import StokerError
from stoker.template.errors import TemplateErrors
from tests.support.stacks import from_data, states

STOKER = str(Path(sys.executable).with_name("stoker"))


@pytest.fixture
def demo_cloud(openstack_cloud, swift_service):
    """Stacks act as the demo project's member (Swift's operator role), as a user would."""
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("demo")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture
def stacks(make_service, demo_cloud):
    """A service, and the stacks a test makes deleted at the end whatever happened."""
    service = make_service()
    names: list[str] = []
    yield service, names
    for name in names:
        if service.store.find_stack(name) is not None:
            try:
                service.delete_stack(name)
            except StokerError:
                pass


def physical_ids(service, stack_name: str) -> dict[str, str]:
    return {
        record.name: record.physical_resource_id for record in service.list_resources(stack_name)
    }


def outputs(service, stack_name: str) -> dict:
    return {
        output["output_key"]: output.get("output_value") for output in service.outputs(stack_name)
    }


def container_template(**properties: object) -> dict:
    return {
        "heat_template_version": "2021-04-16",
        "resources": {"box": {"type": "OS::Swift::Container", "properties": properties}},
        "outputs": {
            "domain": {"value": {"get_attr": ["box", "DomainName"]}},
            "website": {"value": {"get_attr": ["box", "WebsiteURL"]}},
            "root": {"value": {"get_attr": ["box", "RootURL"]}},
            "show": {"value": {"get_attr": ["box", "show"]}},
            "reference": {"value": {"get_resource": "box"}},
        },
    }


def container_names(store) -> set[str]:
    return {container.name for container in store.containers()}


def test_swift_container_create_attributes_replace_check_delete(demo_cloud, swift_service, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    store = demo_cloud.connect("demo").object_store
    stack_name = f"box-{suffix}"
    names.append(stack_name)
    meta_key = f"stoker-{suffix}"

    stack = service.create_stack(
        stack_name,
        from_data(
            container_template(
                **{
                    "X-Container-Read": ".r:*",
                    "X-Container-Meta": {"Purpose": "web", "Owner": "ops"},
                    "X-Account-Meta": {meta_key: "yes"},
                }
            )
        ),
    )

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    name = physical_ids(service, stack_name)["box"]
    assert name.startswith(f"{stack_name}-box-")
    container = store.get_container_metadata(name)
    assert container.read_ACL == ".r:*"
    assert container.metadata == {"purpose": "web", "owner": "ops"}
    assert store.get_account_metadata().metadata.get(meta_key) == "yes"
    # Two objects put by the project itself: the usage attributes read the live container.
    store.create_object(name, "a.txt", data=b"hello")
    store.create_object(name, "b.txt", data=b"world!")
    shown = outputs(service, stack_name)
    account_url = swift_service.account_url(demo_cloud.connect("demo").current_project_id)
    assert shown["root"] == account_url
    assert shown["website"] == f"{account_url}/{name}"
    assert shown["domain"] == "127.0.0.1"
    assert shown["reference"] == name
    assert shown["show"]["x-container-read"] == ".r:*"
    assert shown["show"]["x-container-object-count"] == "2"
    # Attributes no output refers to (so not stored with the action, as Heat caches
    # them) read the live container.
    live = service.resource_attributes(service.get_stack(stack_name), "box")
    assert (live["ObjectCount"], live["BytesUsed"]) == (2, 11)
    assert live["HeadContainer"]["x-container-object-count"] == "2"
    assert live["HeadContainer"]["x-container-meta-purpose"] == "web"
    store.delete_object("a.txt", container=name)
    store.delete_object("b.txt", container=name)
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # Heat updates nothing in place: new metadata is a new container, the old one is gone.
    stack = service.update_stack(
        stack_name, from_data(container_template(**{"X-Container-Meta": {"Purpose": "logs"}}))
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    replacement = physical_ids(service, stack_name)["box"]
    assert replacement != name
    assert name not in container_names(store)
    assert store.get_container_metadata(replacement).metadata == {"purpose": "logs"}

    # Check reads the live container: deleted behind the stack's back, the check fails...
    store.delete_container(replacement)
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert states(service, stack_name)["box"] == "CHECK_FAILED"
    # ...and deleting the stack tolerates the container already gone.
    deleted = service.delete_stack(stack_name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    store.delete_account_metadata([meta_key])
    assert not {n for n in container_names(store) if n.startswith(stack_name)}


def test_swift_container_named_replacement_keeps_the_container(demo_cloud, stacks):
    """A named container replaced (new ACL) is the same Swift container: the replaced
    resource's delete leaves it to its replacement instead of deleting it."""
    service, names = stacks
    suffix = secrets.token_hex(3)
    store = demo_cloud.connect("demo").object_store
    stack_name, name = f"named-{suffix}", f"stoker-named-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(container_template(name=name)))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["box"] == name

    stack = service.update_stack(
        stack_name, from_data(container_template(name=name, **{"X-Container-Write": "demo:demo"}))
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["box"] == name
    assert store.get_container_metadata(name).write_ACL == "demo:demo"

    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert name not in container_names(store)


def test_swift_container_purge_on_delete(demo_cloud, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    store = demo_cloud.connect("demo").object_store

    # Without PurgeOnDelete a container with objects is not deleted (Heat's message).
    kept = f"kept-{suffix}"
    names.append(kept)
    assert service.create_stack(kept, from_data(container_template())).state == "CREATE_COMPLETE"
    kept_name = physical_ids(service, kept)["box"]
    store.create_object(kept_name, "left.txt", data=b"x")
    refused = service.delete_stack(kept)
    assert refused.state == "DELETE_FAILED"
    assert (
        f"Deleting non-empty container ({kept_name}) when PurgeOnDelete is False"
        in refused.status_reason
    )
    assert kept_name in container_names(store)
    store.delete_object("left.txt", container=kept_name)
    assert service.delete_stack(kept).state == "DELETE_COMPLETE"
    assert kept_name not in container_names(store)

    # With it, every object goes first (more than one poll's batch), then the container.
    purged = f"purged-{suffix}"
    names.append(purged)
    assert (
        service.create_stack(purged, from_data(container_template(PurgeOnDelete=True))).state
        == "CREATE_COMPLETE"
    )
    purged_name = physical_ids(service, purged)["box"]
    for number in range(60):
        store.create_object(purged_name, f"object-{number}", data=b"y")
    deleted = service.delete_stack(purged)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert purged_name not in container_names(store)


def test_swift_container_validation_names_the_property(demo_cloud, make_service):
    service = make_service()
    bad = container_template(PurgeOnDelete="sometimes", **{"X-Container-Meta": "not a map"})
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(f"invalid-{secrets.token_hex(3)}", from_data(bad))
    text = str(raised.value)
    assert "resources.box.properties.PurgeOnDelete" in text
    assert "resources.box.properties.X-Container-Meta" in text
    # A signal's count and timeout out of Heat's ranges are named too.
    signal = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "handle": {"type": "OS::Heat::SwiftSignalHandle"},
            "wait": {
                "type": "OS::Heat::SwiftSignal",
                "properties": {"handle": {"get_resource": "handle"}, "count": 1001, "timeout": 0},
            },
        },
    }
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(f"invalid-{secrets.token_hex(3)}", from_data(signal))
    text = str(raised.value)
    assert "resources.wait.properties.count" in text
    assert "resources.wait.properties.timeout" in text


def _stoker(*arguments: str) -> subprocess.CompletedProcess:
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("OS_", "STOKER_"))
    }
    return subprocess.run(
        [STOKER, *arguments],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_swift_types_listed_and_shown_by_the_cli(tmp_path):
    listed = _stoker("resource", "type", "list", "-f", "json")
    assert listed.returncode == 0, listed.stderr
    types = {
        row["Resource Type"] if isinstance(row, dict) else row for row in json.loads(listed.stdout)
    }
    assert {"OS::Swift::Container", "OS::Heat::SwiftSignal", "OS::Heat::SwiftSignalHandle"} <= types

    shown = _stoker("resource", "type", "show", "OS::Swift::Container", "-f", "json")
    assert shown.returncode == 0, shown.stderr
    schema = json.loads(shown.stdout)
    assert schema["properties"]["PurgeOnDelete"]["default"] is False
    assert schema["properties"]["PurgeOnDelete"]["update_allowed"] is False
    assert schema["properties"]["X-Container-Meta"]["type"] == "map"
    assert set(schema["attributes"]) >= {
        "DomainName",
        "WebsiteURL",
        "RootURL",
        "ObjectCount",
        "BytesUsed",
        "HeadContainer",
        "show",
    }

    shown = _stoker("resource", "type", "show", "OS::Heat::SwiftSignal", "-f", "json")
    assert shown.returncode == 0, shown.stderr
    schema = json.loads(shown.stdout)
    assert schema["properties"]["count"]["default"] == 1
    assert [c["range"] for c in schema["properties"]["count"]["constraints"]] == [
        {"min": 1, "max": 1000}
    ]
    assert schema["properties"]["timeout"]["required"] is True
    assert schema["support_status"]["version"] == "2014.2"


def test_swift_container_crash_after_every_commit_of_create_leaves_nothing(
    openstack_cloud, swift_service, tmp_path
):
    """The ``stoker`` command SIGKILLed after each store commit of a container's create in
    turn: whatever Swift has then is known to the stack (its name was recorded before the
    container was made), and the next command's delete leaves nothing in Swift."""
    from stoker.service import Service
    from stoker.settings import Settings

    store = openstack_cloud.connect("demo").object_store
    template = tmp_path / "box.yaml"
    template.write_text(json.dumps(container_template(PurgeOnDelete=True)))
    url = f"sqlite:///{tmp_path / 'stoker.sqlite'}"
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("OS_", "STOKER_"))
    }
    environment.update(
        OS_CLIENT_CONFIG_FILE=str(openstack_cloud.clouds_yaml), STOKER_DATABASE_URL=url
    )

    def run(*arguments: str, fault: int = 0) -> subprocess.CompletedProcess:
        env = (
            dict(environment, STOKER_FAULT_KILL_AFTER_COMMITS=str(fault)) if fault else environment
        )
        return subprocess.run(
            [STOKER, "--os-cloud", openstack_cloud.cloud("demo"), "stack", *arguments],
            env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip

    def recorded(name: str) -> set[str] | None:
        """The physical ids the stack knows, None when it has no stack row."""
        service = Service(Settings(database_url=url))
        try:
            if service.store.find_stack(name) is None:
                return None
            return {
                row.physical_resource_id
                for row in service.list_resources(name)
                if row.physical_resource_id
            }
        finally:
            service.close()

    prefix = f"crash-box-{secrets.token_hex(2)}"
    names, completed = [], False
    for commits in range(1, 15):
        name = f"{prefix}-{commits}"
        completed = (
            run("create", name, "-t", str(template), "--wait", fault=commits).returncode == 0
        )
        in_swift = {c.name for c in store.containers() if c.name.startswith(f"{name}-")}
        known = recorded(name)
        assert in_swift <= (known or set()), f"orphaned after commit {commits}: {in_swift}"
        if known is not None:
            names.append(name)
        if completed:
            break
    # One command resumes what each crash interrupted and deletes every stack.
    deleted = run("delete", *names, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert not [c.name for c in store.containers() if c.name.startswith(f"{prefix}-")]
    assert completed, "the create never ran to its end without a crash"
