"""The ``stoker`` command against the test cloud as a user runs it: ``--os-cloud`` picks
the cloud of clouds.yaml (no OS_CLOUD, no OS_* credentials in the environment), the
README's network example is created as a project member and deleted, and nothing of it
is left in the cloud."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
STOKER = str(Path(sys.executable).with_name("stoker"))


def _stoker(arguments: list[str], environment: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [STOKER, *arguments], env=environment, capture_output=True, text=True, timeout=600, check=False
    )


def test_cli_os_cloud_creates_and_deletes_the_network_example(openstack_cloud, tmp_path):
    suffix = secrets.token_hex(3)
    admin = openstack_cloud.connect("admin")
    public = admin.network.create_network(name=f"public-{suffix}", is_router_external=True)
    admin.network.create_subnet(network_id=public.id, cidr="172.25.0.0/24", ip_version=4, enable_dhcp=False)
    environment = {name: value for name, value in os.environ.items() if not name.startswith("OS_")}
    environment.update(
        OS_CLIENT_CONFIG_FILE=str(openstack_cloud.clouds_yaml),
        STOKER_DATABASE_URL=f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        STOKER_NO_RECOVERY="1",
    )
    cloud = ["--os-cloud", openstack_cloud.cloud("demo")]
    name = f"example-{suffix}"
    try:
        created = _stoker(
            [*cloud, "stack", "create", name, "-t", str(REPOSITORY / "examples" / "network.yaml"),
             "--parameter", f"public_net=public-{suffix}", "--wait", "-f", "json"],
            environment,
        )  # fmt: skip

        assert created.returncode == 0, created.stderr
        shown = json.loads(_stoker([*cloud, "stack", "show", name, "-f", "json"], environment).stdout)
        assert shown["stack_status"] == "CREATE_COMPLETE"
        outputs = {output["output_key"]: output["output_value"] for output in shown["outputs"]}
        assert outputs["router_gateway"]["network_id"] == public.id
        resources = json.loads(_stoker([*cloud, "stack", "resource", "list", name, "-f", "json"], environment).stdout)
        ids = {row["resource_name"]: row["physical_resource_id"] for row in resources}
        demo = openstack_cloud.connect("demo")
        port = demo.network.get_port(ids["port"])
        assert port.fixed_ips[0]["ip_address"] == outputs["port_ip"]
        assert port.project_id == demo.current_project_id
        # Without --os-cloud (and no OS_CLOUD), the command says what to set.
        unset = _stoker(["stack", "create", f"{name}-2", "-t", str(REPOSITORY / "examples" / "network.yaml"),
                         "--parameter", f"public_net=public-{suffix}", "--wait"], environment)  # fmt: skip
        assert unset.returncode != 0
        assert "OS_CLOUD" in unset.stderr + unset.stdout and "Traceback" not in unset.stderr

        deleted = _stoker([*cloud, "stack", "delete", name, "--yes", "--wait"], environment)

        assert deleted.returncode == 0, deleted.stderr
        assert demo.network.find_port(ids["port"]) is None
        assert demo.network.find_network(ids["net"]) is None
        assert demo.network.find_router(ids["router"]) is None
        assert demo.network.find_security_group(ids["ssh"]) is None
    finally:
        for subnet in admin.network.subnets(network_id=public.id):
            for port in admin.network.ports(network_id=public.id):
                admin.network.delete_port(port, ignore_missing=True)
            admin.network.delete_subnet(subnet, ignore_missing=True)
        admin.network.delete_network(public, ignore_missing=True)
