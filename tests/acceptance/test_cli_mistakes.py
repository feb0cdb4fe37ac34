"""A newcomer's mistakes (issue 30), as the ``stoker`` command meets them, embedded and
against a server: a key written twice and a misspelt function name are placed warnings
of validate, create, update and preview; ``template validate --strict`` fails on them and
on what a create would refuse; error texts say the problem once, plainly, at its place;
a mistyped stack name gets "Did you mean"; a wrong ``--url`` path says what was tried."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.acceptance.conftest import client_environment
from tests.acceptance.test_cli import run, write  # noqa: F401 - run is a fixture

STOKER = str(Path(sys.executable).with_name("stoker"))

DUPLICATES = """\
heat_template_version: 2018-08-31
resources:
  web:
    type: OS::Heat::None
  web:
    type: OS::Heat::RandomString
resources:
  db:
    type: OS::Heat::None
"""

TYPOS = """\
heat_template_version: 2018-08-31
parameters:
  name: {type: string, default: x}
resources:
  web:
    type: OS::Heat::Value
    properties:
      value: {get_parm: name}
  random:
    type: OS::Heat::RandomString
outputs:
  joined:
    value: {str_replce: {template: a, params: {}}}
  length:
    value: {get_atr: [random, value]}
"""


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("WARNING: ")]


def test_cli_mistakes_duplicate_keys_are_placed_warnings_of_validate_create_and_update(
    run,  # noqa: F811 - the fixture imported above
    tmp_path,
):
    path = write(tmp_path, "dup.yaml", DUPLICATES)
    expected = [
        "WARNING: dup.yaml:5:3: resources.web: Duplicate key 'web' (first on line 3)",
        "WARNING: dup.yaml:7:1: resources: Duplicate key 'resources' (first on line 2)",
    ]
    for args in (
        ("template", "validate", "-t", path),
        ("stack", "create", "twice", "-t", path, "--dry-run"),
        ("stack", "create", "twice", "-t", path),
        ("stack", "update", "twice", "-t", path, "--dry-run"),
        ("stack", "update", "twice", "-t", path),
    ):
        result = run(*args)
        found = warnings_of(result.stderr)
        assert len(found) == 2, (args, result.stderr)  # each said once
        for line, start in zip(found, expected, strict=True):
            assert line.replace(str(tmp_path) + "/", "").startswith(start), (args, result.stderr)
    # Heat's reading: the last one wins
    resources = json.loads(run("stack", "resource", "list", "twice", "-f", "json").stdout)
    assert [r["resource_name"] for r in resources] == ["db"]


def test_cli_mistakes_duplicate_keys_of_an_environment_are_warnings(run, tmp_path):  # noqa: F811
    template = write(
        tmp_path,
        "t.yaml",
        "heat_template_version: 2018-08-31\nparameters:\n  p: {type: string}\nresources: {}\n",
    )
    environment = write(tmp_path, "env.yaml", "parameters:\n  p: one\n  p: two\n")
    result = run("stack", "create", "s", "-t", template, "-e", environment)
    assert any(
        "env.yaml:3:3: parameters.p: Duplicate key 'p' (first on line 2)" in line
        for line in warnings_of(result.stderr)
    ), result.stderr


def test_cli_mistakes_function_typos_say_did_you_mean(run, tmp_path):  # noqa: F811
    path = write(tmp_path, "typo.yaml", TYPOS)
    for args in (("template", "validate", "-t", path), ("stack", "create", "typo", "-t", path)):
        found = warnings_of(run(*args).stderr)
        assert len(found) == 3, found
        assert (
            "typo.yaml:8:" in found[0]
            and "resources.web.properties.value.get_parm: 'get_parm' is not a function of heat_template_version 2018-08-31"
            in found[0]
        )
        assert found[0].endswith("(did you mean get_param?)")
        assert "outputs.joined.value.str_replce" in found[1] and found[1].endswith(
            "(did you mean str_replace?)"
        )
        assert "outputs.length.value.get_atr" in found[2] and found[2].endswith(
            "(did you mean get_attr?)"
        )


def test_cli_mistakes_no_typo_warning_for_data_or_plain_words(run, tmp_path):  # noqa: F811
    # Words one edit from a function that cannot be a word (id/if, ref/Ref, yaml/yaql,
    # note/not), a function of another version, and a correct call are not typos.
    path = write(
        tmp_path,
        "fine.yaml",
        """\
        heat_template_version: 2016-10-14
        resources:
          value:
            type: OS::Heat::Value
            properties:
              value: [{id: 1}, {ref: x}, {yaml: y}, {note: z}, {get_param: OS::stack_name}, {str_replace_vstrict: w}]
        outputs:
          o:
            value: {get_attr: [value, value]}
        """,
    )
    result = run("template", "validate", "-t", path)
    assert not any("did you mean" in line for line in warnings_of(result.stderr)), result.stderr


def test_cli_mistakes_a_declared_property_name_is_no_typo(tmp_path):
    """A plugin's property named ``get_pram``, and a key ``get_atr`` its map property's
    schema declares, are data; ``get_parm`` in the free-form map ``get_pram`` is not."""
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "keyed.py").write_text(
        textwrap.dedent(
            """\
            from stoker.sdk import properties, resource


            class Keyed(resource.Resource):
                \"\"\"A resource with awkward property names.\"\"\"

                properties_schema = {
                    "get_pram": properties.Schema(properties.Schema.MAP),
                    "options": properties.Schema(
                        properties.Schema.MAP, schema={"get_atr": properties.Schema(properties.Schema.STRING)}
                    ),
                }

                def handle_create(self):
                    self.resource_id_set(self.physical_resource_name())


            def resource_mapping():
                return {"Test::Keyed": Keyed}
            """
        )
    )
    template = tmp_path / "keyed.yaml"
    template.write_text(
        textwrap.dedent(
            """\
            heat_template_version: 2018-08-31
            resources:
              declared:
                type: Test::Keyed
                properties:
                  get_pram: {a: b}
                  options: {get_atr: c}
              undeclared:
                type: Test::Keyed
                properties:
                  get_pram: {get_parm: c}
            """
        )
    )
    env = client_environment({"STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite'}"})
    result = subprocess.run(
        [STOKER, "--plugin-dir", str(tmp_path / "plugins"), "template", "validate", "-t", str(template)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    found = [line for line in warnings_of(result.stderr) if "did you mean" in line]
    assert len(found) == 1, result.stderr
    assert "resources.undeclared.properties.get_pram.get_parm" in found[0] and found[0].endswith(
        "(did you mean get_param?)"
    )


def test_cli_mistakes_strict_validate_fails_on_warnings_and_on_what_create_needs(run, tmp_path):  # noqa: F811
    needs = write(
        tmp_path,
        "needs.yaml",
        "heat_template_version: 2018-08-31\nparameters:\n  name: {type: string}\nresources: {}\n",
    )
    lenient = run("template", "validate", "-t", needs)
    assert (
        "NOTE: stack create needs: needs.yaml:3:9: parameters.name: The Parameter (name) was not provided."
        in lenient.stderr.replace(str(tmp_path) + "/", "")
    )
    strict = run("template", "validate", "--strict", "-t", needs, check=False)
    assert strict.returncode == 1, strict.stderr
    assert "ERROR: stack create needs: " in strict.stderr and "NOTE:" not in strict.stderr
    assert "Parameters:" in strict.stdout  # the result is still shown
    assert (
        run("template", "validate", "--strict", "-t", needs, "--parameter", "name=x").returncode
        == 0
    )

    duplicates = write(tmp_path, "dup.yaml", DUPLICATES)
    assert run("template", "validate", "-t", duplicates).returncode == 0  # Heat's behaviour
    strict = run("template", "validate", "--strict", "-t", duplicates, check=False)
    assert (
        strict.returncode == 1
        and "ERROR: " in strict.stderr
        and "Duplicate key 'web'" in strict.stderr
    )
    typos = write(tmp_path, "typo.yaml", TYPOS)
    strict = run("template", "validate", "--strict", "-t", typos, check=False)
    assert strict.returncode == 1 and "did you mean get_param?" in strict.stderr


def test_cli_mistakes_an_undeclared_parameter_is_said_plainly(run, tmp_path):  # noqa: F811
    path = write(
        tmp_path,
        "undeclared.yaml",
        "heat_template_version: 2018-08-31\nresources:\n  web:\n    type: OS::Heat::Value\n    properties:\n      value: {get_param: nme}\n",
    )
    for args in (("template", "validate", "-t", path), ("stack", "create", "u", "-t", path)):
        result = run(*args, check=False)
        assert result.returncode == 1
        line = result.stderr.strip().replace(str(tmp_path) + "/", "")
        assert line == (
            "ERROR: undeclared.yaml:6:14: resources.web.properties.value: The Parameter (nme) is not declared "
            "(declare it under 'parameters', or correct the name)"
        ), result.stderr


def test_cli_mistakes_an_unknown_condition_is_reported_once(run, tmp_path):  # noqa: F811
    path = write(
        tmp_path,
        "cond.yaml",
        "heat_template_version: 2018-08-31\nresources:\n  web:\n    type: OS::Heat::None\n    condition: nocond\n",
    )
    result = run("template", "validate", "-t", path, check=False)
    assert result.returncode == 1
    assert result.stderr.count('Invalid condition "nocond"') == 1, result.stderr
    assert "cond.yaml:5:16: resources.web.condition" in result.stderr


def test_cli_mistakes_a_missing_registry_file_is_placed_in_the_environment(run, tmp_path):  # noqa: F811
    write(
        tmp_path,
        "t.yaml",
        "heat_template_version: 2018-08-31\nresources:\n  thing: {type: My::Thing}\n",
    )
    write(
        tmp_path,
        "env.yaml",
        "resource_registry:\n  My::Other: other.yaml\n  My::Thing: missing.yaml\n",
    )
    (tmp_path / "other.yaml").write_text("heat_template_version: 2018-08-31\n")
    for args in (("template", "validate"), ("stack", "create", "s")):
        result = subprocess.run(
            [STOKER, *args, "-t", "t.yaml", "-e", "env.yaml"],
            env=run.env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 1, result.stderr
        assert result.stderr.strip() == (
            "ERROR: env.yaml:3:14: resource_registry.My::Thing: The file missing.yaml does not exist (correct the name, or create missing.yaml)"
        ), result.stderr


def test_cli_mistakes_a_mistyped_stack_name_gets_did_you_mean(run, tmp_path):  # noqa: F811
    path = write(tmp_path, "t.yaml", "heat_template_version: 2018-08-31\nresources: {}\n")
    run("stack", "create", "web", "-t", path)
    run("stack", "create", "database", "-t", path)
    for args in (
        ("stack", "show", "wbe"),
        ("stack", "delete", "-y", "wbe"),
        ("stack", "update", "wbe", "-t", path),
        ("stack", "resource", "list", "wbe"),
        ("stack", "output", "list", "wbe"),
    ):
        result = run(*args, check=False)
        assert result.returncode == 1, (args, result.stderr)
        assert (
            result.stderr.strip()
            == "ERROR: The Stack (wbe) could not be found. (Did you mean 'web'? See 'stoker stack list')"
        ), (args, result.stderr)
    far = run("stack", "show", "zzzz", check=False)
    assert (
        far.stderr.strip()
        == "ERROR: The Stack (zzzz) could not be found. (see 'stoker stack list')"
    )


def test_cli_mistakes_a_wrong_url_path_says_what_was_tried(tmp_path, cli_server):
    url = f"{cli_server.url}/v2/demo"
    env = client_environment({"STOKER_URL": url})
    result = subprocess.run(
        [STOKER, "stack", "list"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        f"ERROR: Nothing answers at {url}/v1/default/stacks (HTTP 404 Not Found): the Orchestration API is not there "
        "(its path is /v1/PROJECT: give --url http://HOST:PORT or http://HOST:PORT/v1/PROJECT)"
    )


PARENT = """\
heat_template_version: 2018-08-31
resources:
  inner:
    type: inner.yaml
"""

INNER = """\
heat_template_version: 2018-08-31
resources:
  web:
    type: OS::Heat::Value
    properties:
      value: {get_parm: OS::stack_name}
  db:
    type: OS::Heat::None
  db:
    type: OS::Heat::None
"""


def test_cli_mistakes_a_nested_template_is_read_for_typos_and_duplicates_too(run, tmp_path):  # noqa: F811
    parent = write(tmp_path, "parent.yaml", PARENT)
    write(tmp_path, "inner.yaml", INNER)
    for args in (("template", "validate", "-t", parent), ("stack", "create", "nest", "-t", parent)):
        found = warnings_of(run(*args).stderr)
        assert len(found) == 2, found
        duplicate, typo = sorted(found, key=lambda line: "get_parm" in line)
        assert "inner.yaml:9:3: resources.db: Duplicate key 'db'" in duplicate, duplicate
        assert "inner.yaml:6:" in typo and typo.endswith("(did you mean get_param?)"), typo


def test_api_validate_warns_of_typos_in_the_templates_of_its_files_too(cli_server):
    # What a client that sends the files itself (heatclient, a dashboard) is told: the
    # nested template's misspelt function, placed in its own file.
    import httpx

    body = {"template": PARENT, "files": {"inner.yaml": INNER}}
    answer = httpx.post(f"{cli_server.url}/v1/typos/validate", json=body, timeout=60)
    assert answer.status_code == 200, answer.text
    typos = [line for line in answer.json().get("Warnings", []) if "get_parm" in line]
    assert len(typos) == 1 and "inner.yaml:6:" in typos[0], answer.json()
    assert typos[0].endswith("(did you mean get_param?)"), typos
