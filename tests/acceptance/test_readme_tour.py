"""README.md's "A short tour", run exactly as written: its bash block is taken from the
README (never copied here), and run in order by bash on a fresh HOME, so on the
embedded engine's default store, with the installed ``stoker`` on PATH and a copy of
``examples/`` in the working directory, as a user runs it from a fresh clone. And every
``stoker`` command the README and docs/ show names commands and options that exist."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from markdown_it import MarkdownIt

from stoker.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
TOUR_HEADING = "A short tour"
# About 60 commands, each a fresh process: minutes on a busy 2-core machine.
TOUR_TIMEOUT_S = 1500
pytestmark = [pytest.mark.slow, pytest.mark.timeout(TOUR_TIMEOUT_S + 60)]


def readme_block(heading: str) -> str:
    """The first bash code block under the level-2 ``heading`` of README.md."""
    tokens = MarkdownIt().parse((ROOT / "README.md").read_text())
    under = False
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            under = tokens[index + 1].content == heading
        elif under and token.type == "fence" and token.info.strip() == "bash":
            return token.content
    raise AssertionError(f"README.md has no bash block under '## {heading}'")


def tour_environment(home: Path) -> dict[str, str]:
    """A user's shell: nothing of stoker's or OpenStack's set, a HOME of its own (so the
    default store, ~/.local/share/stoker), the installed ``stoker`` first on PATH."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("STOKER_", "OS_", "XDG_"))
    }
    env.update(
        HOME=str(home),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
        COLUMNS="200",
    )
    return env


def test_readme_tour_runs_in_order_on_a_fresh_store(tmp_path):
    tour = readme_block(TOUR_HEADING)
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "examples", clone / "examples")
    home = tmp_path / "home"
    home.mkdir()
    script = clone / "tour.sh"
    script.write_text(tour)

    # -e: any line that fails stops the tour and fails the test.
    result = subprocess.run(
        ["bash", "-e", "-o", "pipefail", str(script)],
        capture_output=True, text=True, env=tour_environment(home), cwd=clone, timeout=TOUR_TIMEOUT_S, stdin=subprocess.DEVNULL,
    )  # fmt: skip

    assert result.returncode == 0, f"the tour stopped:\n{result.stderr[-3000:]}"
    assert "Traceback" not in result.stderr, result.stderr
    assert (home / ".local" / "share" / "stoker" / "stoker.sqlite").is_file()
    out, progress = result.stdout, result.stderr
    # The update --dry-run's plan, with its reason.
    assert "Plan: 0 to add, 2 to change, 1 to replace, 0 to delete" in out
    assert "property salt changed and cannot be updated in place" in out
    # The output follows app_name, changed by the update that kept the template.
    assert "books-" in out
    # The hook paused the background create, and clearing it let the create finish.
    assert "CREATE paused until Hook pre-create is cleared" in out
    assert re.search(r"^CREATE_COMPLETE$", out, re.MULTILINE), out
    # The cancelled create rolled back.
    assert "Stack doomed: cancel requested" in progress
    assert re.search(r"^ROLLBACK_COMPLETE$", out, re.MULTILINE), out
    # The exported stack was adopted under its new name; then everything was deleted.
    assert "[copy]: ADOPT_COMPLETE  Stack ADOPT completed successfully" in progress
    for name in ("web", "held", "doomed", "copy"):
        assert f"Stack {name} DELETE_COMPLETE" in progress
    assert (clone / "web.json").is_file()


def shown_commands(text: str) -> list[str]:
    """Every ``stoker ...`` command in the bash code blocks of a Markdown text: lines
    joined at a trailing backslash, split at ``;``, ``&&``, ``|`` and ``&``, comments,
    redirections and leading ``NAME=value`` assignments dropped."""
    commands = []
    for token in MarkdownIt().parse(text):
        if token.type != "fence" or token.info.strip() != "bash":
            continue
        for line in token.content.replace("\\\n", " ").splitlines():
            for part in re.split(r"&&|\|\|?|;|&", line.split(" #", 1)[0]):
                words = part.split(">", 1)[0].split()
                while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                    words.pop(0)
                if words and words[0] == "stoker":
                    commands.append(" ".join(words))
    return commands


def unknown_words(command: str) -> list[str]:
    """What of ``command`` the ``stoker`` command does not have: a command name, or an
    option of the command it is given to (the root's options before the first command)."""

    def options(cmd: click.Command) -> dict[str, bool]:
        """Each option's names, and whether it takes a value."""
        names = {"-h": False, "--help": False}
        for param in cmd.params:
            if isinstance(param, click.Option):
                takes_value = not (param.is_flag or param.count)
                names.update(dict.fromkeys(param.opts + param.secondary_opts, takes_value))
        return names

    current: click.Command = main
    unknown = []
    words = iter(shlex.split(command)[1:])
    for word in words:
        if word.startswith("-") and not re.fullmatch(r"-?\d+", word):
            name = word.split("=", 1)[0]
            takes_value = options(current).get(name)
            if takes_value is None:
                unknown.append(word)
            elif takes_value and "=" not in word:
                next(words, None)
        elif isinstance(current, click.Group):
            sub = current.get_command(click.Context(current), word)
            if sub is None:
                unknown.append(word)
                break
            current = sub
    return unknown


def test_docs_show_only_commands_and_options_stoker_has():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    shown = {page.name: shown_commands(page.read_text()) for page in pages}
    assert len(shown["README.md"]) > 40 and shown["user-guide.md"]
    wrong = {
        (page, command): unknown
        for page, commands in shown.items()
        for command in commands
        if (unknown := unknown_words(command))
    }
    assert wrong == {}
