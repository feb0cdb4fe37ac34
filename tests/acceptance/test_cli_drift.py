"""``stoker stack drift`` as a user runs it, on the embedded engine and against a real
``stoker serve`` (whose API routes ``POST``/``GET .../drift`` are driven here with a real
HTTP client too). The stacks hold Test::LiveFile resources (tests/support/plugins), whose
live objects are files the tests change behind the stack's back."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import jsonschema
import pytest

from stoker.plans import document as plan_document
from tests.acceptance.conftest import cli_invoker, client_environment
from tests.support.server import Server

PLUGINS = str(Path(__file__).resolve().parents[1] / "support" / "plugins")
STOKER = str(Path(sys.executable).with_name("stoker"))

TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  directory: {type: string}
resources:
  notes:
    type: Test::LiveFile
    properties:
      path: {list_join: ['/', [{get_param: directory}, notes.txt]]}
      content: hello
  word:
    type: OS::Heat::RandomString
"""


@pytest.fixture(scope="module")
def drift_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("drift-server")
    server = Server(
        f"sqlite:///{directory / 'server.sqlite'}",
        directory / "server.log",
        STOKER_AUTH_MODE="none",
        STOKER_PLUGIN_DIRS=PLUGINS,
    ).start()
    yield server
    server.stop()


@pytest.fixture(params=["embedded", "remote"])
def run(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "embedded":
        env = client_environment(
            {
                "STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite'}",
                "STOKER_PLUGIN_DIRS": PLUGINS,
                "COLUMNS": "200",
            }
        )
    else:
        server = request.getfixturevalue("drift_server")
        env = client_environment(
            {"STOKER_URL": f"{server.url}/v1/drift-{uuid.uuid4().hex[:12]}", "COLUMNS": "200"}
        )

    invoke = cli_invoker(env, tmp_path)

    invoke.env = env  # type: ignore[attr-defined]
    return invoke


def make_stack(run, tmp_path: Path) -> Path:
    files = tmp_path / "files"
    files.mkdir()
    template = tmp_path / "drift.yaml"
    template.write_text(textwrap.dedent(TEMPLATE))
    run(
        "stack", "create", "web", "-t", str(template), "--parameter", f"directory={files}", "--wait"
    )
    return files


def test_cli_drift_reports_in_sync_then_modified_and_keeps_the_last(run, tmp_path):
    files = make_stack(run, tmp_path)
    missing = run("stack", "drift", "web", "--last", check=False)
    assert missing.returncode == 1
    assert "No drift detection has run on stack web" in missing.stderr
    shown = json.loads(run("stack", "show", "web", "-f", "json").stdout)
    assert shown["stoker_drift"] is None
    assert shown["stack_status"] == "CREATE_COMPLETE"  # Heat's keys as they were

    clean = run("stack", "drift", "web", "-f", "json")
    body = json.loads(clean.stdout)
    assert body["summary"] == {
        "stack_status": "IN_SYNC",
        "resources": 2,
        "in_sync": 1,
        "modified": 0,
        "deleted": 0,
        "not_checked": 1,
    }

    (files / "notes.txt").write_text("edited")
    table = run("stack", "drift", "web", "-f", "csv")
    assert list(csv.reader(table.stdout.splitlines())) == [
        ["resource", "resource_type", "status", "detail"],
        ["notes", "Test::LiveFile", "MODIFIED", 'content: expected "hello", actual "edited"'],
        [
            "word",
            "OS::Heat::RandomString",
            "NOT_CHECKED",
            "OS::Heat::RandomString has no live object to read",
        ],
    ]
    assert table.stderr.startswith("Stack web: DRIFTED (1 MODIFIED, 1 NOT_CHECKED), detected at ")

    last = json.loads(run("stack", "drift", "web", "--last", "-f", "json").stdout)
    assert last["summary"]["stack_status"] == "DRIFTED"
    assert last["resources"][0]["properties"] == [
        {"name": "content", "expected": "hello", "actual": "edited"}
    ]
    summary = json.loads(run("stack", "show", "web", "-f", "json").stdout)["stoker_drift"]
    assert summary == {"detected_at": last["detected_at"], **last["summary"]}


def test_api_drift_routes(drift_server, tmp_path):
    project = f"api-{uuid.uuid4().hex[:12]}"
    env = client_environment({"STOKER_URL": f"{drift_server.url}/v1/{project}"})
    files = tmp_path / "files"
    files.mkdir()
    template = tmp_path / "drift.yaml"
    template.write_text(textwrap.dedent(TEMPLATE))
    subprocess.run(
        [
            STOKER,
            "stack",
            "create",
            "api",
            "-t",
            str(template),
            "--parameter",
            f"directory={files}",
            "--wait",
        ],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    with httpx.Client(base_url=f"{drift_server.url}/v1/{project}", follow_redirects=True) as client:
        # The lookup's 302 turns a POST into a GET (as heatclient knows): use the stack's own URL.
        stack_url = client.get("stacks/api", follow_redirects=False).headers["location"]
        before = client.get(f"{stack_url}/drift")
        assert before.status_code == 404
        assert before.json()["error"]["message"].startswith(
            "No drift detection has run on stack api."
        )
        (files / "notes.txt").unlink()
        detected = client.post(f"{stack_url}/drift")
        assert detected.status_code == 200
        drift = detected.json()["drift"]
        assert [(r["path"], r["status"], r["reason"]) for r in drift["resources"]] == [
            ("notes", "DELETED", "the live object is gone"),
            ("word", "NOT_CHECKED", "OS::Heat::RandomString has no live object to read"),
        ]
        assert client.get("stacks/api/drift").json() == detected.json()  # by name: the 302 to it
        assert client.get("stacks/api").json()["stack"]["stoker_drift"]["deleted"] == 1
        refused = client.post(
            "stacks",
            json={"stack_name": "c", "template": textwrap.dedent(TEMPLATE), "converge": True},
        )
        assert refused.status_code == 400
        assert (
            refused.json()["error"]["message"]
            == "converge flag only supported in stack update (or update preview) request."
        )
        # Heat's converge in an update preview: from the live objects (the file is gone).
        converging = client.patch(f"{stack_url}/preview", json={"converge": True})
        assert converging.status_code == 200, converging.text
        changes = converging.json()["resource_changes"]
        assert [r["resource_name"] for r in changes["replaced"]] == ["notes"]
        # stoker's refresh_only: alone, planned, then done at once (200).
        mixed = client.patch(stack_url, json={"refresh_only": True, "parameters": {"directory": "/"}})
        assert (mixed.status_code, mixed.json()["error"]["message"]) == (
            400,
            "refresh_only takes the live objects into the stack as it is: it cannot be given parameters "
            '(send {"refresh_only": true} alone, or make an update without it)',
        )
        planned = client.patch(f"{stack_url}/preview", params={"plan": "true"}, json={"refresh_only": True})
        assert planned.status_code == 200, planned.text
        plan = planned.json()["plan"]
        assert (plan["operation"], [(r["address"], r["action"]) for r in plan["resources"]]) == (
            "refresh",
            [("notes", "update"), ("word", "no-change")],
        )
        done = client.patch(stack_url, json={"refresh_only": True})
        assert (done.status_code, done.json()["plan"]["done"]) == (200, True)
        notes = client.get(f"{stack_url}/resources/notes").json()["resource"]
        assert notes["resource_status"] == "CHECK_FAILED"
        assert client.get(stack_url).json()["stack"]["stack_status"] == "CREATE_COMPLETE"
        document = httpx.get(f"{drift_server.url}/openapi.json").json()
        path = document["paths"]["/v1/{tenant_id}/stacks/{stack_name}/{stack_id}/drift"]
        assert (path["post"]["x-policy-rule"], path["get"]["x-policy-rule"]) == (
            "stacks:drift",
            "stacks:show_drift",
        )


def test_cli_update_converge_plans_then_changes_back_what_drifted(run, tmp_path):
    files = make_stack(run, tmp_path)
    (files / "notes.txt").write_text("edited")

    planned = run("stack", "update", "web", "--existing", "--converge", "--dry-run")
    assert planned.stdout.splitlines()[1:] == [
        "  ~ notes (Test::LiveFile) update in place: content changed (drifted: the old values are the live object's)",
        "      properties.content: edited -> hello",
        "1 resource unchanged.",
        "Plan: 0 to add, 1 to change, 0 to replace, 0 to delete",
    ]
    assert (files / "notes.txt").read_text() == "edited"  # a dry run changes nothing
    document = json.loads(
        run("stack", "update", "web", "--existing", "--converge", "--dry-run", "-f", "json").stdout
    )
    jsonschema.Draft202012Validator(plan_document.schema()).validate(document)
    [notes] = [entry for entry in document["resources"] if entry["name"] == "notes"]
    assert (notes["action"], notes["changes"]) == (
        "update",
        [{"path": "properties.content", "old": "edited", "new": "hello", "op": "change"}],
    )

    # A saved plan is refused when the live object changed again since.
    run("stack", "update", "web", "--existing", "--converge", "--dry-run", "--plan-out", "c.json")
    (files / "notes.txt").write_text("edited again")
    stale = run("stack", "apply", "c.json", check=False)
    assert stale.returncode == 1
    assert "The plan is stale: its inputs would now make another plan (notes: its values differ)" in stale.stderr
    assert (files / "notes.txt").read_text() == "edited again"

    run("stack", "update", "web", "--existing", "--converge", "--dry-run", "--plan-out", "c.json")
    run("stack", "apply", "c.json", "--wait")
    assert (files / "notes.txt").read_text() == "hello"
    assert (
        json.loads(run("stack", "drift", "web", "-f", "json").stdout)["summary"]["stack_status"]
        == "IN_SYNC"
    )


def test_cli_update_refresh_only_takes_reality_and_changes_nothing(run, tmp_path):
    files = make_stack(run, tmp_path)
    (files / "notes.txt").write_text("edited")

    refused = run("stack", "update", "web", "--refresh-only", "-t", "drift.yaml", check=False)
    assert refused.returncode == 2
    assert "--refresh-only takes the live objects into the stack as it is: it cannot be given -t" in refused.stderr

    planned = run("stack", "update", "web", "--refresh-only", "--dry-run")
    assert planned.stdout.splitlines()[0].startswith("Stack web: refresh only (planned against CREATE_COMPLETE")
    assert planned.stdout.splitlines()[1:] == [
        "  ~ notes (Test::LiveFile) refresh: takes the live object's content",
        "      properties.content: hello -> edited",
        "1 resource unchanged.",
        "Refresh: 1 to take from the live objects, 1 unchanged; nothing changes in the cloud",
    ]
    assert json.loads(run("stack", "drift", "web", "-f", "json").stdout)["summary"]["modified"] == 1

    done = json.loads(run("stack", "update", "web", "--refresh-only", "-f", "json").stdout)
    jsonschema.Draft202012Validator(plan_document.schema()).validate(done)
    assert (done["operation"], done["done"], done["summary"]["change"]) == ("refresh", True, 1)
    assert (files / "notes.txt").read_text() == "edited"  # the object is as it was
    assert (
        json.loads(run("stack", "drift", "web", "-f", "json").stdout)["summary"]["stack_status"]
        == "IN_SYNC"
    )
    reasons = [event["resource_status_reason"] for event in json.loads(run("stack", "event", "list", "web", "-f", "json").stdout)]
    assert "Drift refreshed: content as found in the live object" in reasons
    # The template still says hello: the next update would change the object back.
    plan = run("stack", "update", "web", "--existing", "--dry-run").stdout
    assert "      properties.content: edited -> hello" in plan.splitlines()

    # An object gone: a saved refresh plan marks it CHECK_FAILED; stale once it is back.
    (files / "notes.txt").unlink()
    run("stack", "update", "web", "--refresh-only", "--dry-run", "--plan-out", "r.json")
    (files / "notes.txt").write_text("edited")
    stale = run("stack", "apply", "r.json", check=False)
    assert stale.returncode == 1 and "The plan is stale" in stale.stderr
    (files / "notes.txt").unlink()
    run("stack", "update", "web", "--refresh-only", "--dry-run", "--plan-out", "r.json")
    applied = run("stack", "apply", "r.json")
    assert "Stack web: refreshed as planned; the cloud was not changed" in applied.stdout
    notes = json.loads(run("stack", "resource", "show", "web", "notes", "-f", "json").stdout)
    assert (notes["resource_status"], notes["resource_status_reason"]) == (
        "CHECK_FAILED",
        "the live object is gone (drift)",
    )
    run("stack", "update", "web", "--existing", "--wait")  # the update makes it again
    assert (files / "notes.txt").read_text() == "hello"
