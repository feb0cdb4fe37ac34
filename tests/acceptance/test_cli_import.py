"""``stoker stack import`` as a user runs it, on the embedded engine and against a real
``stoker serve`` (whose ``POST /v1/{tenant_id}/imports`` is driven with a real HTTP client
too). The objects taken over are Test::LiveFile files (tests/support/plugins) made before
the stack: the plugin's create writes ``<path>.owner``, so a file without one was never
created by the stack, and its modification time shows whether anything wrote it."""

from __future__ import annotations

import json
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

TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  directory: {type: string}
  policy: {type: string, default: Delete}
resources:
  notes:
    type: Test::LiveFile
    deletion_policy: {get_param: policy}
    properties:
      path: {list_join: ['/', [{get_param: directory}, notes.txt]]}
      content: hello
  made:
    type: Test::LiveFile
    properties:
      path: {list_join: ['/', [{get_param: directory}, made.txt]]}
      content: {get_attr: [word, value]}
  word:
    type: OS::Heat::RandomString
"""


@pytest.fixture(scope="module")
def import_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("import-server")
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
        server = request.getfixturevalue("import_server")
        env = client_environment(
            {"STOKER_URL": f"{server.url}/v1/import-{uuid.uuid4().hex[:12]}", "COLUMNS": "200"}
        )

    invoke = cli_invoker(env, tmp_path)

    return invoke


@pytest.fixture
def existing(tmp_path: Path) -> tuple[Path, Path]:
    """The template, and a file made before any stack, as the template describes it."""
    files = tmp_path / "files"
    files.mkdir()
    (files / "notes.txt").write_text("hello")
    (files / "notes.txt").chmod(0o644)
    (files / "notes.txt.labels").write_text("")
    template = tmp_path / "import.yaml"
    template.write_text(textwrap.dedent(TEMPLATE))
    return template, files


def _resources(run, name: str) -> dict[str, dict]:
    listed = json.loads(run("stack", "resource", "list", name, "-f", "json").stdout)
    return {r["resource_name"]: r for r in listed}


def test_cli_import_takes_over_without_creating_and_update_leaves_it(run, existing):
    template, files = existing
    notes = files / "notes.txt"
    before = notes.stat().st_mtime_ns
    run(
        "stack",
        "import",
        "web",
        "-t",
        str(template),
        "--parameter",
        f"directory={files}",
        "--resource",
        f"notes={notes}",
        "--wait",
    )
    shown = json.loads(run("stack", "show", "web", "-f", "json").stdout)
    assert shown["stack_status"] == "ADOPT_COMPLETE", shown["stack_status_reason"]
    resources = _resources(run, "web")
    assert resources["notes"]["resource_status"] == "ADOPT_COMPLETE"
    assert resources["notes"]["physical_resource_id"] == str(notes)
    assert resources["made"]["resource_status"] == "CREATE_COMPLETE"
    assert not Path(f"{notes}.owner").exists()  # no create call
    assert Path(files / "made.txt.owner").exists()  # the others are created
    assert notes.stat().st_mtime_ns == before

    run(
        "stack", "update", "web", "-t", str(template), "--parameter", f"directory={files}", "--wait"
    )
    assert json.loads(run("stack", "show", "web", "-f", "json").stdout)["stack_status"] == (
        "UPDATE_COMPLETE"
    )
    assert notes.stat().st_mtime_ns == before  # an update that changes nothing writes nothing
    drift = json.loads(run("stack", "drift", "web", "-f", "json").stdout)
    assert drift["summary"]["modified"] == 0

    run("stack", "delete", "web", "--yes", "--wait")
    assert not notes.exists()  # imported, it is the stack's: the delete removes it


def test_cli_import_retained_is_kept_on_delete(run, existing):
    template, files = existing
    notes = files / "notes.txt"
    run(
        "stack",
        "import",
        "keep",
        "-t",
        str(template),
        "--parameter",
        f"directory={files}",
        "--parameter",
        "policy=Retain",
        "--resource",
        f"notes={notes}",
        "--wait",
    )
    run("stack", "delete", "keep", "--yes", "--wait")
    assert notes.read_text() == "hello"
    assert not (files / "made.txt").exists()


def test_cli_import_differences_refused_then_accepted(run, existing):
    template, files = existing
    notes = files / "notes.txt"
    notes.write_text("edited")
    refused = run(
        "stack",
        "import",
        "web",
        "-t",
        str(template),
        "--parameter",
        f"directory={files}",
        "--resource",
        f"notes={notes}",
        "-f",
        "json",
        check=False,
    )
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "ERROR: Import refused, nothing was taken over: "
        'notes differs from the template: content: template "hello", live "edited" | '
        "to take them over as they are, import again with --accept-differences "
        "(an update then applies the template)"
    )
    # Refused before any stack was made: nothing to delete, nothing made or held.
    assert json.loads(run("stack", "list", "-f", "json").stdout) == []
    assert not (files / "made.txt").exists()
    assert notes.read_text() == "edited"

    run(
        "stack",
        "import",
        "web",
        "-t",
        str(template),
        "--parameter",
        f"directory={files}",
        "--resource",
        f"notes={notes}",
        "--accept-differences",
        "--wait",
    )
    events = json.loads(run("stack", "event", "list", "web", "-f", "json").stdout)
    assert any(
        e["resource_name"] == "notes"
        and e["resource_status"] == "ADOPT_COMPLETE"
        and 'differences accepted: content: template "hello", live "edited"'
        in e["resource_status_reason"]
        for e in events
    )
    assert notes.read_text() == "edited"
    run(
        "stack", "update", "web", "-t", str(template), "--parameter", f"directory={files}", "--wait"
    )
    assert notes.read_text() == "edited"  # the stack holds the template's values: no change


def test_cli_import_errors(run, existing):
    template, files = existing
    common = ("-t", str(template), "--parameter", f"directory={files}")
    unknown = run("stack", "import", "a", *common, "--resource", "nope=x", check=False)
    assert unknown.returncode != 0
    assert (
        "The template has no resource nope to import into (its resources: made, notes, word)"
        in (unknown.stderr)
    )
    cannot = run("stack", "import", "b", *common, "--resource", "word=abc", check=False)
    assert cannot.returncode != 0
    assert "Resource word: OS::Heat::RandomString cannot be imported" in cannot.stderr
    shape = run("stack", "import", "c", *common, "--resource", "notes", check=False)
    assert shape.returncode == 2
    assert "'notes' is not NAME=ID" in shape.stderr
    gone = files / "gone.txt"
    missing = run("stack", "import", "d", *common, "--resource", f"notes={gone}", check=False)
    assert missing.returncode == 1
    assert missing.stderr.strip() == (
        f"ERROR: Import refused, nothing was taken over: notes: Test::LiveFile {gone} does not exist"
    )
    assert json.loads(run("stack", "list", "-f", "json").stdout) == []  # no refusal made a stack


def test_api_import_route(import_server, existing):
    template, files = existing
    project = f"api-{uuid.uuid4().hex[:12]}"
    with httpx.Client(base_url=f"{import_server.url}/v1/{project}") as client:
        body = {
            "stack_name": "api",
            "template": template.read_text(),
            "parameters": {"directory": str(files)},
        }
        missing = client.post("imports", json=body)
        assert missing.status_code == 400
        assert missing.json()["error"]["message"].startswith(
            "'resources' must map each resource to import to its object's id"
        )
        unknown = client.post("imports", json={**body, "resources": {"nope": "x"}})
        assert unknown.status_code == 400
        assert unknown.json()["error"]["message"].startswith(
            "resources.nope: The template has no resource nope to import into"
        )
        made = client.post(
            "imports", json={**body, "resources": {"notes": str(files / "notes.txt")}}
        )
        assert made.status_code == 201
        assert made.headers["location"].endswith(f"/stacks/api/{made.json()['stack']['id']}")
    document = httpx.get(f"{import_server.url}/openapi.json").json()
    assert document["paths"]["/v1/{tenant_id}/imports"]["post"]["x-policy-rule"] == "stacks:import"


def test_cli_import_dry_run_plans_it_and_the_saved_plan_applies(run, existing):
    template, files = existing
    notes = files / "notes.txt"
    notes.write_text("edited")
    common = ("stack", "import", "web", "-t", str(template), "--parameter", f"directory={files}", "--resource", f"notes={notes}")

    shown = run(*common, "--dry-run").stdout.splitlines()
    assert shown[0] == "Stack web: import"
    text = " ".join(" ".join(shown).split())
    assert (
        f"<= notes (Test::LiveFile) import: takes over {notes}; it differs from the template: "
        "the import is refused without --accept-differences properties.content: edited -> hello"
    ) in text
    assert "+ word (OS::Heat::RandomString) create: new resource" in text
    assert shown[-1] == "Plan: 1 to import, 2 to add, 0 to change, 0 to replace, 0 to delete"
    document = json.loads(run(*common, "--dry-run", "--accept-differences", "-f", "json").stdout)
    jsonschema.Draft202012Validator(plan_document.schema()).validate(document)
    assert {entry["address"]: entry["action"] for entry in document["resources"]} == {
        "notes": "import",
        "word": "create",
        "made": "create",
    }
    # A dry run makes nothing: no stack, no file.
    assert json.loads(run("stack", "list", "-f", "json").stdout) == []
    assert not (files / "made.txt").exists()

    # Saved, it is refused once the object changed again; made again, it applies.
    run(*common, "--dry-run", "--accept-differences", "--plan-out", "import.json")
    notes.write_text("edited twice")
    stale = run("stack", "apply", "import.json", check=False)
    assert stale.returncode == 1
    assert "The plan is stale: its inputs would now make another plan (notes: its values differ)" in stale.stderr
    assert json.loads(run("stack", "list", "-f", "json").stdout) == []
    run(*common, "--dry-run", "--accept-differences", "--plan-out", "import.json")
    applied = json.loads(run("stack", "apply", "import.json", "--wait", "-f", "json").stdout)
    assert applied["stack_status"] == "ADOPT_COMPLETE"
    held = _resources(run, "web")
    assert (held["notes"]["physical_resource_id"], held["notes"]["resource_status"]) == (str(notes), "ADOPT_COMPLETE")
    assert notes.read_text() == "edited twice"  # taken over, not changed
