"""The live progress of ``stoker stack create/update/delete --wait``: nested stacks'
resources named by their path (as ``stoker stack event list -n``), a status line on a
terminal (through a real pseudo-terminal), plain lines through a pipe, JSON lines for
machines; and ``stoker stack event list --follow -f json``."""

from __future__ import annotations

import json
import os
import pty
import queue
import select
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from tests.acceptance.conftest import environment_of
from tests.support.waiting import wait_until

STOKER = str(Path(sys.executable).with_name("stoker"))

NESTED = """\
    heat_template_version: 2018-08-31
    resources:
      members:
        type: OS::Heat::ResourceGroup
        properties:
          count: 2
          resource_def:
            type: OS::Heat::RandomString
      other:
        type: OS::Heat::None
"""

FAILING = """\
    heat_template_version: 2018-08-31
    resources:
      fine:
        type: OS::Heat::None
      broken:
        type: OS::Heat::TestResource
        properties:
          fail: true
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def stoker(backend: dict[str, str], tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [STOKER, *args],
        env=environment_of(backend),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def bracketed(text: str) -> set[str]:
    """The resource names of log lines (``... [members.0]: CREATE_COMPLETE ...``)."""
    return {
        line.split("[", 1)[1].split("]", 1)[0]
        for line in text.splitlines()
        if "]: " in line and "[" in line
    }


def test_cli_wait_names_nested_resources_by_their_path_through_a_pipe(cli_backend, tmp_path):
    created = stoker(
        cli_backend,
        tmp_path,
        "stack",
        "create",
        "web",
        "-t",
        write(tmp_path, "nested.yaml", NESTED),
        "--wait",
    )
    assert created.returncode == 0, created.stderr
    names = bracketed(created.stderr)
    assert {"web", "members", "other", "members.0", "members.1"} <= names, created.stderr
    assert not names & {"0", "1"}, created.stderr  # never a bare member's name
    # As the event list names them.
    listed = stoker(cli_backend, tmp_path, "stack", "event", "list", "web", "-n", "5")
    assert {"members.0", "members.1"} <= bracketed(listed.stdout)
    # Piped: plain lines, no control characters, no status line.
    assert "\x1b" not in created.stderr and "\r" not in created.stderr
    assert "resources done" not in created.stderr

    deleted = stoker(cli_backend, tmp_path, "stack", "delete", "-y", "web", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert "members.0" in bracketed(deleted.stderr), deleted.stderr


def test_cli_wait_json_lines_for_machines(cli_backend, tmp_path):
    created = stoker(
        cli_backend,
        tmp_path,
        "stack",
        "create",
        "web",
        "-t",
        write(tmp_path, "nested.yaml", NESTED),
        "--wait",
        "--progress-format",
        "json",
        "-f",
        "json",
    )
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["stack_status"] == "CREATE_COMPLETE"
    events = [json.loads(line) for line in created.stderr.splitlines()]
    assert {
        "id",
        "resource_name",
        "resource_status",
        "resource_status_reason",
        "event_time",
        "physical_resource_id",
    } <= set(events[0])
    assert ("members.1", "CREATE_COMPLETE") in {
        (e["resource_name"], e["resource_status"]) for e in events
    }
    assert (events[-1]["resource_name"], events[-1]["resource_status"]) == (
        "web",
        "CREATE_COMPLETE",
    )

    deleted = stoker(
        cli_backend, tmp_path, "stack", "delete", "-y", "web", "--wait", "--progress-format", "json"
    )
    assert deleted.returncode == 0, deleted.stderr
    lines = [json.loads(line) for line in deleted.stderr.splitlines()]
    assert lines[-1] == {"stack_name": "web", "stack_status": "DELETE_COMPLETE"}
    assert ("web", "DELETE_COMPLETE") in {
        (e["resource_name"], e["resource_status"]) for e in lines[:-1]
    }


TYPO_FAILING = """\
    heat_template_version: 2018-08-31
    resources:
      fine:
        type: OS::Heat::None
        properties:
          note: {get_parm: nothing}
      broken:
        type: OS::Heat::TestResource
        properties:
          fail: true
"""


def test_cli_wait_f_json_writes_every_stderr_line_as_json(cli_backend, tmp_path):
    """``--wait -f json`` is for machines: stderr is JSON lines (``--progress-format
    auto``), the template's warnings and the final error among the events."""
    created = stoker(
        cli_backend,
        tmp_path,
        "stack",
        "create",
        "web",
        "-t",
        write(tmp_path, "failing.yaml", TYPO_FAILING),
        "--wait",
        "-f",
        "json",
    )
    assert created.returncode == 1, created.stderr
    assert json.loads(created.stdout)["stack_status"] == "CREATE_FAILED"
    lines = [json.loads(line) for line in created.stderr.splitlines()]
    warnings = [line["warning"] for line in lines if "warning" in line]
    assert len(warnings) == 1 and "(did you mean get_param?)" in warnings[0], warnings
    assert ("broken", "CREATE_FAILED") in {
        (line.get("resource_name"), line.get("resource_status")) for line in lines
    }
    assert "CREATE_FAILED" in lines[-1]["error"], lines[-1]

    # The same command for a person: log lines.
    logged = stoker(
        cli_backend,
        tmp_path,
        "stack",
        "create",
        "web2",
        "-t",
        write(tmp_path, "failing.yaml", TYPO_FAILING),
        "--wait",
    )
    assert logged.returncode == 1
    assert logged.stderr.startswith("WARNING: "), logged.stderr
    assert "[broken]: CREATE_FAILED" in logged.stderr
    assert logged.stderr.splitlines()[-1].startswith("ERROR: ")


def run_on_a_terminal(backend: dict[str, str], tmp_path: Path, *args: str) -> tuple[int, str, str]:
    """Run ``stoker`` with stderr on a pseudo-terminal (stdout piped): (exit code,
    what the terminal showed, stdout)."""
    leader, follower = pty.openpty()
    env = {**environment_of(backend), "TERM": "xterm-256color", "COLUMNS": "160"}
    process = subprocess.Popen(
        [STOKER, *args],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
    )
    os.close(follower)
    shown = bytearray()
    while True:
        ready, _, _ = select.select([leader], [], [], 180)
        assert ready, "the command wrote nothing for 180 s"
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the command ended
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert process.stdout is not None
    out = process.stdout.read().decode()
    return process.wait(timeout=180), shown.decode(errors="replace"), out


def test_cli_wait_on_a_terminal_shows_a_live_status_line(cli_backend, tmp_path):
    code, shown, out = run_on_a_terminal(
        cli_backend,
        tmp_path,
        "stack",
        "create",
        "web",
        "-t",
        write(tmp_path, "failing.yaml", FAILING),
        "--wait",
    )
    assert code == 1, shown
    assert "Traceback" not in shown
    assert "\x1b[" in shown  # a status line redrawn in place
    # The count: two resources, one done, one failed; and the time gone by.
    assert "1/2 resources done, 1 failed" in shown, shown
    assert "elapsed" in shown
    assert "[broken]: CREATE_FAILED" in shown
    assert "\x1b" not in out  # stdout, piped, stays plain


def test_cli_event_list_follow_json_prints_an_object_a_line(cli_backend, tmp_path):
    made = stoker(
        cli_backend,
        tmp_path,
        "stack",
        "create",
        "web",
        "-t",
        write(tmp_path, "nested.yaml", NESTED),
    )
    assert made.returncode == 0, made.stderr
    follower = subprocess.Popen(
        [STOKER, "stack", "event", "list", "web", "-n", "5", "--follow", "-f", "json"],
        env=environment_of(cli_backend), cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(line) for line in follower.stdout], daemon=True
    ).start()  # type: ignore[union-attr]
    seen: list[dict] = []

    def has(name: str, status: str) -> bool:
        while not lines.empty():
            seen.append(json.loads(lines.get()))  # each line one whole JSON object
        return any((e["resource_name"], e["resource_status"]) == (name, status) for e in seen)

    try:
        # The events so far, at once (flushed, though piped), then the new ones as they come.
        wait_until(lambda: has("members.1", "CREATE_COMPLETE"), "the events so far")
        checked = stoker(cli_backend, tmp_path, "stack", "check", "web")
        assert checked.returncode == 0, checked.stderr
        wait_until(
            lambda: has("members.0", "CHECK_COMPLETE") and has("web", "CHECK_COMPLETE"),
            "the new events",
        )
    finally:
        follower.send_signal(signal.SIGINT)
        follower.wait(timeout=60)
    assert "Traceback" not in follower.stderr.read()  # type: ignore[union-attr]
    assert {"members.0", "members.1"} <= {e["resource_name"] for e in seen}


def test_cli_follow_refuses_a_format_it_cannot_stream(tmp_path):
    backend = {"STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite'}"}
    refused = stoker(backend, tmp_path, "stack", "event", "list", "web", "--follow", "-f", "csv")
    assert refused.returncode == 2
    assert "use it with the log format, or json" in refused.stderr
