"""Several environment files, as a user combines them: ``stoker stack create -e a.yaml
-e b.yaml`` and python-heatclient's ``-e`` (``environment_files`` + ``files``), against
Heat's rules (heat/common/environment_util.py merge_environments, heat/engine/environment.py)
and a global environment directory (Heat's environment_dir)."""

from __future__ import annotations

import json
import os
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from heatclient import client as heat_client
from heatclient.common import template_utils

from tests.acceptance.conftest import cli_invoker
from tests.support import server as server_process
from tests.support.waiting import wait_for_stack

TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  names: {type: comma_delimited_list}
  config: {type: json}
  greeting: {type: string}
  port: {type: string, default: "80"}
resources:
  names_value: {type: Demo::Value, properties: {value: {get_param: names}}}
  config_value: {type: Demo::Value, properties: {value: {get_param: config}}}
  greeting_value: {type: Demo::Value, properties: {value: {get_param: greeting}}}
  port_value: {type: Site::Port, properties: {value: {get_param: port}}}
outputs:
  names: {value: {get_attr: [names_value, value]}}
  config: {value: {get_attr: [config_value, value]}}
  greeting: {value: {get_attr: [greeting_value, value]}}
  port: {value: {get_attr: [port_value, value]}}
"""

# The first file chooses how names and config combine, and maps Demo::* to OS::Heat::*.
FIRST = """
parameter_merge_strategies:
  names: merge
  config: deep_merge
parameters:
  names: [a, b]
  config: {db: {host: h1}, tags: [x]}
  greeting: hello
resource_registry:
  "Demo::*": "OS::Heat::*"
  Site::Port: OS::Heat::Value
"""

# The second: more of each, a per-resource template for one resource, a port default.
SECOND = """
parameters:
  names: [c]
  config: {db: {port: 5432}, tags: [y]}
  greeting: bonjour
parameter_defaults:
  port: "8080"
resource_registry:
  resources:
    greeting_value:
      Demo::Value: shout.yaml
"""

SHOUT = """
heat_template_version: 2021-04-16
parameters:
  value: {type: string}
resources:
  inner: {type: OS::Heat::Value, properties: {value: {list_join: ["", [{get_param: value}, "!"]]}}}
outputs:
  value: {value: {get_attr: [inner, value]}}
"""

EXPECTED = {
    "names": ["a", "b", "c"],
    "config": {"db": {"host": "h1", "port": 5432}, "tags": ["x", "y"]},
    "greeting": "bonjour!",
    "port": "8080",
}


def write(directory: Path, name: str, text: str) -> str:
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return str(path)


@pytest.fixture
def run(tmp_path):
    env = {**os.environ, "STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite'}", "COLUMNS": "200"}
    env.pop("STOKER_DEBUG", None)

    return cli_invoker(env, tmp_path)


def test_cli_create_with_two_environment_files_merges_as_heat(run, tmp_path):
    template = write(tmp_path, "stack.yaml", TEMPLATE)
    first = write(tmp_path, "a.yaml", FIRST)
    second = write(tmp_path, "b.yaml", SECOND)
    write(tmp_path, "shout.yaml", SHOUT)
    detail = json.loads(run("stack", "create", "merged", "-t", template, "-e", first, "-e", second, "-f", "json").stdout)
    assert detail["stack_status"] == "CREATE_COMPLETE", detail["stack_status_reason"]
    assert {o["output_key"]: o["output_value"] for o in detail["outputs"]} == EXPECTED
    resources = json.loads(run("stack", "resource", "list", "merged", "-f", "json").stdout)
    assert {r["resource_name"]: r["resource_type"] for r in resources}["greeting_value"] == "Demo::Value"


def test_cli_conflicting_merge_strategy_names_the_file(run, tmp_path):
    template = write(tmp_path, "stack.yaml", TEMPLATE)
    first = write(tmp_path, "a.yaml", FIRST)
    third = write(tmp_path, "c.yaml", "parameter_merge_strategies: {names: overwrite}\nparameters: {names: [z]}\n")
    result = run("stack", "create", "clash", "-t", template, "-e", first, "-e", third, check=False)
    assert result.returncode != 0
    assert f"Conflicting merge strategy 'overwrite' for parameter 'names' in file '{third}'." in result.stderr


def test_cli_event_sinks_are_refused_at_create(run, tmp_path):
    template = write(tmp_path, "stack.yaml", "heat_template_version: 2021-04-16\nresources: {}\n")
    sinks = write(tmp_path, "sinks.yaml", "event_sinks:\n  - {type: zaqar-queue, target: myqueue}\n")
    result = run("stack", "create", "sinks", "-t", template, "-e", sinks, check=False)
    assert result.returncode != 0
    assert "event_sinks are not supported" in result.stderr and "zaqar-queue" in result.stderr
    assert "stoker event list" in result.stderr
    assert "sinks" not in run("stack", "list").stdout.replace("sinks.yaml", "")


class Server(server_process.Server):
    def __init__(self, database: Path, **environment: str):
        super().__init__(f"sqlite:///{database}", database.with_suffix(f".{time.monotonic_ns()}.log"), **environment)

    def client(self):
        return heat_client.Client("1", endpoint=self.endpoint, token="any-token")


@pytest.fixture(scope="module")
def global_environment(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("environment.d")
    # Read in sorted order: the later file's Site::Port wins; Old::* types map by a glob.
    (directory / "10-site.yaml").write_text("resource_registry:\n  Site::Port: OS::Heat::None\n  Old::*: OS::Heat::*\n")
    (directory / "20-site.yaml").write_text("resource_registry:\n  Site::Port: OS::Heat::Value\n")
    return directory


@pytest.fixture(scope="module")
def heat(tmp_path_factory, global_environment) -> Iterator[object]:
    running = Server(tmp_path_factory.mktemp("api") / "api.sqlite", STOKER_ENVIRONMENT_DIR=str(global_environment)).start()
    yield running.client()
    log = running.stop()
    assert "Traceback" not in log


def heatclient_fields(directory: Path, environments: list[str]) -> dict:
    """What ``openstack stack create -t stack.yaml -e ...`` sends (heatclient's
    process_multiple_environments_and_files with its env_list_tracker)."""
    template_files, template = template_utils.get_template_contents(str(directory / "stack.yaml"))
    tracker: list[str] = []
    env_files, env = template_utils.process_multiple_environments_and_files(env_paths=[str(directory / e) for e in environments], env_list_tracker=tracker)
    return {"template": template, "files": {**template_files, **env_files}, "environment": env, "environment_files": tracker}


def test_api_environment_files_from_heatclient_merge_as_heat(heat, tmp_path):
    write(tmp_path, "stack.yaml", TEMPLATE)
    write(tmp_path, "a.yaml", FIRST)
    write(tmp_path, "b.yaml", SECOND.replace("  port: \"8080\"\n", "  other: 1\n"))
    write(tmp_path, "shout.yaml", SHOUT)
    fields = heatclient_fields(tmp_path, ["a.yaml", "b.yaml"])
    assert len(fields["environment_files"]) == 2
    heat.stacks.create(stack_name="merged", **fields)
    stack = wait_for_stack(heat, "merged")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert {o["output_key"]: o["output_value"] for o in stack.outputs} == {**EXPECTED, "port": "80"}
    environment = heat.stacks.environment("merged")
    assert environment["parameters"]["names"] == ["a", "b", "c"]
    # The strategies are spent in the combining (Heat stores none); the global
    # environment's entries are not the user's.
    assert "parameter_merge_strategies" not in environment or not environment["parameter_merge_strategies"]
    assert "Old::*" not in environment["resource_registry"]


def test_api_global_environment_lies_beneath_the_users(heat, tmp_path):
    write(tmp_path, "stack.yaml", """
        heat_template_version: 2021-04-16
        resources:
          old: {type: Old::Value, properties: {value: legacy}}
          site: {type: Site::Port, properties: {value: "443"}}
          port: {type: Site::Port, properties: {value: "8443"}}
        outputs:
          old: {value: {get_attr: [old, value]}}
          site: {value: {get_attr: [site, value]}}
          port: {value: {get_attr: [port, value]}}
    """)
    write(tmp_path, "mine.yaml", "resource_registry:\n  resources:\n    port:\n      Site::Port: OS::Heat::None\n")
    heat.stacks.create(stack_name="layered", **heatclient_fields(tmp_path, ["mine.yaml"]))
    stack = wait_for_stack(heat, "layered")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    types = {r.resource_name: r.resource_type for r in heat.resources.list("layered")}
    assert types == {"old": "Old::Value", "site": "Site::Port", "port": "Site::Port"}
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    # Old::Value -> OS::Heat::Value by the global glob; Site::Port -> OS::Heat::Value by
    # the later global file (20-site.yaml over 10-site.yaml); the user's entry for the
    # resource "port" (OS::Heat::None, which has no value) wins over both.
    assert outputs == {"old": "legacy", "site": "443", "port": None}


def test_api_user_environment_null_does_not_remove_a_global_mapping(heat, tmp_path):
    # Heat: a null in a user environment removes from that environment only.
    write(tmp_path, "stack.yaml", """
        heat_template_version: 2021-04-16
        resources:
          site: {type: Site::Port, properties: {value: "443"}}
        outputs:
          site: {value: {get_attr: [site, value]}}
    """)
    # heatclient's -e cannot read a null entry (its resolve_environment_urls fails on
    # it), so the fields are sent as it would send them.
    unset = "resource_registry:\n  Site::Port: null\n"
    template = (tmp_path / "stack.yaml").read_text()
    heat.stacks.create(stack_name="unset", template=template, files={"file:///unset.yaml": unset}, environment_files=["file:///unset.yaml"])
    stack = wait_for_stack(heat, "unset")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert stack.outputs[0]["output_value"] == "443"
    assert heat.stacks.environment("unset")["resource_registry"] == {}


def test_api_event_sinks_are_refused_with_what_is_supported(heat):
    from heatclient import exc

    template = {"heat_template_version": "2021-04-16", "resources": {}}
    environment = {"event_sinks": [{"type": "zaqar-queue", "target": "myqueue", "ttl": 1200}]}
    with pytest.raises(exc.HTTPBadRequest) as raised:
        heat.stacks.create(stack_name="sinks", template=template, environment=environment)
    message = str(raised.value)
    assert "event_sinks are not supported" in message and "zaqar-queue" in message
    assert "sinks" not in [s.stack_name for s in heat.stacks.list()]
