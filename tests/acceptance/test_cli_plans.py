"""Saved plans through the ``stoker`` command, on the embedded engine and against
``stoker serve`` (``POST /plans/apply``): ``--dry-run`` prints the plan (text at most
100 columns; ``-f json`` the document, valid against its schema), ``--plan-out`` saves
it, ``stack apply`` applies exactly it and refuses one made before the stack changed."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import jsonschema

from stoker.plans import document
from tests.acceptance.test_cli import STOKER, run, write  # noqa: F401 - run is a fixture

TEMPLATE = """\
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: one}
  password: {type: string, hidden: true, default: hunter2}
  count: {type: number, default: 2}
resources:
  holder:
    type: OS::Heat::TestResource
    properties: {value: {get_param: word}}
  secret:
    type: OS::Heat::TestResource
    properties: {value: {get_param: password}}
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      resource_def: {type: OS::Heat::None}
outputs:
  word: {value: {get_param: word}}
"""


def _valid(plan: dict) -> dict:
    validator = jsonschema.Draft202012Validator(document.schema())
    errors = [
        f"{list(error.absolute_path)}: {error.message}" for error in validator.iter_errors(plan)
    ]
    assert not errors, errors
    return plan


def test_cli_plan_saved_then_applied_and_a_stale_one_refused(run, tmp_path):  # noqa: F811
    path = write(tmp_path, "stack.yaml", TEMPLATE)
    created_plan = str(tmp_path / "create.json")
    shown = run("stack", "create", "web", "-t", path, "--dry-run", "--plan-out", created_plan)
    assert shown.stdout.splitlines()[-1] == "Plan: 5 to add, 0 to change, 0 to replace, 0 to delete"
    assert (
        "secret (OS::Heat::TestResource) create" in shown.stdout and "hunter2" not in shown.stdout
    )
    assert stat.S_IMODE(os.stat(created_plan).st_mode) == 0o600  # it holds the parameters
    applied = json.loads(run("stack", "apply", created_plan, "-f", "json").stdout)
    assert applied["stack_status"] == "CREATE_COMPLETE"

    update = [
        "stack",
        "update",
        "web",
        "-t",
        path,
        "--parameter",
        "word=two",
        "--parameter",
        "count=3",
        "--parameter",
        "password=s3cret",
        "--dry-run",
    ]
    printed = _valid(json.loads(run(*update, "-f", "json").stdout))
    assert "inputs" not in printed and "s3cret" not in json.dumps(printed)
    assert {
        entry["address"]: entry["action"]
        for entry in printed["resources"]
        if entry["action"] != "no-change"
    } == {
        "holder": "update",
        "secret": "update",
        "group": "update",
        "group.2": "create",
    }
    assert printed["outputs"][0] == {
        "name": "word",
        "action": "update",
        "old": "one",
        "new": "two",
        "changes": [{"path": "value", "old": "one", "new": "two", "op": "change"}],
    }
    # Wrapped to the terminal's width: 100 columns here.
    narrow = subprocess.run(
        [STOKER, *update],
        capture_output=True,
        text=True,
        env={**run.env, "COLUMNS": "100"},
        cwd=tmp_path,
        timeout=120,
    )
    text = narrow.stdout.splitlines()
    assert narrow.returncode == 0 and all(len(line) <= 100 for line in text), text
    assert (
        "      properties.value: one -> two" in text
        and "      properties.value: ****** -> ******" in text
    )
    assert text[-1] == "Plan: 1 to add, 3 to change, 0 to replace, 0 to delete"

    saved = str(tmp_path / "update.json")
    run(*update, "--plan-out", saved)
    _valid(json.loads(Path(saved).read_text()))
    # Another update after the plan was made: the plan is stale.
    run("stack", "update", "web", "-t", path, "--parameter", "word=three")
    refused = run("stack", "apply", saved, check=False)
    assert refused.returncode == 1 and refused.stdout == ""
    assert "The plan is stale: stack web changed since the plan was made" in refused.stderr
    assert "make a new plan" in refused.stderr
    assert (
        json.loads(run("stack", "show", "web", "-f", "json").stdout)["parameters"]["word"]
        == "three"
    )

    run(*update, "--plan-out", saved)
    done = json.loads(run("stack", "apply", saved, "-f", "json").stdout)
    assert done["stack_status"] == "UPDATE_COMPLETE"
    members = json.loads(
        run("stack", "resource", "list", "web", "--nested-depth", "1", "-f", "json").stdout
    )
    assert {r["resource_name"] for r in members} >= {"0", "1", "2"}


def test_cli_apply_refuses_what_is_not_a_saved_plan(run, tmp_path):  # noqa: F811
    path = write(tmp_path, "stack.yaml", TEMPLATE)
    printed = tmp_path / "printed.json"
    printed.write_text(run("stack", "create", "web", "-t", path, "--dry-run", "-f", "json").stdout)
    refused = run("stack", "apply", str(printed), check=False)
    assert refused.returncode == 1
    assert "carries no inputs to apply" in refused.stderr and "--plan-out" in refused.stderr
    (tmp_path / "junk.json").write_text("not json")
    junk = run("stack", "apply", str(tmp_path / "junk.json"), check=False)
    assert junk.returncode == 1 and "is not a plan: it is not JSON" in junk.stderr
    lonely = run(
        "stack", "create", "web", "-t", path, "--plan-out", str(tmp_path / "x.json"), check=False
    )
    assert lonely.returncode != 0 and "give --dry-run too" in lonely.stderr


ACTIONS_TEMPLATE = """
heat_template_version: 2021-04-16
resources:
  first:
    type: OS::Heat::TestResource
    properties: {value: one}
  kept:
    type: OS::Heat::TestResource
    deletion_policy: Retain
    depends_on: first
  inner:
    type: OS::Heat::Stack
    properties:
      template: |
        heat_template_version: 2021-04-16
        resources:
          deep: {type: OS::Heat::RandomString}
"""


def test_cli_dry_run_of_delete_suspend_resume_and_check_shows_each_resource(run, tmp_path):  # noqa: F811
    path = write(tmp_path, "actions.yaml", ACTIONS_TEMPLATE)
    run("stack", "create", "acts", "-t", path, "--wait")

    deleting = run("stack", "delete", "acts", "--dry-run").stdout.splitlines()
    assert deleting[0].startswith("Stack acts: delete (planned against CREATE_COMPLETE, last changed ")
    lines = [" ".join(line.split()) for line in deleting[1:]]
    # Dependents first; the nested stack's resources after the resource that owns them.
    addresses = [line.split(" ")[1] for line in lines[:-1]]
    assert addresses.index("kept") < addresses.index("first")
    assert addresses.index("inner.deep") == addresses.index("inner") + 1
    by_address = dict(zip(addresses, lines, strict=False))
    assert by_address["kept"] == "- kept (OS::Heat::TestResource) delete: deletion_policy Retain: it leaves the stack, its physical resource is kept"
    assert by_address["inner"] == "- inner (OS::Heat::Stack) delete: its nested stack is deleted first"
    assert by_address["inner.deep"].startswith("- inner.deep (OS::Heat::RandomString) delete: deletes acts-inner-")
    assert lines[-1] == "Plan: 4 to delete, 0 unchanged"
    assert run("stack", "show", "acts", "-f", "json").stdout.count("CREATE_COMPLETE")  # nothing ran

    suspending = json.loads(run("stack", "suspend", "acts", "--dry-run", "-f", "json").stdout)
    _valid(suspending)
    reasons = {entry["address"]: entry["reason"] for entry in suspending["resources"]}
    assert reasons["inner"] == "suspends its nested stack"
    assert reasons["inner.deep"] == "no suspend of its own: only its state changes"
    order = [entry["address"] for entry in suspending["resources"]]
    assert order.index("kept") < order.index("first")  # dependents first
    assert suspending["summary"]["suspend"] == 4
    checking = json.loads(run("stack", "check", "acts", "--dry-run", "-f", "json").stdout)
    assert [entry["address"] for entry in checking["resources"]].index("first") < [
        entry["address"] for entry in checking["resources"]
    ].index("kept")  # forward
    run("stack", "resume", "acts", "--dry-run")
    events = json.loads(run("stack", "event", "list", "acts", "-f", "json").stdout)
    assert not [e for e in events if e["resource_status"].split("_")[0] in ("SUSPEND", "CHECK", "DELETE")]


def test_cli_dry_run_of_snapshot_and_restore_shows_what_each_would_do(run, tmp_path):  # noqa: F811
    path = write(tmp_path, "plan.yaml", TEMPLATE)
    run("stack", "create", "snap", "-t", path, "--wait")
    planned = json.loads(run("stack", "snapshot", "create", "snap", "--dry-run", "-f", "json").stdout)
    _valid(planned)
    assert planned["operation"] == "snapshot"
    reasons = {entry["address"]: (entry["action"], entry["reason"]) for entry in planned["resources"]}
    assert reasons["holder"] == ("snapshot", "nothing of its own to save: the snapshot keeps its properties, data and id")
    assert json.loads(run("stack", "snapshot", "list", "snap", "-f", "json").stdout) == []  # nothing ran

    taken = json.loads(run("stack", "snapshot", "create", "snap", "--name", "before", "-f", "json").stdout)
    run("stack", "update", "snap", "--existing", "--parameter", "word=two", "--parameter", "count=3", "--wait")
    text = run("stack", "snapshot", "restore", "snap", taken["id"], "--dry-run").stdout.splitlines()
    assert text[0].startswith("Stack snap: restore to the snapshot, an update (planned against UPDATE_COMPLETE, last changed ")
    lines = [" ".join(line.split()) for line in text]
    assert any(line.startswith("~ holder (OS::Heat::TestResource) update in place") for line in lines), lines
    assert any(line.startswith("- group.2 (OS::Heat::None) delete") for line in lines), lines
    plan = json.loads(run("stack", "snapshot", "restore", "snap", taken["id"], "--dry-run", "-f", "json").stdout)
    _valid(plan)
    by_address = {entry["address"]: entry for entry in plan["resources"]}
    assert (by_address["holder"]["action"], by_address["holder"]["changes"]) == ("update", [{"path": "properties.value", "old": "two", "new": "one", "op": "change"}])
    assert (by_address["group"]["action"], by_address["group"]["reason"]) == ("update", "count changed")
    assert (by_address["group.2"]["action"], by_address["secret"]["action"]) == ("delete", "no-change")
    assert plan["summary"] == {"add": 0, "change": 2, "replace": 0, "delete": 1, "no_change": 3}
    assert [(o["name"], o["old"], o["new"]) for o in plan["outputs"]] == [("word", "two", "one")]

    # The restore does what the plan said: the stack's own resources it changes are the
    # planned ones.
    run("stack", "snapshot", "restore", "snap", taken["id"], "--wait")
    events = json.loads(run("stack", "event", "list", "snap", "-f", "json").stdout)
    started = max(i for i, e in enumerate(events) if e["resource_status"] == "RESTORE_IN_PROGRESS")
    touched = {e["resource_name"] for e in events[started:] if e["resource_name"] != "snap"}
    assert touched == {e["name"] for e in plan["resources"] if e["nested_in"] is None and e["action"] != "no-change"} == {"holder", "group"}
    assert json.loads(run("stack", "output", "show", "snap", "word", "-f", "json").stdout)["output_value"] == "one"
