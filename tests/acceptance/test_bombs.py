"""Small templates that ask for huge values or endless work, through the real parts.

Memory bombs go to the real ``stoker`` CLI in a subprocess whose peak RSS is measured
(and whose address space is capped, so a regression fails the test instead of the
machine); expression bombs go to a real ``stoker serve`` on 127.0.0.1 while another
client keeps asking for the stack list, which must keep being answered.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.acceptance.test_api import Server, raw
from tests.support import measured

STOKER = str(Path(sys.executable).with_name("stoker"))
# Generous: the CLI itself takes about 70 MB.
MAX_RSS_BYTES = 300 * 1024 * 1024
# What a bomb may reach before the kernel refuses it more (the test then fails on RSS).
ADDRESS_SPACE_BYTES = 2 * 1024 * 1024 * 1024


def _items(count: int) -> str:
    return ", ".join(f"v{index:02d}" for index in range(count))


REPEAT = f"""\
heat_template_version: 2021-04-16
resources:
  bomb:
    type: OS::Heat::Value
    properties:
      value:
        repeat:
          template: "%a%%b%%c%%d%%e%"
          for_each:
            "%a%": &l [{_items(100)}]
            "%b%": *l
            "%c%": *l
            "%d%": *l
            "%e%": *l
"""


def _doubling(resources: int) -> str:
    """str_replace that doubles its input, chained through ``resources`` resources."""
    lines = ["heat_template_version: 2021-04-16", "resources:", "  r0:", "    type: OS::Heat::Value", "    properties:", "      value: ab"]
    for index in range(1, resources):
        lines += [
            f"  r{index}:",
            "    type: OS::Heat::Value",
            "    properties:",
            "      value:",
            "        str_replace:",
            "          template: XX",
            f"          params: {{X: {{get_attr: [r{index - 1}, value]}}}}",
        ]
    return "\n".join(lines) + "\n"


JOIN = f"""\
heat_template_version: 2021-04-16
resources:
  bomb:
    type: OS::Heat::Value
    properties:
      value:
        list_join: ["", [&s {"x" * 400_000}, {", ".join(["*s"] * 5000)}]]
"""


def run_measured(tmp_path: Path, *args: str, timeout_s: float = 120) -> tuple[int, str, int]:
    """Run the CLI; its exit status, its stderr, and its peak RSS in bytes."""
    env = {**os.environ, "STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 'bombs.sqlite'}"}
    env.pop("STOKER_DEBUG", None)
    return measured.run_measured([STOKER, *args], env=env, cwd=tmp_path, timeout_s=timeout_s, address_space_bytes=ADDRESS_SPACE_BYTES)


def test_bomb_repeat_over_aliased_lists_is_refused_in_little_memory(tmp_path):
    (tmp_path / "bomb.yaml").write_text(REPEAT)

    status, stderr, peak = run_measured(tmp_path, "stack", "create", "bomb", "-t", "bomb.yaml")

    assert status == 1, stderr
    assert '"repeat" makes a value of at least 10000000000 bytes' in stderr
    assert "bomb.yaml:7:9: resources.bomb.properties.value" in stderr
    assert peak < MAX_RSS_BYTES, f"peak RSS {peak} bytes"


def test_bomb_str_replace_doubling_through_resources_fails_in_little_memory(tmp_path):
    (tmp_path / "bomb.yaml").write_text(_doubling(39))

    status, stderr, peak = run_measured(tmp_path, "stack", "create", "bomb", "-t", "bomb.yaml", "-f", "json")

    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    assert peak < MAX_RSS_BYTES, f"peak RSS {peak} bytes"
    # r18 holds 2 ** 19 characters; r19's 2 ** 20, quoted, pass the 1 MiB budget.
    assert status == 1, stderr
    assert "CREATE_FAILED" in stderr
    assert 'resources.r19.properties.value: "str_replace" makes a value of' in stderr
    assert (tmp_path / "bombs.sqlite").stat().st_size < 50 * 1024 * 1024


def test_bomb_list_join_of_aliases_of_a_long_string_is_refused_in_little_memory(tmp_path):
    (tmp_path / "bomb.yaml").write_text(JOIN)

    status, stderr, peak = run_measured(tmp_path, "stack", "create", "bomb", "-t", "bomb.yaml")

    assert status == 1, stderr
    assert "bomb.yaml:7:" in stderr and "expands to more than 2097152 bytes" in stderr
    assert peak < MAX_RSS_BYTES, f"peak RSS {peak} bytes"


def _cli(tmp_path: Path, *args: str, **variables: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 'values.sqlite'}", **variables}
    env.pop("STOKER_DEBUG", None)
    return subprocess.run([STOKER, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)


def test_bomb_stored_property_over_the_budget_fails_the_resource(tmp_path):
    (tmp_path / "big.yaml").write_text(
        "heat_template_version: 2021-04-16\nresources:\n  big:\n    type: OS::Heat::Value\n"
        f"    properties:\n      value: {'x' * 2000}\n"
    )

    created = _cli(tmp_path, "stack", "create", "big", "-t", "big.yaml", STOKER_MAX_VALUE_BYTES="1000")

    assert created.returncode == 1, created.stderr
    assert "Traceback" not in created.stderr
    assert (
        "resources.big.properties.value: The property 'value' makes a value of more than 1000 bytes; "
        "one value may take at most 1000 bytes (make the value smaller, or raise STOKER_MAX_VALUE_BYTES)"
    ) in created.stderr


def test_bomb_output_over_the_budget_is_an_output_error(tmp_path):
    (tmp_path / "big.yaml").write_text(
        "heat_template_version: 2021-04-16\nresources: {}\n"
        f"outputs:\n  big:\n    value: {'x' * 2000}\n  small:\n    value: fine\n"
    )
    assert _cli(tmp_path, "stack", "create", "big", "-t", "big.yaml", STOKER_MAX_VALUE_BYTES="1000").returncode == 0

    shown = _cli(tmp_path, "stack", "output", "show", "big", "--all", "-f", "json", STOKER_MAX_VALUE_BYTES="1000")

    assert shown.returncode == 0, shown.stderr
    outputs = json.loads(shown.stdout)
    assert outputs["small"]["output_value"] == "fine"
    assert outputs["big"]["output_value"] is None
    assert outputs["big"]["output_error"].startswith("The output 'big' makes a value of more than 1000 bytes")


# -- expressions that would hold the server -----------------------------------------

REGEX = "regex('(a+)+$').matches('" + "a" * 48 + "!')"

EXPRESSIONS = f"""\
heat_template_version: 2021-04-16
resources:
  plain:
    type: OS::Heat::Value
    properties:
      value: fine
outputs:
  backtracking:
    value: {{yaql: {{expression: "{REGEX}"}}}}
  power:
    value: {{yaql: {{expression: "pow(10, 10000000)"}}}}
"""

BACKTRACKING_PROPERTY = f"""\
heat_template_version: 2021-04-16
resources:
  held:
    type: OS::Heat::Value
    properties:
      value: {{yaql: {{expression: "str({REGEX})"}}}}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("bombs") / "bombs.sqlite").start()
    yield running
    # A server held by an expression ignores SIGINT: make sure it goes, then say so.
    assert running.process is not None
    held = running.process.poll() is None and _held(running)
    running.stop(kill=held)
    assert not held, "the server no longer answered"


def _held(server: Server) -> bool:
    try:
        urllib.request.urlopen(server.endpoint + "/stacks", timeout=3).read()
        return False
    except OSError:
        return True


class Watcher:
    """Asks for the stack list again and again, recording the slowest answer."""

    def __init__(self, server: Server):
        self.server = server
        self.slowest = 0.0
        self.answers = 0
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Watcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                urllib.request.urlopen(self.server.endpoint + "/stacks", timeout=5).read()
                self.answers += 1
            except OSError as error:
                self.failures.append(str(error))
            self.slowest = max(self.slowest, time.monotonic() - started)
            time.sleep(0.05)


def _create(server: Server, name: str, template: str) -> str:
    """Create the stack; its path (``/stacks/NAME/ID``)."""
    status, body = raw(server, "POST", "/stacks", {"stack_name": name, "template": template})
    assert status == 201, body
    return f"/stacks/{name}/{body['stack']['id']}"


def _wait_for_status(server: Server, path: str, timeout_s: float = 15) -> dict:
    deadline = time.monotonic() + timeout_s
    while True:
        # Outputs are left unresolved: only the action's progress is wanted here.
        status, body = raw(server, "GET", f"{path}?resolve_outputs=false")
        assert status == 200, body
        stack = body["stack"]
        if not stack["stack_status"].endswith("IN_PROGRESS"):
            return stack
        assert time.monotonic() < deadline, stack["stack_status"]
        time.sleep(0.1)


def test_bomb_yaql_outputs_are_answered_while_the_server_serves_others(server):
    path = _create(server, "expressions", EXPRESSIONS)
    assert _wait_for_status(server, path)["stack_status"] == "CREATE_COMPLETE"

    with Watcher(server) as watcher:
        started = time.monotonic()
        status, body = raw(server, "GET", f"{path}/outputs/backtracking")
        backtracking_s = time.monotonic() - started
        started = time.monotonic()
        power_status, power = raw(server, "GET", f"{path}/outputs/power")
        power_s = time.monotonic() - started
        time.sleep(0.3)

    assert status == 200, body
    assert body["output"]["output_value"] is False
    assert backtracking_s < 6  # "a few seconds": the old server never answered
    assert power_status == 200, power
    assert power["output"]["output_error"] == (
        "The yaql expression failed: the expression ran longer than 1 s and was stopped"
    )
    assert power_s < 6  # the old server took 12-15 s
    assert watcher.answers > 0 and not watcher.failures, watcher.failures
    assert watcher.slowest < 6


def test_bomb_yaql_property_does_not_hold_the_server(server):
    with Watcher(server) as watcher:
        path = _create(server, "held", BACKTRACKING_PROPERTY)
        stack = _wait_for_status(server, path)
        time.sleep(0.3)

    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert watcher.answers > 0 and not watcher.failures, watcher.failures
    assert watcher.slowest < 6
    status, body = raw(server, "GET", f"{path}/resources/held")
    assert status == 200, body
    assert body["resource"]["attributes"]["value"] == "false"


def test_bomb_server_leaves_no_yaql_worker_behind(tmp_path):
    server = Server(tmp_path / "workers.sqlite").start()
    try:
        path = _create(server, "one", EXPRESSIONS)
        _wait_for_status(server, path)
        assert raw(server, "GET", f"{path}/outputs/backtracking")[0] == 200
        assert server.process is not None
        workers = _children(server.process.pid)
        assert workers, "the expression was evaluated in a worker process"
    finally:
        server.stop()
    deadline = time.monotonic() + 5
    while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if _running(pid)]


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] if Path(f"/proc/{pid}/stat").exists() else "X"
    return state != "Z"

