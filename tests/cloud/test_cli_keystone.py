"""The ``stoker`` command against ``stoker serve --auth-mode keystone`` with the test
cloud's real Keystone: password authentication from the ``OS_*`` variables or a
clouds.yaml cloud (``--os-cloud``), through openstacksdk's config and a keystoneauth1
session; the server from ``--url`` or from the catalog's orchestration endpoint
(``--url catalog``); the project from the token."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.cloud import identity
from tests.cloud.test_keystone_auth import PASSWORD, VALUE, deployment  # noqa: F401 - deployment is a fixture

STOKER = str(Path(sys.executable).with_name("stoker"))


def test_cli_keystone_password_from_variables_and_clouds_yaml(deployment, tmp_path):  # noqa: F811
    member = deployment.users["a-member"]
    reader = deployment.users["a-reader"]
    base = {name: value for name, value in os.environ.items() if not name.startswith(("OS_", "STOKER_"))}
    base["STOKER_DATABASE_URL"] = f"sqlite:///{tmp_path}/no-such-dir/local.sqlite"
    variables = {
        **base,
        "OS_AUTH_URL": deployment.keystone.url,
        "OS_AUTH_TYPE": "password",
        "OS_USERNAME": member.name,
        "OS_PASSWORD": PASSWORD,
        "OS_PROJECT_NAME": member.project,
        "OS_USER_DOMAIN_NAME": "Default",
        "OS_PROJECT_DOMAIN_NAME": "Default",
        "OS_REGION_NAME": identity.REGION,
        "OS_IDENTITY_API_VERSION": "3",
    }
    (tmp_path / "value.yaml").write_text(VALUE)

    def stoker(env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess:
        result = subprocess.run([STOKER, *arguments], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180, check=False)
        assert "Traceback" not in result.stderr, result.stderr
        return result

    # The server from the catalog, the project from the token.
    created = stoker(variables, "--url", "catalog", "stack", "create", "from-stoker", "-t", "value.yaml", "--wait", "-f", "json")
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["stack_status"] == "CREATE_COMPLETE"
    last = json.loads(created.stderr.splitlines()[-1])  # -f json: the events as JSON lines
    assert (last["resource_name"], last["resource_status"]) == ("from-stoker", "CREATE_COMPLETE"), created.stderr

    # A cloud of clouds.yaml, the server given: the reader reads and cannot delete.
    clouds = {
        "clouds": {
            "test": {
                "auth": {
                    "auth_url": deployment.keystone.url, "username": reader.name, "password": PASSWORD, "project_name": reader.project,
                    "user_domain_name": "Default", "project_domain_name": "Default",
                },
                "region_name": identity.REGION,
                "identity_api_version": 3,
            }
        }
    }
    (tmp_path / "clouds.yaml").write_text(yaml.safe_dump(clouds))
    with_cloud = {**base, "OS_CLIENT_CONFIG_FILE": str(tmp_path / "clouds.yaml")}
    listed = stoker(with_cloud, "--os-cloud", "test", "--url", deployment.server.url, "stack", "list", "-f", "json")
    assert listed.returncode == 0, listed.stderr
    assert [s["Stack Name"] for s in json.loads(listed.stdout)] == ["from-stoker"]
    refused = stoker(with_cloud, "--os-cloud", "test", "--url", deployment.server.url, "stack", "delete", "from-stoker", "-y")
    assert refused.returncode == 1
    assert refused.stderr.strip().startswith("ERROR: You are not authorized to complete stacks:delete action."), refused.stderr

    deleted = stoker(variables, "--url", "catalog", "stack", "delete", "from-stoker", "-y", "--wait")
    assert deleted.returncode == 0 and "Stack from-stoker DELETE_COMPLETE" in deleted.stderr
