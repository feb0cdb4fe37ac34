"""The ``stoker`` command in a shell: completion of stack names, resource names, output
keys and resource types (click's completion protocol, as the shell's script drives
it), outputs printed for scripts (``-f value``, ``-f shell`` to ``eval``), and tables
that fit a terminal without breaking a value inside a word. A real process on the
embedded engine and against a real ``stoker serve`` (``cli_backend``, conftest.py)."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.acceptance.conftest import client_environment, environment_of

STOKER = str(Path(sys.executable).with_name("stoker"))

TOKEN = "tok-" + "0123456789abcdef" * 4
SENTENCE = "a long sentence of many short words that wraps at the spaces between them when the terminal is narrow"
TEMPLATE = textwrap.dedent(
    """\
    heat_template_version: 2021-04-16
    parameters:
      token: {type: string}
    resources:
      alpha: {type: OS::Heat::None}
      beta: {type: OS::Heat::None}
      gamma: {type: OS::Heat::None}
    outputs:
      plain: {value: "it's \\"quoted\\" $HOME `date` \\\\ back\\nsecond line"}
      settings: {value: {a: 1, b: [x, y]}}
      2nd-url: {value: "http://example.com/x"}
      token: {value: {get_param: token}}
      note: {value: "SENTENCE"}
    """
).replace("SENTENCE", SENTENCE)


@pytest.fixture
def shell(tmp_path, cli_backend):
    """Runs ``stoker`` with the test's engine: ``shell.run(*args)``, and
    ``shell.complete(line)`` the candidates a shell is offered for ``line`` (its last
    word being completed; a trailing space: a new, empty word)."""
    env = environment_of(cli_backend)

    class Shell:
        environment = env

        def run(self, *args: str, check: bool = True, **extra: str) -> subprocess.CompletedProcess:
            result = subprocess.run(
                [STOKER, *args],
                capture_output=True,
                text=True,
                env={**env, **extra},
                cwd=tmp_path,
                timeout=120,
                stdin=subprocess.DEVNULL,
            )
            assert "Traceback" not in result.stderr, result.stderr
            if check:
                assert result.returncode == 0, result.stderr
            return result

        def complete(self, line: str, **extra: str) -> list[str]:
            return complete(line, {**env, **extra}, tmp_path)

    made = Shell()
    (tmp_path / "shell.yaml").write_text(TEMPLATE)
    made.run(
        "stack",
        "create",
        "web",
        "-t",
        str(tmp_path / "shell.yaml"),
        "--parameter",
        f"token={TOKEN}",
    )
    return made


def complete(line: str, env: dict[str, str], cwd: Path) -> list[str]:
    """What bash is offered for ``line``, by click's protocol (bash_complete)."""
    words = line.split()
    cword = len(words) if line.endswith(" ") else len(words) - 1
    result = subprocess.run(
        [STOKER], capture_output=True, text=True, cwd=cwd, timeout=120, stdin=subprocess.DEVNULL,
        env={**env, "_STOKER_COMPLETE": "bash_complete", "COMP_WORDS": line, "COMP_CWORD": str(cword)},
    )  # fmt: skip
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return [item.split(",", 1)[1] for item in result.stdout.splitlines() if item]


def test_cli_shell_completes_stack_names(shell, tmp_path):
    shell.run(
        "stack", "create", "worker", "-t", str(tmp_path / "shell.yaml"), "--parameter", "token=t"
    )
    assert shell.complete("stoker stack show ") == ["web", "worker"]
    assert shell.complete("stoker stack resource list wo") == ["worker"]
    # the names a command already has are not offered again
    assert shell.complete("stoker stack delete web ") == ["worker"]


def test_cli_shell_completes_resources_and_outputs_of_the_stack_on_the_line_and_types(shell):
    assert shell.complete("stoker stack resource show web b") == ["beta"]
    assert shell.complete("stoker stack hook clear web alpha ") == ["beta", "gamma"]
    assert shell.complete("stoker stack event list web --resource g") == ["gamma"]
    assert shell.complete("stoker stack output show web ") == [
        "plain",
        "settings",
        "2nd-url",
        "token",
        "note",
    ]
    assert shell.complete("stoker resource type show OS::Heat::Non") == ["OS::Heat::None"]
    # no such stack on the line: nothing to offer, and nothing said
    assert shell.complete("stoker stack output show nosuch ") == []


def test_cli_shell_completion_of_a_store_or_server_that_cannot_answer_is_none(tmp_path):
    store = tmp_path / "store.sqlite"
    env = client_environment({"STOKER_DATABASE_URL": f"sqlite:///{store}"})
    (tmp_path / "none.yaml").write_text("heat_template_version: 2021-04-16\n")
    made = subprocess.run(
        [STOKER, "stack", "create", "ok", "-t", "none.yaml"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    assert complete("stoker stack show ", env, tmp_path) == ["ok"]
    # the same store, broken
    store.write_text("this is not a database\n")
    assert complete("stoker stack show ", env, tmp_path) == []
    missing = tmp_path / "missing.sqlite"
    assert (
        complete(
            "stoker stack show ", {**env, "STOKER_DATABASE_URL": f"sqlite:///{missing}"}, tmp_path
        )
        == []
    )
    assert not missing.exists()  # completing makes no store
    # a server nobody listens at
    assert complete("stoker --url http://127.0.0.1:9 stack show ", env, tmp_path) == []
    assert (
        complete(
            "stoker stack resource show web ", {**env, "STOKER_URL": "http://127.0.0.1:9"}, tmp_path
        )
        == []
    )


def test_cli_shell_output_value_prints_the_value_alone(shell):
    assert (
        shell.run("stack", "output", "show", "web", "token", "-f", "value").stdout == TOKEN + "\n"
    )
    assert (
        shell.run("stack", "output", "show", "web", "settings", "-f", "value").stdout
        == '{"a": 1, "b": ["x", "y"]}\n'
    )
    plain = shell.run("stack", "output", "show", "web", "plain", "-f", "value").stdout
    assert plain == 'it\'s "quoted" $HOME `date` \\ back\nsecond line\n'
    # -c still picks the fields, as cliff's
    chosen = shell.run(
        "stack", "output", "show", "web", "token", "-f", "value", "-c", "output_key"
    ).stdout
    assert chosen == "token\n"


def test_cli_shell_outputs_as_shell_variables_eval(shell):
    printed = shell.run("stack", "output", "show", "web", "--all", "-f", "shell").stdout
    script = f'eval "$({STOKER} stack output show web --all -f shell)"\nprintf "%s|" "$plain" "$settings" "$_2nd_url" "$token" "$note"'
    evaluated = subprocess.run(
        ["sh", "-c", script],
        capture_output=True,
        text=True,
        env=shell.environment,
        timeout=120,
        check=True,
    )
    assert evaluated.stdout == "|".join(
        [
            'it\'s "quoted" $HOME `date` \\ back\nsecond line',
            '{"a": 1, "b": ["x", "y"]}',
            "http://example.com/x",
            TOKEN,
            SENTENCE,
            "",
        ]
    ), printed
    prefixed = shell.run(
        "stack",
        "output",
        "show",
        "web",
        "--all",
        "-f",
        "shell",
        "--prefix",
        "web_",
        "-c",
        "2nd-url",
    ).stdout
    assert prefixed == 'web_2nd_url="http://example.com/x"\n'


def test_cli_shell_two_outputs_of_one_variable_name_are_refused(shell, tmp_path):
    (tmp_path / "clash.yaml").write_text(
        "heat_template_version: 2021-04-16\noutputs:\n  db-url: {value: a}\n  db_url: {value: b}\n"
    )
    shell.run("stack", "create", "clash", "-t", str(tmp_path / "clash.yaml"))
    refused = shell.run("stack", "output", "show", "clash", "--all", "-f", "shell", check=False)
    assert refused.returncode == 2 and refused.stdout == ""
    assert "'db-url' and 'db_url' are both the shell variable db_url" in refused.stderr
    assert (
        shell.run("stack", "output", "show", "clash", "--all", "-f", "shell", "-c", "db_url").stdout
        == 'db_url="b"\n'
    )


def _lines(text: str) -> list[str]:
    return [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in text.replace("\r\n", "\n").splitlines()]


def _words_whole_or_cut(lines: list[str], word: str) -> None:
    """``word`` is on one line whole, or its start ends with '…' there: never a piece
    of it on the next line."""
    for line in lines:
        for found in re.findall(r"[0-9a-z-]*[0-9a-f]{6,}[0-9a-z-]*…?", line):
            assert found == word or (found.endswith("…") and word.startswith(found[:-1])), (
                found,
                "\n".join(lines),
            )


def test_cli_shell_table_fitted_to_a_narrow_width_wraps_at_spaces_and_cuts_words_with_a_marker(
    shell,
):
    narrow = _lines(
        shell.run("stack", "output", "show", "web", "token", "--fit-width", COLUMNS="50").stdout
    )
    assert all(len(line) <= 50 for line in narrow), narrow
    _words_whole_or_cut(narrow, TOKEN)
    assert any(line.endswith("… │") for line in narrow), narrow
    sentence = _lines(
        shell.run("stack", "output", "show", "web", "note", "--max-width", "60").stdout
    )
    assert all(len(line) <= 60 for line in sentence)
    cells = [
        line.split("│")[2].strip()
        for line in sentence
        if line.startswith("│") and line.split("│")[2].strip()
    ]
    assert " ".join(cells[cells.index("note") + 1 :]).endswith(SENTENCE), (
        sentence
    )  # wrapped at spaces, every word whole
    wide = _lines(
        shell.run("stack", "output", "show", "web", "token", "--fit-width", COLUMNS="200").stdout
    )
    assert any(TOKEN in line for line in wide)
    # the environment variables of cliff
    by_variable = _lines(
        shell.run("stack", "output", "show", "web", "token", CLIFF_MAX_TERM_WIDTH="50").stdout
    )
    assert by_variable == narrow
    # piped without a width: every value whole
    assert any(
        TOKEN in line
        for line in _lines(
            shell.run("stack", "output", "show", "web", "token", COLUMNS="50").stdout
        )
    )


def test_cli_shell_table_on_a_terminal_fits_it(shell):
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [STOKER, "stack", "output", "show", "web", "token"], stdout=terminal, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            env={**shell.environment, "COLUMNS": "50", "TERM": "xterm"},
        )  # fmt: skip
        os.close(terminal)
        terminal = -1
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal's other end closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        _, stderr = process.communicate(timeout=120)
    finally:
        os.close(controller)
        if terminal != -1:
            os.close(terminal)
    assert process.returncode == 0, stderr
    lines = _lines(b"".join(chunks).decode())
    assert lines and all(len(line) <= 50 for line in lines), lines
    _words_whole_or_cut(lines, TOKEN)
    assert any("tok-0123" in line and line.endswith("… │") for line in lines), lines
