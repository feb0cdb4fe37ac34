"""``stack update --dry-run --show-nested`` (issue 27): an update's preview includes the
resources of nested stacks, as Heat's ``PUT .../preview?show_nested=True`` does: those of
a nested stack deleted or replaced are deleted, those of a new one added, and a nested
stack updated in place is previewed as an update of its own. Through the ``stoker``
command (embedded and against ``stoker serve``) and through ``openstack stack update
--dry-run --show-nested`` against ``stoker serve``, unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

from tests.acceptance.conftest import client_environment
from tests.acceptance.test_cli import run, write  # noqa: F401 - run is a fixture

OPENSTACK = str(Path(sys.executable).with_name("openstack"))

CHILD = """\
heat_template_version: 2021-04-16
parameters:
  length: {type: number, default: 8}
resources:
  random:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
  keep: {type: OS::Heat::None}
  grand: {type: grandchild.yaml}
"""

GRANDCHILD = """\
heat_template_version: 2021-04-16
resources:
  deep: {type: OS::Heat::None}
"""

BEFORE = """\
heat_template_version: 2021-04-16
parameters:
  length: {type: number, default: 8}
resources:
  child:
    type: child.yaml
    properties: {length: {get_param: length}}
  gone: {type: child.yaml}
"""

AFTER = BEFORE.replace("  gone: {type: child.yaml}", "  fresh: {type: child.yaml}")


def _entries(changes: dict) -> set[tuple[str, str, str | None]]:
    """(kind, resource name, parent resource) of each change."""
    return {(kind, r["resource_name"], r.get("parent_resource")) for kind, listed in changes.items() for r in listed}


# What the preview of AFTER with length=12 shows, nested stacks included.
NESTED = {
    ("added", "fresh", None),
    ("added", "random", "fresh"),
    ("added", "keep", "fresh"),
    ("added", "grand", "fresh"),
    ("added", "deep", "grand"),
    ("deleted", "gone", None),
    ("deleted", "random", "gone"),
    ("deleted", "keep", "gone"),
    ("deleted", "grand", "gone"),
    ("deleted", "deep", "grand"),
    ("updated", "child", None),
    ("replaced", "random", "child"),  # its length cannot change in place
    ("unchanged", "keep", "child"),
    ("unchanged", "grand", "child"),
}


def test_cli_update_dry_run_show_nested_previews_the_nested_stacks(run, tmp_path):  # noqa: F811
    write(tmp_path, "child.yaml", CHILD)
    write(tmp_path, "grandchild.yaml", GRANDCHILD)
    before, after = write(tmp_path, "before.yaml", BEFORE), write(tmp_path, "after.yaml", AFTER)
    run("stack", "create", "nest", "-t", before, "--wait")

    shown = json.loads(run("stack", "update", "nest", "-t", after, "--parameter", "length=12", "--dry-run", "--show-nested", "-f", "json").stdout)
    flat = json.loads(run("stack", "update", "nest", "-t", after, "--parameter", "length=12", "--dry-run", "-f", "json").stdout)
    table = run("stack", "update", "nest", "-t", after, "--parameter", "length=12", "--dry-run", "--show-nested").stdout

    assert _entries(shown["resource_changes"]) == NESTED
    replaced = shown["resource_changes"]["replaced"][0]
    assert replaced["nested_in"] == "child" and replaced["property_changes"] == {"length": {"old": 8, "new": 12}}
    assert _entries(flat["resource_changes"]) == {("added", "fresh", None), ("deleted", "gone", None), ("updated", "child", None)}
    assert "fresh.grand.deep" in table and "gone.grand.deep" in table and "child.random" in table
    # Nothing changed: the preview is no update.
    resources = json.loads(run("stack", "resource", "list", "nest", "-f", "json").stdout)
    assert sorted(r["resource_name"] for r in resources) == ["child", "gone"]
    refused = run("stack", "update", "nest", "-t", after, "--show-nested", check=False)
    assert refused.returncode != 0 and "give --dry-run too" in refused.stderr


def test_openstack_stack_update_dry_run_show_nested_against_stoker_serve(cli_server, tmp_path):
    write(tmp_path, "child.yaml", CHILD)
    write(tmp_path, "grandchild.yaml", GRANDCHILD)
    before, after = write(tmp_path, "before.yaml", BEFORE), write(tmp_path, "after.yaml", AFTER)
    endpoint = f"{cli_server.url}/v1/preview-{uuid.uuid4().hex[:12]}"
    env = client_environment({"STOKER_URL": endpoint})
    openstack = [OPENSTACK, "--os-auth-type", "none", "--os-endpoint", endpoint, "stack"]
    # (openstack names template files by URL: the stack is made by the same client)
    created = subprocess.run([*openstack, "create", "nest", "-t", before, "--wait"], capture_output=True, text=True, env=env, timeout=120)
    assert created.returncode == 0, created.stderr
    update = [*openstack, "update", "nest", "-t", after, "--parameter", "length=12", "--dry-run"]

    shown = subprocess.run([*update, "--show-nested", "-f", "json"], capture_output=True, text=True, env=env, timeout=120)
    flat = subprocess.run([*update, "-f", "json"], capture_output=True, text=True, env=env, timeout=120)

    assert shown.returncode == 0, shown.stderr
    assert _entries(json.loads(shown.stdout)) == NESTED
    assert flat.returncode == 0, flat.stderr
    assert _entries(json.loads(flat.stdout)) == {("added", "fresh", None), ("deleted", "gone", None), ("updated", "child", None)}
