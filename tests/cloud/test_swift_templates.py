"""The public templates of openstack/heat-templates that use Swift (``hot/swift.yaml``
and ``cfn/F17/Swift.template``, copied unchanged in ``heat_templates/``), created and
deleted on the test cloud's real Swift with the ``stoker`` command, run from each
template's folder as a user would (neither takes parameters)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

STOKER = str(Path(sys.executable).with_name("stoker"))
TEMPLATES = Path(__file__).with_name("heat_templates")


def stoker(
    cloud, folder: Path, *arguments: str, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("OS_", "STOKER_"))
    }
    environment.update(
        OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml),
        STOKER_DATABASE_URL=f"sqlite:///{folder}/stoker.sqlite",
    )
    return subprocess.run(
        [STOKER, "--os-cloud", cloud.cloud("demo"), *arguments],
        cwd=cwd, env=environment, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("template", "website"),
    [("hot/swift.yaml", "SwiftContainerWebsite"), ("cfn/F17/Swift.template", "SwiftContainer")],
)
def test_public_swift_template_creates_and_deletes(
    openstack_cloud, swift_service, tmp_path, template, website
):
    store = openstack_cloud.connect("demo").object_store
    path = TEMPLATES / template
    name = f"public-swift-{secrets.token_hex(3)}"

    validated = stoker(
        openstack_cloud, tmp_path, "template", "validate", "-t", path.name, cwd=path.parent
    )
    assert validated.returncode == 0, validated.stderr
    created = stoker(
        openstack_cloud,
        tmp_path,
        "stack",
        "create",
        name,
        "-t",
        path.name,
        "--wait",
        cwd=path.parent,
    )
    assert created.returncode == 0, created.stderr
    shown = stoker(openstack_cloud, tmp_path, "stack", "show", name, "-f", "json")
    assert shown.returncode == 0, shown.stderr
    stack = json.loads(shown.stdout)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    outputs = {output["output_key"]: output["output_value"] for output in stack["outputs"]}
    assert outputs["DomainName"] == "127.0.0.1"
    container = outputs["WebsiteURL"].rsplit("/", 1)[1]
    assert container.startswith(f"{name}-{website}-")
    assert (
        outputs["WebsiteURL"]
        == f"{swift_service.account_url(store.get_account_metadata().location.project.id)}/{container}"
    )
    ours = sorted(c.name for c in store.containers() if c.name.startswith(f"{name}-"))
    assert len(ours) == 2
    published = store.get_container_metadata(next(c for c in ours if "SwiftContainerWebsite" in c))
    assert published.read_ACL == ".r:*"
    assert {key.lower(): value for key, value in published.metadata.items()} == {
        "web-index": "index.html",
        "web-error": "error.html",
    }

    deleted = stoker(openstack_cloud, tmp_path, "stack", "delete", name, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert [c.name for c in store.containers() if c.name.startswith(f"{name}-")] == []
