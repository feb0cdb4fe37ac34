"""The ``stoker`` command reading hostile template files: each is refused fast, in one
line, with a bounded peak memory (measured on the real subprocess with ``os.wait4``),
because the CLI checks the size before reading and parses once with the engine's
limits. And ``template validate`` refuses what a create would refuse (resource limit)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.acceptance.conftest import environment_of
from tests.support import measured
from tests.support.stacks import GROUP_OF_GROUPS

STOKER = str(Path(sys.executable).with_name("stoker"))
PEAK_RSS_LIMIT_BYTES = 300 * 1024 * 1024
DEADLINE_S = 30


def run_bounded(backend: dict[str, str], tmp_path: Path, *args: str, environment: dict[str, str] | None = None) -> tuple[int, str, int]:
    """Run ``stoker args`` against ``backend`` (conftest.py: every test here runs on the
    embedded engine and against a server, where the command refuses a hostile file
    before it sends anything) to its end or the deadline; (exit status, stderr, peak RSS
    in bytes). Past the deadline the process is killed and the test fails."""
    env = environment_of(backend, **(environment or {}))
    status, stderr, peak = measured.run_measured([STOKER, *args], env=env, cwd=tmp_path, timeout_s=DEADLINE_S)
    if status == -9:
        pytest.fail(f"stoker {' '.join(args)} still running after {DEADLINE_S} s")
    return status, stderr, peak


def billion_laughs() -> str:
    lines = ["heat_template_version: 2021-04-16", "parameters:", "  p:", "    type: json", '    default: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    body = [f"l{level}: &a{level} [{', '.join([f'*a{level - 1}'] * 9)}]" for level in range(1, 10)]
    return "\n".join(lines) + "\noutputs:\n  o:\n    value: {" + ", ".join(body) + "}\n"


def deeply_nested(depth: int = 100_000) -> str:
    return "heat_template_version: 2021-04-16\nresources: {}\noutputs:\n  o:\n    value: " + "[" * depth + "]" * depth + "\n"


def write_big(path: Path, size: int = 50 * 1024 * 1024) -> None:
    resource = "  r{}:\n    type: OS::Heat::None\n    properties: {{a: " + '"' + "x" * 200 + '"' + "}}\n"
    with path.open("w") as stream:
        stream.write("heat_template_version: 2021-04-16\nresources:\n")
        index = 0
        while stream.tell() < size:
            stream.write(resource.format(index))
            index += 1


def assert_refused(result: tuple[int, str, int], expected: str) -> None:
    status, stderr, peak = result
    assert status == 1, stderr
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("ERROR: ") and expected in lines[0], stderr
    assert peak < PEAK_RSS_LIMIT_BYTES, f"peak RSS {peak / 2**20:.0f} MiB"


@pytest.mark.parametrize("command", [("template", "validate"), ("stack", "create", "bomb")])
def test_cli_loading_billion_laughs_is_refused_fast(cli_backend, tmp_path, command):
    (tmp_path / "laughs.yaml").write_text(billion_laughs())
    result = run_bounded(cli_backend, tmp_path, *command, "-t", str(tmp_path / "laughs.yaml"))
    assert_refused(result, "laughs.yaml:")
    assert "expands to more than" in result[1]


@pytest.mark.parametrize("command", [("template", "validate"), ("stack", "create", "deep")])
def test_cli_loading_deep_nesting_is_refused_with_its_place(cli_backend, tmp_path, command):
    (tmp_path / "deep.yaml").write_text(deeply_nested())
    result = run_bounded(cli_backend, tmp_path, *command, "-t", str(tmp_path / "deep.yaml"))
    assert_refused(result, "deep.yaml:5:")
    assert "nested more than 200 levels deep" in result[1]


@pytest.mark.parametrize("command", [("template", "validate"), ("stack", "create", "big")])
def test_cli_loading_an_oversized_file_is_refused_before_it_is_read(cli_backend, tmp_path, command):
    write_big(tmp_path / "big.yaml")
    started = time.monotonic()
    result = run_bounded(cli_backend, tmp_path, *command, "-t", str(tmp_path / "big.yaml"))
    assert_refused(result, "exceeds maximum allowed size (524288 bytes)")
    # Nothing of the 50 MB was read: the peak is that of a command that did nothing.
    assert result[2] < 120 * 1024 * 1024, f"peak RSS {result[2] / 2**20:.0f} MiB"
    assert time.monotonic() - started < 15


def test_cli_loading_a_bomb_in_a_nested_template_is_refused(cli_backend, tmp_path):
    (tmp_path / "laughs.yaml").write_text(billion_laughs())
    (tmp_path / "deep.yaml").write_text(deeply_nested())
    (tmp_path / "parent.yaml").write_text(
        "heat_template_version: 2021-04-16\nresources:\n  a: {type: laughs.yaml}\n  b: {type: deep.yaml}\n"
    )
    status, stderr, peak = run_bounded(cli_backend, tmp_path, "template", "validate", "-t", str(tmp_path / "parent.yaml"))
    assert status == 1, stderr
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    assert peak < PEAK_RSS_LIMIT_BYTES


def test_cli_loading_an_oversized_get_file_target_is_refused(cli_backend, tmp_path):
    write_big(tmp_path / "big.txt", 2 * 1024 * 1024)
    (tmp_path / "t.yaml").write_text(
        "heat_template_version: 2021-04-16\nresources:\n  r:\n    type: OS::Heat::Value\n    properties: {value: {get_file: big.txt}}\n"
    )
    result = run_bounded(cli_backend, tmp_path, "template", "validate", "-t", str(tmp_path / "t.yaml"))
    assert_refused(result, "get_file big.txt: size (2097")


THREE = "heat_template_version: 2021-04-16\nresources:\n  a: {type: OS::Heat::None}\n  b: {type: OS::Heat::None}\n  c: {type: OS::Heat::None}\n"


# Embedded only: the limit is the engine's setting (STOKER_MAX_RESOURCES_PER_STACK of the
# process that validates), which a running server has already read at its start.
@pytest.mark.parametrize("cli_backend", ["embedded"], indirect=True)
def test_cli_template_validate_refuses_a_template_over_the_resource_limit(cli_backend, tmp_path):
    (tmp_path / "three.yaml").write_text(THREE)
    (tmp_path / "parent.yaml").write_text("heat_template_version: 2021-04-16\nresources:\n  child: {type: three.yaml}\n")
    limit = {"STOKER_MAX_RESOURCES_PER_STACK": "2"}
    status, stderr, _ = run_bounded(cli_backend, tmp_path, "template", "validate", "-t", str(tmp_path / "three.yaml"), environment=limit)
    assert status == 1, stderr
    assert stderr.strip() == (
        "ERROR: resources: The template has 3 resources; a stack may have at most 2 "
        "(raise max_resources_per_stack (STOKER_MAX_RESOURCES_PER_STACK), or split the stack)"
    )
    # The limit counts the whole tree under the root, as Heat's does (the nested stack's
    # resource too): 1 + 3 resources here. A create would fail half-way; validate says so.
    status, stderr, _ = run_bounded(cli_backend, tmp_path, "template", "validate", "-t", str(tmp_path / "parent.yaml"), environment={"STOKER_MAX_RESOURCES_PER_STACK": "3"})
    assert status == 1, stderr
    assert stderr.startswith("ERROR: ") and "parent.yaml:3:10: resources.child.resources: The stack would have 4 resources with its nested stacks (3 resources here)" in stderr, stderr
    status, stderr, _ = run_bounded(cli_backend, tmp_path, "template", "validate", "-t", str(tmp_path / "three.yaml"), environment={"STOKER_MAX_RESOURCES_PER_STACK": "3"})
    assert status == 0, stderr
    # A group validates one member, but its nested stack will have ``count``.
    (tmp_path / "group.yaml").write_text(
        "heat_template_version: 2021-04-16\nresources:\n  group:\n    type: OS::Heat::ResourceGroup\n"
        "    properties: {count: 3, resource_def: {type: OS::Heat::None}}\n"
    )
    status, stderr, _ = run_bounded(cli_backend, tmp_path, "template", "validate", "-t", str(tmp_path / "group.yaml"), environment={"STOKER_MAX_RESOURCES_PER_STACK": "3"})
    assert status == 1, stderr
    assert stderr.startswith("ERROR: ") and (
        "group.yaml:5:25: resources.group.properties.count: The stack would have 4 resources with its nested stacks (3 members of 1 resource each)" in stderr
    ), stderr
    status, stderr, _ = run_bounded(cli_backend, tmp_path, "template", "validate", "-t", str(tmp_path / "group.yaml"), environment={"STOKER_MAX_RESOURCES_PER_STACK": "4"})
    assert status == 0, stderr


@pytest.mark.parametrize("command", [("template", "validate"), ("stack", "create", "groups")])
def test_cli_loading_a_group_of_groups_over_the_tree_limit_is_refused(cli_backend, tmp_path, command):
    """The limit counts the whole tree under the root (1 + 1000 x 1001 resources), as
    Heat's does: refused at validation, in one line naming the count and the setting."""
    (tmp_path / "groups.yaml").write_text(GROUP_OF_GROUPS)
    result = run_bounded(cli_backend, tmp_path, *command, "-t", str(tmp_path / "groups.yaml"))
    assert_refused(result, "resources.outer.properties.count: The stack would have 1001001 resources with its nested stacks (1000 members of 1001 resources each)")
    assert "at most 1000 together" in result[1] and "STOKER_MAX_RESOURCES_PER_STACK" in result[1]


def test_cli_loading_adopt_data_nested_too_deeply_is_refused(cli_backend, tmp_path):
    (tmp_path / "adopt.json").write_text('{"template": ' + "[" * 100_000 + "]" * 100_000 + "}")
    result = run_bounded(cli_backend, tmp_path, "stack", "adopt", "x", "--adopt-file", str(tmp_path / "adopt.json"), environment={"STOKER_ENABLE_STACK_ADOPT": "true"})
    assert_refused(result, "adopt.json:1:")
    assert "nested more than" in result[1]


NUL_ESCAPED = 'heat_template_version: 2021-04-16\nresources:\n  r:\n    type: OS::Heat::Value\n    properties:\n      value: "a\\0b"\n'
NUL_RAW = "heat_template_version: 2021-04-16\nresources:\n  r:\n    type: OS::Heat::Value\n    properties:\n      value: a\x00b\n"


@pytest.mark.parametrize("command", [("template", "validate"), ("stack", "create", "nul")])
@pytest.mark.parametrize(("text", "place"), [(NUL_ESCAPED, "nul.yaml:6:14: resources.r.properties.value"), (NUL_RAW, "nul.yaml:6:15")])
def test_cli_loading_a_nul_character_is_refused_at_its_place(cli_backend, tmp_path, command, text, place):
    # PostgreSQL cannot store a NUL character; it is refused on every database alike.
    (tmp_path / "nul.yaml").write_bytes(text.encode())
    result = run_bounded(cli_backend, tmp_path, *command, "-t", str(tmp_path / "nul.yaml"))
    assert_refused(result, place)
    assert "NUL character" in result[1]


def test_cli_loading_a_nul_character_in_an_environment_or_file_is_refused(cli_backend, tmp_path):
    (tmp_path / "env.yaml").write_text('parameter_defaults:\n  word: "\\x00"\n')
    (tmp_path / "t.yaml").write_text("heat_template_version: 2021-04-16\nparameters:\n  word: {type: string, default: x}\nresources: {}\n")
    result = run_bounded(cli_backend, tmp_path, "stack", "create", "nul", "-t", str(tmp_path / "t.yaml"), "-e", str(tmp_path / "env.yaml"))
    assert_refused(result, "env.yaml:2:9: parameter_defaults.word")
    (tmp_path / "blob.bin").write_bytes(b"a\x00b")
    (tmp_path / "g.yaml").write_text("heat_template_version: 2021-04-16\nresources:\n  r:\n    type: OS::Heat::Value\n    properties: {value: {get_file: blob.bin}}\n")
    result = run_bounded(cli_backend, tmp_path, "stack", "create", "nul", "-t", str(tmp_path / "g.yaml"))
    assert_refused(result, "files.")
    assert "NUL character" in result[1]
    result = run_bounded(cli_backend, tmp_path, "stack", "create", "nul", "-t", str(tmp_path / "t.yaml"), "--parameter-file", f"word={tmp_path / 'blob.bin'}")
    assert_refused(result, "parameters.word")
    assert "NUL character" in result[1]


def test_cli_loading_adopt_data_with_a_nul_character_is_refused(cli_backend, tmp_path):
    (tmp_path / "adopt.json").write_text('{"template": {"heat_template_version": "2021-04-16", "resources": {}}, "resources": {"r": {"resource_data": {"k": "a\\u0000"}}}}')
    result = run_bounded(cli_backend, tmp_path, "stack", "adopt", "x", "--adopt-file", str(tmp_path / "adopt.json"), environment={"STOKER_ENABLE_STACK_ADOPT": "true"})
    assert_refused(result, "adopt.json:1:")
    assert "resources.r.resource_data.k" in result[1] and "NUL character" in result[1]
