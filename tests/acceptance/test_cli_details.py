"""The ``stoker`` commands that read a stack as ``openstack stack ...`` reads it, and the
output options openstackclient has (``-f`` table/json/yaml/csv/shell/value, ``-c``), run
as a user runs them: a real process on a real SQLite file."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import uuid
from pathlib import Path

import pytest
import yaml

from tests.acceptance.conftest import cli_invoker, environment_of
from tests.support.waiting import HANG_GUARD_S, wait_until

STOKER = str(Path(sys.executable).with_name("stoker"))

NESTED = """\
heat_template_version: 2021-04-16
parameters:
  fail: {type: boolean, default: false}
resources:
  leaf:
    type: OS::Heat::TestResource
    properties: {value: leaf, fail: {get_param: fail}}
"""

TEMPLATE = """\
heat_template_version: 2021-04-16
parameters:
  motd: {type: string}
  fail: {type: boolean, default: false}
resources:
  word:
    type: OS::Heat::RandomString
    metadata: {role: greeter}
    properties: {length: 8}
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 1
      resource_def:
        type: nested.yaml
        properties: {fail: {get_param: fail}}
outputs:
  motd:
    value: {get_param: motd}
"""


@pytest.fixture
def stoker(tmp_path, cli_backend):
    env = environment_of(cli_backend)
    env.pop("COLUMNS", None)
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    (tmp_path / "nested.yaml").write_text(NESTED)
    (tmp_path / "motd.txt").write_text("Welcome,\n  a long message of the day that no terminal of 80 columns holds on one line\n")

    invoke = cli_invoker(env, tmp_path)  # stdout is a pipe, as in `stoker ... | grep`: never a terminal
    invoke.env = env  # type: ignore[attr-defined]
    return invoke


def test_cli_formats_and_columns_as_openstackclient(stoker):
    created = stoker("stack", "create", "s", "-t", "t.yaml", "--parameter-file", "motd=motd.txt", "-f", "json")
    assert json.loads(created.stdout)["stack_status"] == "CREATE_COMPLETE"

    # --parameter-file: the file's text is the value, as heatclient reads it.
    shown = json.loads(stoker("stack", "show", "s", "-f", "json").stdout)
    assert shown["parameters"]["motd"].startswith("Welcome,\n  a long message")
    assert [o["output_value"] for o in shown["outputs"]] == [shown["parameters"]["motd"]]

    # -c picks fields, in the order given; each format writes them its own way.
    assert stoker("stack", "show", "s", "-f", "value", "-c", "stack_name", "-c", "stack_status").stdout == "s\nCREATE_COMPLETE\n"
    assert yaml.safe_load(stoker("stack", "show", "s", "-f", "yaml", "-c", "stack_status").stdout) == {"stack_status": "CREATE_COMPLETE"}
    shell = stoker("stack", "show", "s", "-f", "shell", "-c", "stack_name", "-c", "stack_status_reason").stdout
    evaluated = subprocess.run(["sh", "-c", f'{shell}\necho "$stack_name|$stack_status_reason"'], capture_output=True, text=True, check=True)
    assert evaluated.stdout.strip() == "s|Stack CREATE completed successfully"
    listed = list(csv.reader(io.StringIO(stoker("stack", "list", "-f", "csv", "-c", "Stack Name", "-c", "Stack Status").stdout)))
    assert listed == [["Stack Name", "Stack Status"], ["s", "CREATE_COMPLETE"]]
    assert yaml.safe_load(stoker("stack", "list", "-f", "yaml", "-c", "Stack Name").stdout) == [{"Stack Name": "s"}]
    unknown = stoker("stack", "list", "-c", "Nope", check=False)
    assert unknown.returncode == 2 and "No recognized column names in ['Nope']" in unknown.stderr
    refused = stoker("stack", "list", "-f", "shell", check=False)
    assert refused.returncode == 2 and "-f shell shows one item" in refused.stderr

    # A table written to a pipe does not wrap: every cell stays on its line, whole.
    table = stoker("stack", "output", "show", "s", "motd").stdout
    assert "a long message of the day that no terminal of 80 columns holds on one line" in table
    stacks = stoker("stack", "list").stdout
    assert "CREATE_COMPLETE" in stacks and "CREATE_COMPLE\n" not in stacks


def test_cli_reads_one_resource_event_template_environment_and_files(stoker, tmp_path):
    stoker("stack", "create", "s", "-t", "t.yaml", "--parameter", "motd=hi")

    resource = yaml.safe_load(stoker("stack", "resource", "show", "s", "word", "-f", "yaml").stdout)
    assert resource["resource_name"] == resource["logical_resource_id"] == "word"
    assert resource["resource_type"] == "OS::Heat::RandomString" and resource["resource_status"] == "CREATE_COMPLETE"
    assert len(resource["attributes"]["value"]) == 8
    missing = stoker("stack", "resource", "show", "s", "nope", check=False)
    assert missing.returncode == 1 and "The Resource (nope) could not be found in Stack s." in missing.stderr

    assert json.loads(stoker("stack", "resource", "metadata", "s", "word", "-f", "json").stdout) == {"role": "greeter"}

    events = json.loads(stoker("stack", "event", "list", "s", "--resource", "word", "-f", "json").stdout)
    first = events[0]
    event = json.loads(stoker("stack", "event", "show", "s", "word", first["id"], "-f", "json").stdout)
    assert (event["id"], event["resource_name"], event["resource_status"], event["stack_name"]) == (first["id"], "word", first["resource_status"], "s")
    assert event["resource_type"] == "OS::Heat::RandomString"

    # Paging events: the first two, then those after the first.
    everything = json.loads(stoker("stack", "event", "list", "s", "-f", "json").stdout)
    assert json.loads(stoker("stack", "event", "list", "s", "--limit", "2", "-f", "json").stdout) == everything[:2]
    assert json.loads(stoker("stack", "event", "list", "s", "--marker", everything[0]["id"], "-f", "json").stdout) == everything[1:]

    # The version as text, as Heat's template show gives it.
    assert yaml.safe_load(stoker("stack", "template", "show", "s").stdout) == {**yaml.safe_load(TEMPLATE), "heat_template_version": "2021-04-16"}
    environment = json.loads(stoker("stack", "environment", "show", "s", "-f", "json").stdout)
    assert environment["resource_registry"] == {} and environment["parameter_defaults"] == {}
    assert yaml.safe_load(stoker("stack", "file", "list", "s").stdout) == {"nested.yaml": NESTED}


def test_cli_failures_list_names_the_deepest_cause_by_its_path(stoker):
    failed = stoker("stack", "create", "f", "-t", "t.yaml", "--parameter", "motd=hi", "--parameter", "fail=true", check=False)
    assert failed.returncode == 1
    report = stoker("stack", "failures", "list", "f").stdout
    # The failed group and its failed member stand for the leaf inside them.
    assert report.startswith("f.group.0.leaf:\n"), report
    assert "  resource_type: OS::Heat::TestResource\n" in report and "  status: CREATE_FAILED\n" in report
    assert "status_reason: |\n    " in report and "Test Resource failed leaf" in report
    assert report.count(":\n  resource_type:") == 1
    long = stoker("stack", "failures", "list", "f", "--long").stdout
    assert "  events:\n" in long and "[leaf]: CREATE_FAILED" in long

    # Nested stacks' events name their resource by its path from the stack.
    nested = stoker("stack", "event", "list", "f", "--nested-depth", "2").stdout
    assert "[group.0.leaf]: CREATE_FAILED" in nested


def test_cli_stack_list_filters_sorts_and_pages(stoker):
    for name in ("b", "a", "c"):
        stoker("stack", "create", name, "-t", "t.yaml", "--parameter", "motd=hi")
    stoker("stack", "create", "z", "-t", "t.yaml", "--parameter", "motd=hi", "--parameter", "fail=true", check=False)

    def names(*args: str) -> list[str]:
        return [row["Stack Name"] for row in json.loads(stoker("stack", "list", *args, "-f", "json").stdout)]

    assert names("--sort", "stack_name") == ["a", "b", "c", "z"]
    assert names("--sort", "stack_name:desc", "--limit", "2") == ["z", "c"]
    ordered = json.loads(stoker("stack", "list", "--sort", "stack_name", "-f", "json").stdout)
    assert names("--sort", "stack_name", "--marker", ordered[1]["ID"]) == ["c", "z"]
    assert names("--filter", "status=FAILED") == ["z"]
    assert sorted(names("--filter", "status=CREATE_COMPLETE")) == ["a", "b", "c"]
    assert sorted(names("--filter", "name=a", "--filter", "name=c")) == ["a", "c"]
    assert names("--filter", "name=a", "--filter", "status=FAILED") == []
    bad = stoker("stack", "list", "--filter", "colour=red", check=False)
    assert bad.returncode == 2 and "KEY one of id, name, status, action" in bad.stderr
    bad = stoker("stack", "list", "--sort", "size", check=False)
    assert bad.returncode == 2 and "--sort expects KEY[:asc|desc]" in bad.stderr


WAITING = """\
heat_template_version: 2021-04-16
resources:
  slow:
    type: OS::Heat::TestResource
    properties: {value: x, wait_secs: 10}
"""

HOOKED = """\
heat_template_version: 2021-04-16
resources:
  first:
    type: OS::Heat::TestResource
    properties: {value: one}
"""


def test_cli_hook_poll_and_event_list_follow(stoker, tmp_path):
    (tmp_path / "hooked.yaml").write_text(HOOKED)
    (tmp_path / "hooks.yaml").write_text(textwrap.dedent("""\
        resource_registry:
          resources:
            first: {hooks: pre-create}
        """))
    creator = subprocess.Popen([STOKER, "stack", "create", "h", "-t", "hooked.yaml", "-e", "hooks.yaml"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=stoker.env, cwd=tmp_path)
    follower = None
    lines: list[str] = []

    def alive(process: subprocess.Popen) -> bool:
        assert process.poll() is None, process.communicate()
        return True

    def printed(text: str) -> bool:
        # What the follower printed counts even if it has ended since; ending before
        # printing it is the failure.
        return any(text in line for line in lines) or not alive(follower)

    try:
        # Each wait is for its condition: the machine may be busy, so no step has a time of its own.
        polled = wait_until(
            lambda: alive(creator) and json.loads(stoker("stack", "hook", "poll", "h", "-f", "json", check=False).stdout or "[]"),
            "the create to pause at its hook",
        )
        [waiting] = polled
        assert (waiting["Resource Name"], waiting["Resource Status"]) == ("first", "INIT_COMPLETE")
        assert waiting["Resource Status Reason"] == "CREATE paused until Hook pre-create is cleared"
        # Following from here: what happened so far, then each event as it comes.
        # Ctrl-C as a terminal sends it: a suite started in the background (a CI job) has
        # SIGINT ignored, and a child inherits that unless told otherwise.
        follower = subprocess.Popen(
            [STOKER, "stack", "event", "list", "h", "--follow"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=stoker.env, cwd=tmp_path,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        reader = threading.Thread(target=lambda: lines.extend(iter(follower.stdout.readline, "")), daemon=True)
        reader.start()
        wait_until(lambda: printed("paused until Hook pre-create"), "the follower to print the hook's event")
        assert not any("[h]: CREATE_COMPLETE" in line for line in lines)
        stoker("stack", "hook", "clear", "h", "first", "--pre-create")
        assert creator.wait(timeout=HANG_GUARD_S) == 0, creator.communicate()
        assert json.loads(stoker("stack", "hook", "poll", "h", "-f", "json").stdout) == []
        # The follower printed the events so far (the hook's), then those that came after.
        wait_until(lambda: printed("[h]: CREATE_COMPLETE"), "the follower to print the stack's CREATE_COMPLETE")
        follower.send_signal(signal.SIGINT)
        assert follower.wait(timeout=HANG_GUARD_S) == 0
        reader.join(timeout=HANG_GUARD_S)
        assert "Traceback" not in follower.stderr.read()
    finally:
        for process in (creator, follower):
            if process is not None:
                process.kill()
    assert any("[first]: INIT_COMPLETE  CREATE paused until Hook pre-create is cleared" in line for line in lines)


# Embedded only: it kills the engine in the middle of a create, and the recovery it then
# checks is the embedded engine's (a server recovers at its own start: test_api's).
@pytest.mark.parametrize("cli_backend", ["embedded"], indirect=True)
def test_cli_reads_do_not_finish_an_interrupted_action(stoker, tmp_path):
    (tmp_path / "waiting.yaml").write_text(WAITING)
    creating = subprocess.Popen([STOKER, "stack", "create", "w", "-t", "waiting.yaml"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=stoker.env, cwd=tmp_path)
    database = stoker.env["STOKER_DATABASE_URL"].removeprefix("sqlite:///")

    def creating_the_resource() -> bool:
        # Read from the store itself: a command's start-up on a busy machine could outlast
        # the resource's create and miss it.
        assert creating.poll() is None, "the create ended before it was interrupted"
        if not Path(database).exists():
            return False
        with contextlib.closing(sqlite3.connect(database, timeout=30)) as connection:
            try:
                # Its handler's token recorded too: the kill must not land between the
                # IN_PROGRESS and the token (a create whose progress is unknown fails,
                # which is crash safety's subject, not this test's).
                # The column holds JSON: no token yet is the text "null", not SQL's NULL.
                rows = connection.execute("SELECT action, status, handler_token FROM resources").fetchall()
                return any((action, status) == ("CREATE", "IN_PROGRESS") and json.loads(token or "null") is not None for action, status, token in rows)
            except sqlite3.OperationalError:  # the tables are not made yet
                return False

    wait_until(creating_the_resource, "the resource's create to start", interval_s=0.05)
    creating.send_signal(signal.SIGKILL)
    creating.wait()

    # The read shows the stack as it is (finishing the create first would show it done).
    listed = stoker("stack", "list", "-f", "value", "-c", "Stack Status")
    assert listed.stdout == "CREATE_IN_PROGRESS\n"
    assert "NOTE: actions interrupted by an engine restart: w (CREATE_IN_PROGRESS)" in listed.stderr

    # A command that changes stacks finishes the interrupted create first.
    checked = stoker("stack", "check", "w", check=False)
    assert "Resuming actions interrupted by an engine restart: w (CREATE_IN_PROGRESS)" in checked.stderr
    shown = stoker("stack", "show", "w", "-f", "json").stdout
    assert json.loads(shown)["stack_status"] in ("CHECK_COMPLETE", "CREATE_COMPLETE"), (shown, checked.stdout, checked.stderr)


PLAN_BEFORE = """\
heat_template_version: 2021-04-16
parameters:
  secret: {type: string, hidden: true}
resources:
  word: {type: OS::Heat::RandomString, properties: {length: 8}}
  keep: {type: OS::Heat::Value, properties: {value: {get_param: secret}}}
  copy: {type: OS::Heat::Value, properties: {value: {get_attr: [word, value]}}}
  gone: {type: OS::Heat::None}
"""


def test_cli_update_dry_run_reads_like_a_plan(stoker, tmp_path):
    (tmp_path / "before.yaml").write_text(PLAN_BEFORE)
    (tmp_path / "after.yaml").write_text(PLAN_BEFORE.replace("length: 8", "length: 12").replace("  gone: {type: OS::Heat::None}\n", "  new: {type: OS::Heat::None}\n"))
    stoker("stack", "create", "p", "-t", "before.yaml", "--parameter", "secret=Old-Secret-1")
    plan = stoker("stack", "update", "p", "-t", "after.yaml", "--parameter", "secret=New-Secret-2", "--dry-run", "-f", "json").stdout
    assert "Secret-1" not in plan and "Secret-2" not in plan
    changes = json.loads(plan)["resource_changes"]
    [word] = changes["replaced"]
    assert word["resource_name"] == "word" and "length" in word["reason"]
    assert word["property_changes"] == {"length": {"old": 8, "new": 12}}
    updated = {c["resource_name"]: c["property_changes"] for c in changes["updated"]}
    assert updated["keep"] == {"value": {"old": "******", "new": "******"}}
    # The copy's new value is the new word's, which only the update will know.
    assert updated["copy"]["value"]["known_after"] is True and updated["copy"]["value"]["new"] is None
    assert [c["resource_name"] for c in changes["added"]] == ["new"]
    assert [c["resource_name"] for c in changes["deleted"]] == ["gone"]

    table = stoker("stack", "update", "p", "-t", "after.yaml", "--parameter", "secret=New-Secret-2", "--dry-run").stdout
    assert "properties.length: 8 -> 12" in table and "properties.value: ****** -> ******" in table and "(known after apply)" in table
    assert table.rstrip().splitlines()[-1] == "Plan: 1 to add, 2 to change, 1 to replace, 1 to delete"
    assert "Secret" not in table


OPENSTACK = str(Path(sys.executable).with_name("openstack"))


def test_cli_show_event_list_and_environment_print_what_openstack_prints(cli_server, tmp_path):
    """The same stack read by ``openstack stack ...`` and by ``stoker`` against the same
    server, and by the embedded ``stoker``: the same keys, and the environment with the
    request's parameters folded in (hidden ones masked), as Heat shows it."""
    (tmp_path / "t.yaml").write_text(TEMPLATE.replace("  fail: {type: boolean, default: false}", "  fail: {type: boolean, default: false}\n  key: {type: string, hidden: true}"))
    (tmp_path / "nested.yaml").write_text(NESTED)
    (tmp_path / "env.yaml").write_text("parameters:\n  motd: from the environment\n  fail: false\n")
    project = f"cli-{uuid.uuid4().hex[:12]}"
    remote = environment_of({"STOKER_URL": f"{cli_server.url}/v1/{project}", "STOKER_DATABASE_URL": f"sqlite:///{tmp_path}/none/x.sqlite"})
    embedded = environment_of({"STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 'embedded.sqlite'}"})

    def run(command: list[str], env: dict[str, str]) -> str:
        result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
        return result.stdout

    shown, events, environments = {}, {}, {}
    for where, env in (("remote", remote), ("embedded", embedded)):
        run([STOKER, "stack", "create", "s", "-t", "t.yaml", "-e", "env.yaml", "--parameter", "motd=given", "--parameter", "key=s3cret", "--wait"], env)
        shown[where] = json.loads(run([STOKER, "stack", "show", "s", "-f", "json"], env))
        events[where] = json.loads(run([STOKER, "stack", "event", "list", "s", "-f", "json"], env))
        environments[where] = json.loads(run([STOKER, "stack", "environment", "show", "s", "-f", "json"], env))
    openstack = [OPENSTACK, "--os-auth-type", "none", "--os-endpoint", f"{cli_server.url}/v1/{project}", "stack"]
    shown["openstack"] = json.loads(run([*openstack, "show", "s", "-f", "json"], remote))
    events["openstack"] = json.loads(run([*openstack, "event", "list", "s", "-f", "json"], remote))
    environments["openstack"] = json.loads(run([*openstack, "environment", "show", "s", "-f", "json"], remote))

    assert list(shown["remote"]) == list(shown["openstack"]) and set(shown["embedded"]) == set(shown["openstack"]), shown
    assert {"links", "capabilities", "notification_topics", "deletion_time", "stack_owner", "stack_user_project_id"} <= set(shown["embedded"])
    for where in ("remote", "embedded"):
        assert [list(event) for event in events[where]] == [list(event) for event in events["openstack"]], events
        first = events[where][0]
        assert first["logical_resource_id"] == "s" and first["physical_resource_id"] == shown[where]["id"]
    # openstack prints three of the environment's sections; stoker the whole document.
    assert environments["remote"] == environments["embedded"]
    assert {key: environments["remote"][key] for key in environments["openstack"]} == environments["openstack"]
    assert environments["embedded"]["parameters"] == {"motd": "given", "fail": False, "key": "******"}


def test_cli_options_openstack_stack_has(stoker):
    """The options of ``openstack stack ...`` that scripts use, on both engines:
    update's --tags, --timeout and --rollback; list's --tags/--tag-mode and --deleted;
    resource list's --filter; resource type list's --filter and --long; resource type
    show's --template-type."""
    stoker("stack", "create", "s", "-t", "t.yaml", "--parameter", "motd=hi", "--tags", "web")
    stoker("stack", "create", "gone", "-t", "t.yaml", "--parameter", "motd=hi")
    stoker("stack", "delete", "gone", "--yes", "--wait")

    stoker("stack", "update", "s", "--existing", "--tags", "web,prod", "--timeout", "7", "--rollback", "enabled", "--wait")
    shown = json.loads(stoker("stack", "show", "s", "-f", "json").stdout)
    assert (shown["tags"], shown["timeout_mins"], shown["disable_rollback"]) == (["web", "prod"], 7, False)

    def names(*options: str) -> list[str]:
        return [row["Stack Name"] for row in json.loads(stoker("stack", "list", *options, "-f", "json").stdout)]

    assert names("--tags", "web,dev") == [] and names("--tags", "dev,prod", "--tag-mode", "any") == ["s"]
    assert names("--tags", "web", "--tag-mode", "not-any") == []
    deleted = {row["Stack Name"]: row for row in json.loads(stoker("stack", "list", "--deleted", "-f", "json").stdout)}
    assert set(deleted) == {"s", "gone"} and deleted["gone"]["Deletion Time"] and not deleted["s"]["Deletion Time"]
    refused = stoker("stack", "list", "--tag-mode", "any", check=False)
    assert refused.returncode == 2 and "give --tags too" in refused.stderr

    def resources(*filters: str) -> list[str]:
        listed = json.loads(stoker("stack", "resource", "list", "s", *(f"--filter={f}" for f in filters), "-f", "json").stdout)
        return sorted(row["resource_name"] for row in listed)

    assert resources("type=OS::Heat::RandomString") == ["word"] and resources("name=group", "name=word", "status=COMPLETE") == ["group", "word"]
    assert resources("name=group", "name=word", "action=UPDATE") == []
    refused = stoker("stack", "resource", "list", "s", "--filter", "colour=red", check=False)
    assert refused.returncode == 2 and "KEY one of" in refused.stderr

    described = json.loads(stoker("resource", "type", "list", "--filter", "name=^OS::Heat::Random", "--long", "-f", "json").stdout)
    assert described == [{"Resource Type": "OS::Heat::RandomString", "Description": "A resource which generates a random string."}]
    versioned = json.loads(stoker("resource", "type", "list", "--filter", "version=5.0.0", "--filter", "support_status=SUPPORTED", "-f", "json").stdout)
    assert {"Resource Type": "OS::Heat::None"} in versioned and {"Resource Type": "OS::Heat::RandomString"} not in versioned
    template = yaml.safe_load(stoker("resource", "type", "show", "OS::Heat::RandomString", "--template-type", "hot").stdout)
    assert template["resources"] == {"RandomString": {"type": "OS::Heat::RandomString", "properties": {name: {"get_param": name} for name in template["parameters"]}}}
    assert template["outputs"]["value"] == {"description": "The random string generated by this resource. This value is also available by referencing the resource.", "value": {"get_attr": ["RandomString", "value"]}}
    missing = stoker("resource", "type", "show", "OS::Heat::Nope", "--template-type", "hot", check=False)
    assert missing.returncode == 1 and "OS::Heat::Nope" in missing.stderr and "Traceback" not in missing.stderr


def test_cli_an_alias_to_a_missing_type_names_the_missing_target(stoker, tmp_path):
    (tmp_path / "alias.yaml").write_text("heat_template_version: 2021-04-16\nresources:\n  lb: {type: My::Balancer}\n")
    (tmp_path / "env.yaml").write_text('resource_registry:\n  "My::Balancer": "OS::Heat::RandomStrng"\n')

    refused = stoker("template", "validate", "-t", "alias.yaml", "-e", "env.yaml", check=False)

    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "ERROR: alias.yaml:3:14: resources.lb.type: The Resource Type (My::Balancer) could not be found: the environment maps it to "
        "OS::Heat::RandomStrng, which no plugin or template provides. (did you mean 'OS::Heat::RandomString'?)"
    )
