"""Template capabilities (seed 003) as users drive them: the example tree under
examples/capabilities composed through requires by the ``stoker`` command, the
introspection commands, and the same operations on a real ``stoker serve``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.server import Server

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "capabilities"
STOKER = str(Path(sys.executable).with_name("stoker"))


@pytest.fixture
def run(tmp_path):
    env = {**os.environ, "STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite'}", "COLUMNS": "200", "STOKER_NO_RECOVERY": "1"}
    env.pop("STOKER_DEBUG", None)

    def invoke(*args: str, check: bool = True, cwd: Path = EXAMPLE) -> subprocess.CompletedProcess:
        result = subprocess.run([STOKER, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120, stdin=subprocess.DEVNULL)
        assert "Traceback" not in result.stderr, result.stderr
        if check:
            assert result.returncode == 0, result.stderr
        return result

    return invoke


def outputs(detail: dict) -> dict:
    return {o["output_key"]: o["output_value"] for o in detail["outputs"]}


def test_capabilities_example_composes_puppet_then_docker_through_requires(run):
    created = json.loads(run("stack", "create", "demo", "-t", "deployment.yaml", "-e", "registry.yaml", "-e", "puppet.yaml", "-f", "json").stdout)
    assert created["stack_status"] == "CREATE_COMPLETE"
    assert outputs(created) == {
        "controller": "post-deployment done: overcloud-controller configured by puppet",
        "compute": "post-deployment done: overcloud-compute configured by puppet",
    }
    shown = json.loads(run("stack", "show", "demo", "-f", "json").stdout)
    assert shown["implementations"] == {"controller": "puppet/controller.yaml", "compute": "puppet/compute.yaml"}
    events = run("stack", "event", "list", "demo").stdout
    assert "Resource controller (OS::Example::Controller) is implemented by puppet/controller.yaml (requires deployment=puppet)" in events
    # Changing requires re-resolves every list: a dry run says which resources change
    # implementation, the update does it.
    preview = json.loads(run("stack", "update", "demo", "--existing", "-e", "docker.yaml", "--dry-run", "-f", "json").stdout)
    assert preview["implementation_changes"] == [
        {"resource_name": "controller", "resource_type": "OS::Example::Controller", "from": "puppet/controller.yaml", "to": "docker/controller.yaml"},
        {"resource_name": "compute", "resource_type": "OS::Example::Compute", "from": "puppet/compute.yaml", "to": "docker/compute.yaml"},
    ]
    table = run("stack", "update", "demo", "--existing", "-e", "docker.yaml", "--dry-run").stdout
    assert "docker/compute.yaml" in table and "puppet/compute.yaml" in table
    updated = json.loads(run("stack", "update", "demo", "--existing", "-e", "docker.yaml", "-f", "json").stdout)
    assert updated["stack_status"] == "UPDATE_COMPLETE"
    assert outputs(updated)["controller"] == "post-deployment done: overcloud-controller configured by docker"
    shown = json.loads(run("stack", "show", "demo", "-f", "json").stdout)
    assert shown["implementations"] == {"controller": "docker/controller.yaml", "compute": "docker/compute.yaml"}


def test_capabilities_example_create_dry_run_shows_the_choice(run):
    preview = json.loads(run("stack", "create", "demo", "-t", "deployment.yaml", "-e", "registry.yaml", "-e", "docker.yaml", "--dry-run", "-f", "json").stdout)
    assert [(row["resource_name"], row["template"], row["requires"]) for row in preview["implementations"]] == [
        ("controller", "docker/controller.yaml", "deployment=docker"),
        ("compute", "docker/compute.yaml", "deployment=docker"),
    ]


def test_capabilities_example_without_requires_explains_the_ambiguity(run):
    failed = run("stack", "create", "demo", "-t", "deployment.yaml", "-e", "registry.yaml", check=False)
    assert failed.returncode == 1
    assert "2 candidate templates for OS::Example::Controller satisfy requires (none); exactly one must" in failed.stderr
    assert "puppet/controller.yaml: matches (declares deployment=puppet)" in failed.stderr
    assert "deployment.yaml:17:11: resources.controller.type" in failed.stderr


def test_capabilities_example_with_unmet_requires_names_every_candidate(run, tmp_path):
    (tmp_path / "chef.yaml").write_text("requires: {deployment: chef}\n")
    failed = run("stack", "create", "demo", "-t", "deployment.yaml", "-e", "registry.yaml", "-e", str(tmp_path / "chef.yaml"), check=False)
    assert "No candidate template for OS::Example::Compute satisfies requires deployment=chef" in failed.stderr
    assert "docker/compute.yaml: does not match (deployment is docker, not chef)" in failed.stderr


def test_capabilities_find_recursive_prints_matching_templates(run):
    found = run("capabilities", "find", "-r", "-c", "resource_type=OS::Example::Controller", ".")
    assert found.stdout.splitlines() == ["docker/controller.yaml", "puppet/controller.yaml"]
    both = run("capabilities", "find", "-r", "-c", "resource_type=OS::Example::Controller", "-c", "deployment=puppet", "puppet", "docker")
    assert both.stdout.splitlines() == ["puppet/controller.yaml"]
    shallow = run("capabilities", "find", "-c", "resource_type=OS::Example::Controller", ".")
    assert shallow.stdout == ""  # the templates sit one level down
    post = run("capabilities", "find", "-r", "-c", "resource_type=OS::Example::ComputePost", ".")
    assert post.stdout.splitlines() == ["common/post.yaml"]
    bad = run("capabilities", "find", "-c", "deployment", ".", check=False)
    assert bad.returncode == 2 and "NAME=VALUE" in bad.stderr


def test_capabilities_template_capabilities_prints_both_forms(run):
    summary = json.loads(run("template", "capabilities", "-f", "puppet/controller.yaml", "-f", "docker/controller.yaml").stdout)
    assert summary["capabilities"] == {"deployment": ["puppet", "docker"]}
    assert summary["resource_types"] == {"OS::Example::Controller": ["puppet/controller.yaml", "docker/controller.yaml"]}
    with_env = json.loads(run("template", "capabilities", "-f", "deployment.yaml", "-e", "registry.yaml", "-e", "docker.yaml").stdout)
    assert with_env["resource_types"]["OS::Example::Compute"] == ["puppet/compute.yaml", "docker/compute.yaml"]
    assert with_env["resource_types"]["OS::Example::ControllerPost"] == ["common/post.yaml"]
    assert with_env["requires"] == {"deployment": "docker"}
    assert {r["resource_type"]: r["chosen"] for r in with_env["resolutions"]} == {
        "OS::Example::Controller": "docker/controller.yaml",
        "OS::Example::Compute": "docker/compute.yaml",
    }


# -- the API -------------------------------------------------------------------------


def example_files() -> dict[str, str]:
    return {str(path.relative_to(EXAMPLE)): path.read_text() for path in sorted(EXAMPLE.rglob("*.yaml"))}


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("capabilities")
    running = Server(f"sqlite:///{directory / 'api.sqlite'}", directory / "server.log").start()
    yield running
    log = running.stop()
    assert "Traceback" not in log, log


def test_capabilities_api_find(server):
    status, body = server.request("POST", "/capabilities/find", {"files": example_files(), "capabilities": {"resource_type": "OS::Example::Controller"}})
    assert status == 200, body
    assert body == {"templates": ["docker/controller.yaml", "puppet/controller.yaml"], "skipped": []}
    status, body = server.request("POST", "/capabilities/find", {"files": example_files(), "capabilities": {"deployment": ["docker", "chef"]}, "templates": ["docker/compute.yaml", "puppet/compute.yaml"]})
    assert (status, body["templates"]) == (200, ["docker/compute.yaml"])


def test_capabilities_api_template_capabilities_with_environment_files(server):
    files = example_files()
    request = {"files": files, "environment_files": ["registry.yaml", "puppet.yaml"], "templates": ["puppet/controller.yaml", "docker/controller.yaml"]}
    status, body = server.request("POST", "/template_capabilities", request)
    assert status == 200, body
    assert body["capabilities"] == {"deployment": ["puppet", "docker"]}
    assert body["resource_types"]["OS::Example::Controller"] == ["puppet/controller.yaml", "docker/controller.yaml"]
    assert body["requires"] == {"deployment": "puppet"}
    assert [r["chosen"] for r in body["resolutions"]] == ["puppet/controller.yaml", "puppet/compute.yaml"]


def test_capabilities_api_refuses_malformed_requests(server):
    for request, words in [
        ([], "JSON object"),
        ({"files": {}, "capabilities": ["x"]}, "'capabilities' must be a JSON object"),
        ({"files": {}, "capabilities": {"a": {"b": 1}}}, "a value or a list of values"),
        ({"files": {}, "templates": ["nope.yaml"]}, "not in 'files'"),
    ]:
        status, body = server.request("POST", "/capabilities/find", request)
        assert status == 400, body
        assert words in body["error"]["message"]


def test_capabilities_api_stack_create_resolves_lists(server):
    files = example_files()
    request = {
        "stack_name": "composed",
        "template": files["deployment.yaml"],
        "files": files,
        "environment_files": ["registry.yaml", "docker.yaml"],
    }
    status, body = server.request("POST", "/stacks", request)
    assert status == 201, body
    detail = server.wait_for(body["stack"]["id"])
    assert detail["stack_status"] == "CREATE_COMPLETE", detail
    status, shown = server.request("GET", f"/stacks/composed/{body['stack']['id']}")
    assert shown["stack"]["implementations"] == {"controller": "docker/controller.yaml", "compute": "docker/compute.yaml"}
    request = {**request, "stack_name": "ambiguous", "environment_files": ["registry.yaml"]}
    status, body = server.request("POST", "/stacks", request)
    assert status == 400
    assert "2 candidate templates for OS::Example::Controller" in body["error"]["message"]


def test_capabilities_benchmark_runs_and_prints_its_table():
    # Timings are the benchmark's to print, never this test's to judge.
    result = subprocess.run([sys.executable, str(ROOT / "bench" / "capabilities.py"), "50", "--repeats", "1"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    header, row = result.stdout.splitlines()
    assert "resolve cold" in header and "summary cold" in header and "find cold" in header
    assert row.split()[0] == "50"
