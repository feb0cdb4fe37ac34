"""Crash safety of the Keystone types on the real Keystone: the ``stoker`` command is
SIGKILLed right after each store commit of a create in turn (``STOKER_FAULT_KILL_AFTER_COMMITS``),
then the next command finishes the work (a retry of the create by an update with the same
template, or a delete), and Keystone is left with nothing the stack does not know about:
no project, user, group or role named for the stack, no role left granted."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import yaml

STOKER = str(Path(sys.executable).with_name("stoker"))
WAIT_S = 300
# No names given: each object gets the physical resource name, which is how the command
# after a crash finds an object whose id was never recorded (``find_created``).
TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "project": {"type": "OS::Keystone::Project"},
        "role": {"type": "OS::Keystone::Role"},
        "group": {
            "type": "OS::Keystone::Group",
            "properties": {
                "roles": [
                    {"role": {"get_resource": "role"}, "project": {"get_resource": "project"}}
                ]
            },
        },
        "user": {
            "type": "OS::Keystone::User",
            "properties": {
                "password": "crash-secret",
                "groups": [{"get_resource": "group"}],
                "roles": [{"role": {"get_resource": "role"}, "domain": "default"}],
            },
        },
        "grant": {
            "type": "OS::Keystone::UserRoleAssignment",
            "properties": {
                "user": {"get_resource": "user"},
                "roles": [
                    {"role": {"get_resource": "role"}, "project": {"get_resource": "project"}}
                ],
            },
        },
    },
}


class Commands:
    """The stoker command on one store, as the cloud's admin."""

    def __init__(self, cloud, tmp_path: Path):
        self.template = tmp_path / "keystone.yaml"
        self.template.write_text(yaml.safe_dump(TEMPLATE))
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


def left_in_keystone(keystone, stack_name: str) -> dict[str, list[str]]:
    prefix = f"{stack_name}-"
    return {
        kind: [
            item.name
            for item in getattr(keystone, f"{kind}s")()
            if (item.name or "").startswith(prefix)
        ]
        for kind in ("project", "user", "group", "role")
    }


def test_keystone_create_killed_at_commits_across_the_create_then_finished_leaves_nothing(
    openstack_cloud, tmp_path
):
    keystone = openstack_cloud.connect("admin").identity
    commands = Commands(openstack_cloud, tmp_path)
    suffix = secrets.token_hex(3)
    nothing = {"project": [], "user": [], "group": [], "role": []}
    crashes = 0
    # A point every fifth commit until the create completes (about 25 commits): each phase
    # of the stack (projects, users, groups, roles, assignments) is cut at least once, and
    # the test stays within a few minutes on a busy machine.
    for commits in range(3, 80, 5):
        name = f"kc{commits}-{suffix}"
        created = commands.run(
            "create", name, "-t", str(commands.template), "--wait", kill_after=commits
        )
        if created.returncode == 0:
            break  # the create ran to its end before that many commits
        assert created.returncode == -9, created.stderr
        crashes += 1
        if commands.run("show", name).returncode != 0:
            # Killed before the stack was recorded: nothing was asked of Keystone.
            assert left_in_keystone(keystone, name) == nothing
            continue
        if crashes % 2:
            # The next command resumes the create, then the update completes the stack.
            retried = commands.run("update", name, "-t", str(commands.template), "--wait")
            assert retried.returncode == 0, retried.stderr
            project = next(
                item
                for item in keystone.projects()
                if (item.name or "").startswith(f"{name}-project-")
            )
            user = next(
                item for item in keystone.users() if (item.name or "").startswith(f"{name}-user-")
            )
            granted = {
                (a.role["id"], (a.scope.get("project") or {}).get("id"))
                for a in keystone.role_assignments(user_id=user.id)
            }
            assert any(project_id == project.id for _, project_id in granted), granted
        deleted = commands.run("delete", name, "--yes", "--wait")
        assert deleted.returncode == 0, deleted.stderr
        assert left_in_keystone(keystone, name) == nothing, (commits, created.stderr)
    else:
        raise AssertionError("the create never completed")
    assert crashes >= 4  # the resources' IN_PROGRESS, id and COMPLETE commits were crash points
    deleted = commands.run("delete", name, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert left_in_keystone(keystone, name) == nothing
