"""The Keystone types as users meet them: ``stoker resource type list`` names every one;
openstack/heat-templates' own Keystone sample (``hot/keystone/keystone.yaml``, then its
``keystone_updated.yaml``, copied unchanged into ``heat_templates/keystone/``) is created, updated
and deleted with the ``stoker`` command on the test cloud's real Keystone as its admin;
and a project member (the cloud's ``demo`` user, with a real Keystone token) is refused
OS::Keystone::Project by ``stoker serve --auth-mode keystone`` with Heat's message, while
the admin may use it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cloud import identity
from tests.cloud.test_keystone_auth import call, deployment  # noqa: F401 - deployment is a fixture

STOKER = str(Path(sys.executable).with_name("stoker"))
TEMPLATES = Path(__file__).resolve().parent / "heat_templates" / "keystone"
KEYSTONE_TYPES = {
    f"OS::Keystone::{name}"
    for name in (
        "Project", "Domain", "Role", "User", "Group", "GroupRoleAssignment", "UserRoleAssignment", "Region", "Service", "Endpoint",
    )
}  # fmt: skip
# The names hot/keystone/keystone.yaml and keystone_updated.yaml give.
SAMPLE_NAMES = {
    "role": ("test_role_a", "test_role_a_updated", "test_role_b"),
    "project": ("test_project_a", "test_project_a_updated", "test_project_b"),
    "group": ("test_group_a", "test_group_a_updated", "test_group_b"),
    "user": ("test_user_a", "test_user_a_updated"),
}


def stoker(environment: dict[str, str], *arguments: str) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [STOKER, *arguments],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_keystone_resource_types_are_listed(tmp_path):
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("OS_", "STOKER_"))
    }
    environment["STOKER_DATABASE_URL"] = f"sqlite:///{tmp_path / 'stoker.sqlite'}"

    listed = stoker(environment, "resource", "type", "list", "-f", "json")

    assert listed.returncode == 0, listed.stderr
    names = {row["Resource Type"] for row in json.loads(listed.stdout)}
    assert names >= KEYSTONE_TYPES


def _remove_sample_objects(keystone) -> None:
    """What an earlier, interrupted run of the sample may have left (its names are fixed)."""
    for kind, names in SAMPLE_NAMES.items():
        for name in names:
            for found in list(getattr(keystone, f"{kind}s")(name=name)):
                getattr(keystone, f"delete_{kind}")(found, ignore_missing=True)


def test_heat_templates_keystone_sample_creates_updates_and_deletes(openstack_cloud, tmp_path):
    keystone = openstack_cloud.connect("admin").identity
    _remove_sample_objects(keystone)
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("OS_", "STOKER_"))
    }
    environment.update(
        OS_CLIENT_CONFIG_FILE=str(openstack_cloud.clouds_yaml),
        STOKER_DATABASE_URL=f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        STOKER_NO_RECOVERY="1",
    )
    cloud = ["--os-cloud", openstack_cloud.cloud("admin")]
    try:
        created = stoker(
            environment,
            *cloud,
            "stack",
            "create",
            "sample",
            "-t",
            str(TEMPLATES / "keystone.yaml"),
            "--wait",
            "-f",
            "json",
        )

        assert created.returncode == 0, created.stderr
        shown = json.loads(
            stoker(environment, *cloud, "stack", "show", "sample", "-f", "json").stdout
        )
        assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
        ids = {output["output_key"]: output["output_value"] for output in shown["outputs"]}
        user = keystone.get_user(ids["test_user_a_id"])
        assert (user.name, user.email, user.default_project_id) == (
            "test_user_a",
            "abc@xyz.com",
            ids["test_project_a_id"],
        )
        assert [group.id for group in keystone.user_groups(user)] == [ids["test_group_a_id"]]
        role, project = ids["test_role_a_id"], ids["test_project_a_id"]
        for query in ({"user_id": user.id}, {"group_id": ids["test_group_a_id"]}):
            found = {
                (
                    a.role["id"],
                    (a.scope.get("project") or {}).get("id"),
                    (a.scope.get("domain") or {}).get("id"),
                )
                for a in keystone.role_assignments(**query)
            }
            assert found == {(role, project, None), (role, None, "default")}, query

        updated = stoker(
            environment,
            *cloud,
            "stack",
            "update",
            "sample",
            "-t",
            str(TEMPLATES / "keystone_updated.yaml"),
            "--wait",
        )

        assert updated.returncode == 0, updated.stderr
        shown = json.loads(
            stoker(environment, *cloud, "stack", "show", "sample", "-f", "json").stdout
        )
        assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]
        after = {output["output_key"]: output["output_value"] for output in shown["outputs"]}
        # Every resource was updated in place: the same objects, renamed.
        assert {key: after[key] for key in ids} == ids
        user = keystone.get_user(ids["test_user_a_id"])
        assert (user.name, user.is_enabled, user.email, user.default_project_id) == (
            "test_user_a_updated",
            False,
            "xyz@abc.com",
            after["test_project_b_id"],
        )
        assert [group.id for group in keystone.user_groups(user)] == [after["test_group_b_id"]]
        assert keystone.get_project(project).name == "test_project_a_updated"
        role_b = after["test_role_b_id"]
        found = {
            (
                a.role["id"],
                (a.scope.get("project") or {}).get("id"),
                (a.scope.get("domain") or {}).get("id"),
            )
            for a in keystone.role_assignments(user_id=user.id)
        }
        assert found == {(role_b, project, None), (role_b, None, "default")}

        deleted = stoker(environment, *cloud, "stack", "delete", "sample", "--yes", "--wait")

        assert deleted.returncode == 0, deleted.stderr
        assert keystone.find_user(user.id) is None
        for key, identifier in after.items():
            finder = getattr(keystone, "find_" + key.split("_")[1])
            assert finder(identifier) is None, key
    finally:
        _remove_sample_objects(keystone)


VALIDATE_PROJECT = """
heat_template_version: 2021-04-16
resources:
  project:
    type: OS::Keystone::Project
"""


def test_keystone_project_refused_to_a_project_member(openstack_cloud, deployment):  # noqa: F811
    demo = identity.Keystone(
        openstack_cloud.keystone_url,
        username="demo",
        password=identity.DEMO_PASSWORD,
        project="demo",
    )
    body = {"stack_name": "not-for-members", "template": VALIDATE_PROJECT}

    status, answer, _ = call(
        deployment, "POST", "/stacks", demo.token, body, project_id=demo.project_id
    )

    assert (status, answer["error"]["type"], answer["error"]["message"]) == (
        403,
        "Forbidden",
        "You are not authorized to use OS::Keystone::Project.",
    ), answer
    status, answer, _ = call(
        deployment, "GET", "/resource_types", demo.token, project_id=demo.project_id
    )
    assert status == 200 and not KEYSTONE_TYPES & set(answer["resource_types"]), answer
    assert (
        call(
            deployment,
            "GET",
            "/resource_types/OS::Keystone::User",
            demo.token,
            project_id=demo.project_id,
        )[0]
        == 403
    )
    # The cloud's admin may: the template validates (its types are allowed).
    admin = deployment.users["admin"]
    status, answer, _ = call(
        deployment,
        "POST",
        "/validate",
        admin.token,
        {"template": VALIDATE_PROJECT},
        project_id=admin.project_id,
    )
    assert status == 200, answer
    status, answer, _ = call(
        deployment, "GET", "/resource_types", admin.token, project_id=admin.project_id
    )
    assert set(answer["resource_types"]) >= KEYSTONE_TYPES, answer
