"""AWS::S3::Bucket against the real Swift of the test cloud (``tests/cloud/addons/swift.py``):
the container Heat makes for a bucket, with the read and write ACLs each AccessControl
gives, the tags and website configuration as container metadata, the DomainName and
WebsiteURL attributes, replacement on any change (Heat updates nothing in place), delete
refused for a bucket holding objects (Heat's message) and tolerating one already gone,
and the create cut by a SIGKILL after each store commit leaving nothing in Swift.
openstacksdk, as the demo project's member, is the witness."""

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
from tests.support.stacks import from_data

STOKER = str(Path(sys.executable).with_name("stoker"))


@pytest.fixture
def demo_cloud(openstack_cloud, swift_service):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("demo")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture
def stacks(make_service, demo_cloud):
    service = make_service()
    names: list[str] = []
    yield service, names
    for name in names:
        if service.store.find_stack(name) is not None:
            try:
                service.delete_stack(name)
            except StokerError:
                pass


def bucket_template(**properties: object) -> dict:
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {"bucket": {"Type": "AWS::S3::Bucket", "Properties": properties}},
        "Outputs": {
            "domain": {"Value": {"Fn::GetAtt": ["bucket", "DomainName"]}},
            "website": {"Value": {"Fn::GetAtt": ["bucket", "WebsiteURL"]}},
            "reference": {"Value": {"Ref": "bucket"}},
        },
    }


def bucket_name(service, stack_name: str) -> str:
    (record,) = service.list_resources(stack_name)
    return record.physical_resource_id


def outputs(service, stack_name: str) -> dict:
    return {
        output["output_key"]: output.get("output_value") for output in service.outputs(stack_name)
    }


@pytest.mark.parametrize(
    ("access", "read", "write"),
    [
        ("PublicRead", ".r:*", "demo:demo"),
        ("AuthenticatedRead", "demo", "demo:demo"),
        (None, "demo:demo", "demo:demo"),
    ],
)
def test_swift_s3_bucket_acls_as_heat_sets_them(demo_cloud, stacks, access, read, write):
    service, names = stacks
    stack_name = f"bucket-{secrets.token_hex(3)}"
    names.append(stack_name)
    properties = {"AccessControl": access} if access else {}
    stack = service.create_stack(stack_name, from_data(bucket_template(**properties)))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    name = bucket_name(service, stack_name)
    container = demo_cloud.connect("demo").object_store.get_container_metadata(name)
    assert (container.read_ACL, container.write_ACL) == (read, write)
    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"


def test_swift_s3_bucket_public_read_write_is_refused_by_swift_as_for_heat(demo_cloud, stacks):
    """Heat gives PublicReadWrite the write ACL ``.r:*``, which Swift refuses (referrers
    may only read): the create fails with Swift's words, and nothing is left."""
    service, names = stacks
    store = demo_cloud.connect("demo").object_store
    stack_name = f"bucket-{secrets.token_hex(3)}"
    names.append(stack_name)
    stack = service.create_stack(
        stack_name, from_data(bucket_template(AccessControl="PublicReadWrite"))
    )
    assert stack.state == "CREATE_FAILED"
    assert "Referrers not allowed in write ACL: '.r:*'" in stack.status_reason
    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert not [c.name for c in store.containers() if c.name.startswith(f"{stack_name}-")]


def test_swift_s3_bucket_tags_website_attributes_replace_and_delete(
    demo_cloud, swift_service, stacks
):
    service, names = stacks
    store = demo_cloud.connect("demo").object_store
    stack_name = f"site-{secrets.token_hex(3)}"
    names.append(stack_name)
    properties = {
        "AccessControl": "PublicRead",
        "WebsiteConfiguration": {"IndexDocument": "index.html", "ErrorDocument": "error.html"},
        "Tags": [{"Key": "team", "Value": "web"}],
    }
    stack = service.create_stack(stack_name, from_data(bucket_template(**properties)))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    name = bucket_name(service, stack_name)
    assert name.startswith(f"{stack_name}-bucket-")
    metadata = store.get_container_metadata(name).metadata
    assert metadata == {"s3-tag-team": "web", "web-index": "index.html", "web-error": "error.html"}
    shown = outputs(service, stack_name)
    account_url = swift_service.account_url(demo_cloud.connect("demo").current_project_id)
    assert shown == {"domain": "127.0.0.1", "website": f"{account_url}/{name}", "reference": name}

    # Any change replaces the bucket: a new container, the old one deleted.
    properties["Tags"] = [{"Key": "team", "Value": "ops"}]
    stack = service.update_stack(stack_name, from_data(bucket_template(**properties)))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    replacement = bucket_name(service, stack_name)
    assert replacement != name
    containers = {container.name for container in store.containers()}
    assert replacement in containers and name not in containers
    assert store.get_container_metadata(replacement).metadata["s3-tag-team"] == "ops"

    # A bucket with objects is not deleted (Heat's message); emptied, it is.
    store.create_object(replacement, "index.html", data=b"<html/>")
    refused = service.delete_stack(stack_name)
    assert refused.state == "DELETE_FAILED"
    assert f"The bucket you tried to delete is not empty ({replacement})." in refused.status_reason
    store.delete_object("index.html", container=replacement)
    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert replacement not in {container.name for container in store.containers()}


def test_swift_s3_bucket_check_and_delete_of_a_bucket_already_gone(demo_cloud, stacks):
    service, names = stacks
    store = demo_cloud.connect("demo").object_store
    stack_name = f"gone-{secrets.token_hex(3)}"
    names.append(stack_name)
    assert service.create_stack(stack_name, from_data(bucket_template())).state == "CREATE_COMPLETE"
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"
    store.delete_container(bucket_name(service, stack_name))
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_FAILED"
    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"


def test_swift_s3_bucket_validation_names_the_property(demo_cloud, make_service):
    service = make_service()
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(
            "bad", from_data(bucket_template(AccessControl="Everyone", Tags=[{"Key": "k"}]))
        )
    message = str(raised.value)
    assert "Resources.bucket.Properties.AccessControl" in message and "Everyone" in message
    assert "Value" in message


def test_swift_s3_bucket_crash_after_every_commit_of_create_leaves_nothing(
    openstack_cloud, swift_service, tmp_path
):
    """The ``stoker`` command SIGKILLed after each store commit of a bucket's create in
    turn: whatever Swift has then is known to the stack, and the next command's delete
    leaves nothing in Swift."""
    from stoker.service import Service
    from stoker.settings import Settings

    store = openstack_cloud.connect("demo").object_store
    template = tmp_path / "bucket.yaml"
    template.write_text(json.dumps(bucket_template()))
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

    prefix = f"crash-bucket-{secrets.token_hex(2)}"
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
    deleted = run("delete", *names, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert not [c.name for c in store.containers() if c.name.startswith(f"{prefix}-")]
    assert completed, "the create never ran to its end without a crash"
