"""The ``stoker`` command as a user runs it: a real process, on the embedded engine (a
real SQLite file) and against a real ``stoker serve`` (``cli_backend``, conftest.py)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from tests.acceptance.conftest import cli_invoker, environment_of

ROOT = Path(__file__).resolve().parents[2]
STOKER = str(Path(sys.executable).with_name("stoker"))


@pytest.fixture
def run(tmp_path, cli_backend):
    env = environment_of(cli_backend, COLUMNS="200")
    invoke = cli_invoker(env, tmp_path)
    invoke.mode = cli_backend["mode"]  # type: ignore[attr-defined]
    invoke.env = env  # type: ignore[attr-defined]
    return invoke


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_cli_full_lifecycle_of_the_example(run, tmp_path):
    example = str(ROOT / "examples" / "hello.yaml")
    created = run("stack", "create", "demo", "-t", example, "--wait", "-f", "json")
    detail = json.loads(created.stdout)
    assert detail["stack_status"] == "CREATE_COMPLETE"
    outputs = {o["output_key"]: o["output_value"] for o in detail["outputs"]}
    assert outputs["connection_string"].startswith("postgresql://shop:")
    # live progress went to stderr, with -f json as JSON lines: one event object a line
    events = [json.loads(line) for line in created.stderr.splitlines()]
    seen = [(e["resource_name"], e["resource_status"], e["resource_status_reason"]) for e in events]
    assert ("database", "CREATE_IN_PROGRESS", "state changed") in seen
    assert seen[-1] == ("demo", "CREATE_COMPLETE", "Stack CREATE completed successfully")
    # and as log lines when asked
    again = run("stack", "create", "demo-log", "-t", example, "--wait", "-f", "json", "--progress-format", "log")
    assert json.loads(again.stdout)["stack_status"] == "CREATE_COMPLETE"
    assert "[database]: CREATE_IN_PROGRESS  state changed" in again.stderr
    assert "[demo-log]: CREATE_COMPLETE  Stack CREATE completed successfully" in again.stderr
    run("stack", "delete", "demo-log", "--yes", "--wait")

    listed = json.loads(run("stack", "list", "-f", "json").stdout)
    assert [(s["Stack Name"], s["Stack Status"]) for s in listed] == [("demo", "CREATE_COMPLETE")]
    shown = json.loads(run("stack", "show", "demo", "-f", "json").stdout)
    assert shown["id"] == detail["id"]

    resources = json.loads(run("stack", "resource", "list", "demo", "-f", "json").stdout)
    assert {r["resource_name"]: r["resource_status"] for r in resources} == {
        name: "CREATE_COMPLETE" for name in ("db_password", "api_token", "database", "web", "settings", "marker")
    }
    log = run("stack", "event", "list", "demo").stdout.splitlines()
    assert log[0].endswith("[demo]: CREATE_IN_PROGRESS  Stack CREATE started")
    events = json.loads(run("stack", "event", "list", "demo", "--resource", "web", "-f", "json").stdout)
    assert [e["resource_status"] for e in events] == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"]

    one = json.loads(run("stack", "output", "show", "demo", "settings", "-f", "json").stdout)
    assert one["output_value"]["regions"] == ["eu-west", "us-east"]
    every = json.loads(run("stack", "output", "show", "demo", "--all", "-f", "json").stdout)
    assert set(every) == {"connection_string", "api_token", "settings"}

    updated = run("stack", "update", "demo", "-t", example, "--parameter", "app_name=store", "-f", "json")
    assert json.loads(updated.stdout)["stack_status"] == "UPDATE_COMPLETE"
    token = json.loads(run("stack", "output", "show", "demo", "connection_string", "-f", "json").stdout)
    assert token["output_value"].startswith("postgresql://store:")

    deleted = run("stack", "delete", "demo", "-y", "--wait")
    assert "Stack demo DELETE_COMPLETE" in deleted.stderr
    assert json.loads(run("stack", "list", "-f", "json").stdout) == []


def test_cli_table_output_is_readable(run):
    example = str(ROOT / "examples" / "hello.yaml")
    created = run("stack", "create", "demo", "-t", example)
    assert "CREATE_COMPLETE" in created.stdout
    assert "connection_string" in created.stdout
    assert created.stderr == ""  # progress only with --wait
    table = run("stack", "resource", "list", "demo").stdout
    assert "OS::Heat::RandomString" in table and "resource_status" in table


def test_cli_failed_action_exits_non_zero_with_reason(run, tmp_path):
    path = write(tmp_path, "fail.yaml", """
        heat_template_version: 2021-04-16
        resources:
          broken:
            type: OS::Heat::TestResource
            properties: {fail: true}
    """)
    result = run("stack", "create", "f", "-t", path, check=False)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == "ERROR: Stack f CREATE_FAILED: Resource CREATE failed: ValueError: resources.broken: Test Resource failed broken"
    rolled = run("stack", "create", "g", "-t", path, "--enable-rollback", check=False)
    assert rolled.returncode == 1
    assert "ROLLBACK_COMPLETE" in rolled.stderr
    assert json.loads(run("stack", "resource", "list", "g", "-f", "json").stdout) == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("heat_template_version: 2021-04-16\nresources:\n  a:\n    type: OS::Heat::None\n     x: 1\n", "bad.yaml:5:7: Invalid YAML"),
        ("heat_template_version: 2021-04-16\nresources:\n  a:\n    type: My::Type\n", "bad.yaml:4:11: resources.a.type: The Resource Type (My::Type) could not be found."),
        ("heat_template_version: 2021-04-16\nresources:\n  a:\n    type: OS::Heat::Value\n", "bad.yaml:4:5: resources.a.properties.value: Property is required"),
        ("heat_template_version: 2021-04-16\nresources:\n  a:\n    type: OS::Heat::RandomString\n    properties: {length: many}\n", "resources.a.properties.length: Value 'many' is not an integer"),
        ("heat_template_version: 2021-04-16\nresources:\n  a:\n    type: OS::Heat::None\n    properties: {p: {get_resource: zz}}\n", 'The specified reference "zz" (in get_resource) is not a resource'),
        ("heat_template_version: 2021-04-16\nresources:\n  a: {type: OS::Heat::None, depends_on: b}\n  b: {type: OS::Heat::None, depends_on: a}\n", "Circular Dependency Found: a -> b -> a"),
        ("heat_template_version: 2021-04-16\nparameters:\n  p: {type: string}\nresources: {}\n", "parameters.p: The Parameter (p) was not provided."),
    ],
    ids=["yaml", "type", "required", "property-type", "get_resource", "cycle", "parameter"],
)
def test_cli_bad_input_is_one_clear_line(run, tmp_path, body, message):
    path = write(tmp_path, "bad.yaml", body)
    result = run("stack", "create", "x", "-t", path, check=False)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ERROR: ")
    assert message in lines[0]


def test_cli_unknown_stack_and_missing_file(run, tmp_path):
    result = run("stack", "show", "ghost", check=False)
    assert result.returncode == 1
    assert result.stderr.strip() == "ERROR: The Stack (ghost) could not be found. (see 'stoker stack list')"
    result = run("stack", "create", "x", "-t", str(tmp_path / "missing.yaml"), check=False)
    assert result.returncode == 2
    assert "cannot read" in result.stderr


def test_cli_template_validate(run, tmp_path):
    path = write(tmp_path, "v.yaml", """
        heat_template_version: 2021-04-16
        description: Validated.
        parameters:
          size:
            type: number
            default: 3
            label: Size
            description: How many.
            constraints:
              - range: {min: 1, max: 5}
                description: one to five
          name: {type: string}
          word: {type: string, hidden: true, constraints: [{length: {min: 20}}]}
        resources:
          r: {type: OS::Heat::None}
    """)
    validated = run("template", "validate", "-t", path, "--parameter", "word=Short-Word-1", "-f", "json")
    result = json.loads(validated.stdout)
    # Not errors (Heat's validate needs no values), but what a create would refuse, placed
    # and masked, from a server as from the embedded engine.
    assert validated.stderr.splitlines() == [
        f"NOTE: stack create needs: {path}:13:9: parameters.name: The Parameter (name) was not provided. (pass --parameter name=VALUE or set it in an environment file)",
        f"NOTE: stack create needs: {path}:14:9: parameters.word: Parameter 'word' is invalid: length (12) must be at least 20",
    ]
    assert "Notes" not in result
    assert result["Description"] == "Validated."
    assert result["Parameters"]["size"] == {
        "Type": "Number",
        "NoEcho": "false",
        "Description": "How many.",
        "Label": "Size",
        "Default": 3,
        "MinValue": 1,
        "MaxValue": 5,
        "ConstraintDescription": "one to five",
    }


def test_cli_dry_run_plans_in_the_create_order_with_the_templates_chosen(run):
    """A create's plan lists resources in the order the create makes them (each
    ``*_post`` after the node it reads, both nodes nested stacks) and the candidate
    template each list chose; an update's, which resources change template."""
    example = ROOT / "examples" / "capabilities"
    given = ["-t", str(example / "deployment.yaml"), "-e", str(example / "registry.yaml"), "-e", str(example / "puppet.yaml")]
    plan = json.loads(run("stack", "create", "demo", *given, "--dry-run", "-f", "json").stdout)
    new = [("compute", "OS::Example::Compute"), ("compute_post", "OS::Example::ComputePost"), ("controller", "OS::Example::Controller"), ("controller_post", "OS::Example::ControllerPost")]
    assert {key: plan[key] for key in ("resource_changes", "implementations")} == {
        "resource_changes": {
            "added": [{"resource_name": name, "resource_type": kind, "reason": "new resource"} for name, kind in new],
            "deleted": [],
            "replaced": [],
            "updated": [],
            "unchanged": [],
        },
        "implementations": [
            {"resource_name": "controller", "resource_type": "OS::Example::Controller", "template": "puppet/controller.yaml", "requires": "deployment=puppet"},
            {"resource_name": "compute", "resource_type": "OS::Example::Compute", "template": "puppet/compute.yaml", "requires": "deployment=puppet"},
        ],
    }
    table = run("stack", "create", "demo", *given, "--dry-run").stdout.splitlines()
    resources = table[: table.index("Outputs:")] if "Outputs:" in table else table
    assert [line for line in resources if line.startswith("  + ") and "." not in line.split()[1]] == [f"  + {name} ({kind}) create: new resource" for name, kind in new]
    assert "  + compute.config (OS::Heat::Value) create: new resource (in a new nested stack)" in table  # nested stacks too
    rows = [[cell.strip() for cell in line.strip("│").split("│")] for line in table if line.startswith("│")]
    assert rows == [
        ["controller", "OS::Example::Controller", "puppet/controller.yaml", "deployment=puppet"],
        ["compute", "OS::Example::Compute", "puppet/compute.yaml", "deployment=puppet"],
    ]
    assert table[-1] == "Plan: 8 to add, 0 to change, 0 to replace, 0 to delete"  # the nested stacks' 4 too

    run("stack", "create", "demo", *given)
    update = json.loads(run("stack", "update", "demo", "--existing", "-e", str(example / "docker.yaml"), "--dry-run", "-f", "json").stdout)
    assert update["implementation_changes"] == [
        {"resource_name": "controller", "resource_type": "OS::Example::Controller", "from": "puppet/controller.yaml", "to": "docker/controller.yaml"},
        {"resource_name": "compute", "resource_type": "OS::Example::Compute", "from": "puppet/compute.yaml", "to": "docker/compute.yaml"},
    ]
    assert [(row["resource_name"], row["template"]) for row in update["implementations"]] == [("controller", "docker/controller.yaml"), ("compute", "docker/compute.yaml")]


def test_cli_operations_round_trip(run, tmp_path):
    """The lifecycle commands beyond create/update/delete, as a user chains them."""
    example = str(ROOT / "examples" / "hello.yaml")
    run("stack", "create", "ops", "-t", example)
    preview = json.loads(run("stack", "update", "ops", "-t", example, "--parameter", "app_name=other", "--dry-run", "-f", "json").stdout)
    assert {r["resource_name"] for r in preview["resource_changes"]["replaced"]} == {"api_token"}
    assert json.loads(run("stack", "check", "ops", "-f", "json").stdout)[0]["Stack Status"] == "CHECK_COMPLETE"
    assert json.loads(run("stack", "suspend", "ops", "-f", "json").stdout)[0]["Stack Status"] == "SUSPEND_COMPLETE"
    assert json.loads(run("stack", "resume", "ops", "-f", "json").stdout)[0]["Stack Status"] == "RESUME_COMPLETE"
    snapshot = json.loads(run("stack", "snapshot", "create", "ops", "--name", "before", "-f", "json").stdout)
    assert snapshot["status"] == "COMPLETE"
    listed = json.loads(run("stack", "snapshot", "list", "ops", "-f", "json").stdout)
    assert [s["name"] for s in listed] == ["before"]
    restored = json.loads(run("stack", "snapshot", "restore", "ops", "before", "-f", "json").stdout)
    assert restored["stack_status"] == "RESTORE_COMPLETE"
    run("stack", "snapshot", "delete", "ops", snapshot["id"])
    run("stack", "resource", "mark", "unhealthy", "ops", "web", "broken disk")
    resources = {r["resource_name"]: r["resource_status"] for r in json.loads(run("stack", "resource", "list", "ops", "-f", "json").stdout)}
    assert resources["web"] == "CHECK_FAILED"
    exported = json.loads(run("stack", "export", "ops").stdout)
    assert set(exported["resources"]) == set(resources)
    refused = run("stack", "abandon", "ops", check=False)
    assert refused.returncode == 1 and "Stack abandon is disabled" in refused.stderr
    assert "cancel" in run("stack", "--help").stdout
    versions = json.loads(run("template", "version", "list", "-f", "json").stdout)
    assert {"version": "heat_template_version.2021-04-16", "type": "hot", "aliases": ["heat_template_version.wallaby"]} in versions
    functions = {f["functions"] for f in json.loads(run("template", "function", "list", "2021-04-16", "-f", "json").stdout)}
    assert {"get_attr", "list_join", "yaql", "if"} <= functions
    types = json.loads(run("resource", "type", "show", "OS::Heat::Value", "-f", "json").stdout)
    assert set(types["properties"]) == {"value", "type"}


def test_cli_get_file_sends_files_beside_the_template_only(run, tmp_path):
    (tmp_path / "motd.txt").write_text("hello from a file\n")
    good = write(tmp_path, "gf.yaml", """
        heat_template_version: 2021-04-16
        resources:
          r:
            type: OS::Heat::TestResource
            properties: {value: {get_file: motd.txt}}
        outputs:
          v: {value: {get_attr: [r, output]}}
    """)
    detail = json.loads(run("stack", "create", "gf", "-t", good, "-f", "json").stdout)
    assert detail["outputs"][0]["output_value"] == "hello from a file\n"
    for target in ("/etc/passwd", "../../etc/passwd"):
        bad = write(tmp_path, "bad.yaml", f"heat_template_version: 2021-04-16\nresources:\n  r:\n    type: OS::Heat::TestResource\n    properties: {{value: {{get_file: {target}}}}}\n")
        result = run("stack", "create", "bad", "-t", bad, check=False)
        assert result.returncode == 2
        assert "only files in the template's directory" in result.stderr


def test_cli_files_root_reads_files_shared_across_directories_and_nothing_above_it(run, tmp_path):
    # As in openstack/heat-templates: a template one directory down names a shared file.
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "motd.txt").write_text("shared text\n")
    (tmp_path / "templates").mkdir()
    body = """
        heat_template_version: 2021-04-16
        resources:
          r:
            type: OS::Heat::TestResource
            properties: {value: {get_file: ../shared/motd.txt}}
        outputs:
          v: {value: {get_attr: [r, output]}}
    """
    shared = write(tmp_path / "templates", "shared.yaml", body)
    refused = run("stack", "create", "shared", "-t", shared, check=False)
    assert refused.returncode == 2 and "--files-root DIR" in refused.stderr, refused.stderr
    detail = json.loads(run("--files-root", str(tmp_path), "stack", "create", "shared", "-t", shared, "-f", "json").stdout)
    assert detail["outputs"][0]["output_value"] == "shared text\n"
    # The root bounds it still: nothing above it is read.
    above = write(tmp_path / "templates", "above.yaml", body.replace("../shared/motd.txt", "../../etc/passwd"))
    result = run("--files-root", str(tmp_path), "stack", "create", "above", "-t", above, check=False)
    assert result.returncode == 2 and "only files under --files-root" in result.stderr, result.stderr


def test_cli_nested_stacks_from_files_beside_the_template_and_environment(run, tmp_path):
    (tmp_path / "lib").mkdir()
    write(tmp_path, "lib/label.yaml", """
        heat_template_version: 2021-04-16
        description: A label
        parameters:
          name: {type: string, description: What to call it}
        resources:
          v: {type: OS::Heat::Value, properties: {value: {get_file: suffix.txt}}}
        outputs:
          label: {value: {list_join: ["-", [{get_param: name}, {get_attr: [v, value]}]]}}
    """)
    (tmp_path / "lib" / "suffix.txt").write_text("x")
    env = write(tmp_path, "lib/env.yaml", "resource_registry:\n  My::Label: label.yaml\n")
    top = write(tmp_path, "top.yaml", """
        heat_template_version: 2021-04-16
        resources:
          one: {type: "My::Label", properties: {name: one}}
          many:
            type: OS::Heat::ResourceGroup
            properties: {count: 2, resource_def: {type: "My::Label", properties: {name: "m%index%"}}}
        outputs:
          one: {value: {get_attr: [one, label]}}
          many: {value: {get_attr: [many, label]}}
    """)
    detail = json.loads(run("stack", "create", "nest", "-t", top, "-e", env, "-f", "json").stdout)
    assert detail["stack_status"] == "CREATE_COMPLETE", detail["stack_status_reason"]
    assert {o["output_key"]: o["output_value"] for o in detail["outputs"]} == {"one": "one-x", "many": ["m0-x", "m1-x"]}
    assert detail["parent"] is None
    top_only = json.loads(run("stack", "list", "-f", "json").stdout)
    assert [s["Stack Name"] for s in top_only] == ["nest"]
    everything = json.loads(run("stack", "list", "--nested", "-f", "json").stdout)
    children = [s for s in everything if s["Parent"] == detail["id"]]
    assert len(everything) == 5 and len(children) == 2  # one, many, and many's two labels
    deep = json.loads(run("stack", "resource", "list", "nest", "--nested-depth", "2", "-f", "json").stdout)
    assert sorted((r["stack_name"] == "nest", r["resource_name"]) for r in deep) == [
        (False, "0"), (False, "1"), (False, "v"), (False, "v"), (False, "v"), (True, "many"), (True, "one")
    ]
    log = run("stack", "event", "list", "nest", "--nested-depth", "2").stdout.splitlines()
    assert log[0].endswith("[nest]: CREATE_IN_PROGRESS  Stack CREATE started")
    assert log[-1].endswith("[nest]: CREATE_COMPLETE  Stack CREATE completed successfully")
    # In each label's stack, named by its path from the top stack.
    assert sorted(line.split(" [", 1)[1].split("]")[0] for line in log if ".v]: CREATE_COMPLETE" in line) == ["many.0.v", "many.1.v", "one.v"]
    assert len(run("stack", "event", "list", "nest").stdout.splitlines()) < len(log)
    # The stack's files: what the templates read, and the environment (as Heat keeps it).
    files = json.loads(run("stack", "file", "list", "nest", "-f", "json").stdout)
    assert set(files) == {"label.yaml", "suffix.txt", env}
    assert files["suffix.txt"] == "x"
    refused = run("stack", "delete", children[0]["ID"], "-y", check=False)
    assert refused.returncode != 0 and "is nested in stack nest" in refused.stderr

    validated = json.loads(run("template", "validate", "-t", top, "-e", env, "--show-nested", "-f", "json").stdout)
    assert validated["NestedParameters"]["one"]["Parameters"]["name"]["Value"] == "one"
    assert validated["NestedParameters"]["one"]["Description"] == "A label"
    assert validated["NestedParameters"]["many"]["Type"] == "OS::Heat::ResourceGroup"
    assert validated["NestedParameters"]["many"]["NestedParameters"]["0"]["Parameters"]["name"]["Value"] == "m0"
    assert "NestedParameters" not in json.loads(run("template", "validate", "-t", top, "-e", env, "-f", "json").stdout)
    assert run("stack", "delete", "nest", "-y").returncode == 0
    assert json.loads(run("stack", "list", "--nested", "-f", "json").stdout) == []


def test_cli_stack_list_leaves_out_hidden_stacks_unless_hidden(run, tmp_path):
    template = write(tmp_path, "one.yaml", """
        heat_template_version: 2021-04-16
        resources:
          value: {type: OS::Heat::Value, properties: {value: v}}
    """)
    run("stack", "create", "shown", "-t", template, "--wait")
    run("stack", "create", "tucked", "-t", template, "--wait", "--tags", "x,data-processing-cluster")
    names = lambda *extra: {s["Stack Name"] for s in json.loads(run("stack", "list", *extra, "-f", "json").stdout)}  # noqa: E731
    assert names() == {"shown"}
    assert names("--hidden") == {"shown", "tucked"}
