"""What an embedded ``stoker`` read loads before it answers: never the API server
(starlette, uvicorn, stoker.api's app and routes, oslo.policy, keystonemiddleware), the
cloud SDK (openstacksdk, keystoneauth1) or the job queue, which no read uses, nor yaql
for a template without a yaql function; and a read answered from the store alone (stack
list, event list) no resource type's module either, since the registry imports a type's
module when a stack first uses the type (resources/index.py).

Each read runs as a real command in a fresh Python process, on a real SQLite store that
holds a stack made by ``stoker stack create``; the process prints the modules it ended
with. How long a read takes is measured by ``bench/cli_startup.py``, not asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stoker.resources.index import BUILTIN_TYPES
from tests.acceptance.conftest import environment_of

STOKER = str(Path(sys.executable).with_name("stoker"))

TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  members:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def:
        type: OS::Heat::RandomString
  word:
    type: OS::Heat::RandomString
outputs:
  word:
    value: {get_attr: [word, value]}
"""

# Top-level packages no read uses: the API server, the policy engine, Keystone's
# middleware, the cloud SDK and its auth library, the job queue; and yaql, which only a
# template with a yaql function needs (this stack's has none).
NOT_FOR_READS = (
    "starlette",
    "uvicorn",
    "oslo_policy",
    "keystonemiddleware",
    "openstack",
    "keystoneauth1",
    "procrastinate",
    "yaql",
)
# Of stoker's own API package a read takes only the views it shares with the server
# (the bodies it prints); the app, routes, auth and policy are the server's.
SHARED_API_PARTS = ("stoker.api", "stoker.api.views")

READS = [
    ["stack", "list"],
    ["stack", "show", "demo"],
    ["stack", "resource", "list", "demo"],
    ["stack", "output", "show", "demo", "word"],
    ["stack", "event", "list", "demo"],
]
# The reads the store answers alone: no stored template is evaluated.
STORE_ONLY_READS = [["stack", "list"], ["stack", "event", "list", "demo"]]

RUN_THEN_LIST_MODULES = """\
import json, sys
from stoker.cli.main import main
try:
    main(sys.argv[1:], prog_name="stoker", standalone_mode=False)
finally:
    sys.stdout.flush()
    print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> tuple[dict[str, str], Path]:
    """A SQLite store holding stack ``demo`` (nested stacks included), made by the CLI."""
    directory = tmp_path_factory.mktemp("startup")
    backend = {"STOKER_DATABASE_URL": f"sqlite:///{directory / 'cli.sqlite'}"}
    (directory / "demo.yaml").write_text(TEMPLATE)
    made = subprocess.run(
        [STOKER, "stack", "create", "demo", "-t", str(directory / "demo.yaml")],
        env=environment_of(backend),
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert made.returncode == 0, made.stderr
    return backend, directory


def modules_of(store: tuple[dict[str, str], Path], args: list[str]) -> tuple[str, list[str]]:
    """What ``stoker args`` printed, and the modules its process held at the end."""
    backend, directory = store
    ran = subprocess.run(
        [sys.executable, "-c", RUN_THEN_LIST_MODULES, *args],
        env=environment_of(backend),
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stderr
    return ran.stdout, json.loads(ran.stderr.splitlines()[-1])


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_cli_read_imports_no_server_policy_or_cloud_sdk(store, args):
    printed, modules = modules_of(store, args)
    assert printed.strip()
    unwanted = sorted(
        name
        for name in modules
        if name.split(".")[0] in NOT_FOR_READS
        or (name.startswith("stoker.api") and name not in SHARED_API_PARTS)
    )
    assert unwanted == [], (args, unwanted[:10])


@pytest.mark.parametrize("args", STORE_ONLY_READS, ids=" ".join)
def test_cli_read_from_the_store_imports_no_resource_type_module(store, args):
    printed, modules = modules_of(store, args)
    assert "demo" in printed or "CREATE_COMPLETE" in printed, printed
    # The registry knows every built-in type by name (resources/index.py); no type's
    # module is imported for a read that builds no resource of it.
    # (OS::Heat::TestResource's module also gives a custom constraint, test_constr,
    # which the registry takes at start with the others.)
    type_modules = set(BUILTIN_TYPES.values()) - {"stoker.resources.heat.test_resource"}
    plugins = sorted(name for name in modules if name in type_modules)
    assert plugins == [], (args, plugins[:10])


def test_cli_read_that_evaluates_the_template_still_answers_from_it(store):
    """A type's module is imported when a read needs its class: an output's value comes
    from its resource's attribute, a nested stack's resources are listed."""
    printed, modules = modules_of(store, ["stack", "output", "show", "demo", "word", "-f", "json"])
    value = json.loads(printed)["output_value"]
    assert isinstance(value, str) and len(value) == 32
    assert "stoker.resources.heat.random_string" in modules
    listed, _ = modules_of(store, ["stack", "resource", "list", "demo", "-n", "1", "-f", "json"])
    names = {row["resource_name"] for row in json.loads(listed)}
    assert {"members", "word", "0", "1"} <= names, names
