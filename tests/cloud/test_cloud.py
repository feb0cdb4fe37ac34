"""The test cloud itself: real services answering openstacksdk as a cloud user would use them,
its users and environment, the skip on a machine without MariaDB, and reaping what a killed
test run left behind."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.cloud.cloud import CloudError, DevCloud
from tests.cloud.infrastructure import MariaDB, RabbitMQ, missing_prerequisites
from tests.cloud.installation import InstallationError, cache_lock
from tests.cloud.sessions import process_start_time, reap_abandoned_sessions

REPOSITORY = Path(__file__).resolve().parents[2]
OPENSTACK = str(Path(sys.executable).with_name("openstack"))


def _processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line contains ``text`` (a session's directory)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text in (entry / "cmdline").read_text(errors="replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _gone(listing, ids: set[str]) -> set[str]:
    """The ids still listed."""
    return {item.id for item in listing} & ids


@pytest.mark.cloud
def test_cloud_boots_a_server_on_a_routed_port_with_a_volume_and_deletes_everything(
    openstack_cloud: DevCloud,
):
    admin = openstack_cloud.connect("admin")
    demo = openstack_cloud.connect("demo")
    suffix = uuid.uuid4().hex[:8]
    started = time.monotonic()

    public = admin.network.create_network(
        name=f"public-{suffix}",
        is_router_external=True,
        provider_network_type="flat",
        provider_physical_network="public",
    )
    public_subnet = admin.network.create_subnet(
        network_id=public.id,
        ip_version=4,
        cidr="172.24.4.0/24",
        gateway_ip="172.24.4.1",
        enable_dhcp=False,
    )
    network = demo.network.create_network(name=f"private-{suffix}")
    subnet = demo.network.create_subnet(network_id=network.id, ip_version=4, cidr="10.0.0.0/24")
    router = demo.network.create_router(
        name=f"router-{suffix}", external_gateway_info={"network_id": public.id}
    )
    assert router.external_gateway_info["network_id"] == public.id
    demo.network.add_interface_to_router(router, subnet=subnet.id)
    port = demo.network.create_port(network_id=network.id, name=f"port-{suffix}")
    keypair = demo.compute.create_keypair(name=f"key-{suffix}")
    flavor = demo.compute.find_flavor("m1.tiny", ignore_missing=False)
    image = demo.image.find_image(openstack_cloud.image_name, ignore_missing=False)

    server = demo.compute.create_server(
        name=f"server-{suffix}",
        flavor_id=flavor.id,
        image_id=image.id,
        key_name=keypair.name,
        networks=[{"port": port.id}],
    )
    server = demo.compute.wait_for_server(
        server, status="ACTIVE", failures=["ERROR"], interval=1, wait=120
    )
    assert port.fixed_ips[0]["ip_address"] in json.dumps(server.addresses)
    assert demo.network.get_port(port.id).device_id == server.id

    volume = demo.block_storage.create_volume(size=1, name=f"volume-{suffix}")
    volume = demo.block_storage.wait_for_status(
        volume, status="available", failures=["error"], interval=1, wait=120
    )
    demo.compute.create_volume_attachment(server, volume=volume)
    volume = demo.block_storage.wait_for_status(
        volume, status="in-use", failures=["error", "error_attaching"], interval=1, wait=120
    )
    assert [attachment["server_id"] for attachment in volume.attachments] == [server.id]
    created_s = time.monotonic() - started

    demo.compute.delete_volume_attachment(server, volume)
    demo.block_storage.wait_for_status(
        volume, status="available", failures=["error", "error_detaching"], interval=1, wait=120
    )
    demo.block_storage.delete_volume(volume)
    demo.compute.delete_server(server)
    demo.compute.wait_for_delete(server, interval=1, wait=120)
    demo.block_storage.wait_for_delete(volume, interval=1, wait=120)
    demo.compute.delete_keypair(keypair)
    demo.network.delete_port(port)
    demo.network.remove_interface_from_router(router, subnet=subnet.id)
    demo.network.delete_router(router)
    demo.network.delete_subnet(subnet)
    demo.network.delete_network(network)
    admin.network.delete_subnet(public_subnet)
    admin.network.delete_network(public)

    assert not _gone(admin.compute.servers(all_projects=True), {server.id})
    assert not _gone(admin.block_storage.volumes(all_projects=True), {volume.id})
    assert not _gone(admin.network.ports(), {port.id})
    assert not list(admin.network.ports(network_id=network.id)) and not list(
        admin.network.ports(network_id=public.id)
    )
    assert not _gone(admin.network.routers(), {router.id})
    assert not _gone(admin.network.subnets(), {subnet.id, public_subnet.id})
    assert not _gone(admin.network.networks(), {network.id, public.id})
    assert keypair.name not in {key.name for key in demo.compute.keypairs()}
    print(
        f"created in {created_s:.1f} s, all deleted in {time.monotonic() - started - created_s:.1f} s"
    )


@pytest.mark.cloud
def test_cloud_demo_user_is_a_project_member_not_an_admin(openstack_cloud: DevCloud):
    import openstack.exceptions

    demo = openstack_cloud.connect("demo")
    admin = openstack_cloud.connect("admin")
    assert demo.current_project_id != admin.current_project_id
    assert list(admin.compute.hypervisors())
    with pytest.raises(openstack.exceptions.ForbiddenException):
        list(demo.compute.hypervisors())
    with pytest.raises(openstack.exceptions.ForbiddenException):
        demo.network.create_network(name="not-allowed", is_router_external=True)


@pytest.mark.cloud
@pytest.mark.parametrize("way", ["explicit", "clouds.yaml"])
def test_cloud_environment_reaches_the_cloud_with_the_openstack_client(
    openstack_cloud: DevCloud, way: str
):
    variables = (
        openstack_cloud.environ("demo")
        if way == "explicit"
        else openstack_cloud.cloud_environ("demo")
    )
    environment = {name: value for name, value in os.environ.items() if not name.startswith("OS_")}
    environment.update(variables)
    result = subprocess.run(
        [OPENSTACK, "catalog", "list", "-f", "json"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    catalog = {entry["Type"] for entry in json.loads(result.stdout)}
    assert {
        "identity",
        "compute",
        "network",
        "image",
        "volumev3",
        "block-storage",
        "placement",
    } <= catalog
    assert set(openstack_cloud.endpoints) == catalog


def test_cloud_without_mariadb_skips_naming_what_is_missing(tmp_path: Path):
    # A port nothing listens on stands for a machine without MariaDB.
    environment = {
        **{name: value for name, value in os.environ.items() if name != "STOKER_TEST_CLOUD"},
        "STOKER_DEVCLOUD_MARIADB_PORT": "9",
        "XDG_CACHE_HOME": str(tmp_path),
    }
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-rs",
            "-q",
            "tests/cloud/test_cloud.py::test_cloud_demo_user_is_a_project_member_not_an_admin",
        ],
        cwd=REPOSITORY,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 skipped" in result.stdout
    assert "MariaDB is not reachable at 127.0.0.1:9" in result.stdout
    assert not (tmp_path / "stoker").exists()  # nothing was built for a cloud that cannot run


def test_cloud_reaps_what_a_killed_test_run_left_behind(tmp_path: Path):
    if missing_prerequisites():
        pytest.skip("needs MariaDB and RabbitMQ: " + "; ".join(missing_prerequisites()))
    name = f"reap_{uuid.uuid4().hex[:6]}"
    mariadb, rabbitmq = MariaDB(), RabbitMQ()
    database = f"stoker_{name}_nova"
    mariadb.create([database])
    rabbitmq.create_vhost(f"stoker_{name}")
    venv_marker = str(tmp_path / "venv-marker")
    # A stray "service": its own process group, its command line naming the session's venv.
    stray = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", venv_marker], start_new_session=True
    )
    dead_owner = subprocess.Popen([sys.executable, "-c", "pass"])
    dead_owner.wait()
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / f"{name}.json").write_text(
        json.dumps(
            {
                "owner_pid": dead_owner.pid,
                "owner_start": "0",
                "databases": [database],
                "vhost": f"stoker_{name}",
                "directory": str(tmp_path),
                "venv": venv_marker,
                "groups": [stray.pid],
            }
        )
    )
    # ...beside the record of a run that is still going (this one), which must be left alone.
    live = {
        "owner_pid": os.getpid(),
        "owner_start": process_start_time(os.getpid()),
        "databases": [],
        "groups": [],
    }
    (sessions / "live.json").write_text(json.dumps(live))
    try:
        assert reap_abandoned_sessions(tmp_path, mariadb, rabbitmq) == [name]
        assert (sessions / "live.json").exists()
        assert stray.wait(timeout=30) is not None
        assert database not in mariadb.databases(f"stoker_{name}")
        assert f"stoker_{name}" not in rabbitmq.vhosts()
        assert not (sessions / f"{name}.json").exists()
    finally:
        stray.kill()
        mariadb.drop([database])
        rabbitmq.delete_vhost(f"stoker_{name}")


def test_cloud_cache_lock_admits_one_test_run_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    holder = subprocess.Popen(
        [
            sys.executable, "-c",
            "import time\nfrom tests.cloud.installation import cache_lock\n"
            "with cache_lock('install'):\n    print('held', flush=True)\n    time.sleep(60)",
        ],
        cwd=REPOSITORY, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        with (
            pytest.raises(InstallationError, match="install.lock"),
            cache_lock("install", wait_s=1),
        ):
            pass
    finally:
        holder.kill()
        holder.wait()
    # The lock dies with its holder: a killed test run never blocks the next one.
    with cache_lock("install", wait_s=5):
        pass


@pytest.mark.cloud
@pytest.mark.timeout(1500)  # may build the services' venv first
def test_cloud_start_failure_names_the_service_with_its_log_tail(tmp_path: Path):
    if missing_prerequisites():
        pytest.skip("needs MariaDB and RabbitMQ: " + "; ".join(missing_prerequisites()))
    cloud = DevCloud(tmp_path / "cloud")
    # Another program took Keystone's port between our choosing it and uWSGI binding it.
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", cloud.ports["keystone"]))
        squatter.listen()
        with pytest.raises(CloudError) as raised:
            cloud.start()
    message = str(raised.value)
    assert message.startswith("test cloud: keystone-api exited with status")
    assert "Address already in use" in message
    assert f"All logs: {cloud.logs}" in message
    # Nothing of the failed session is left behind.
    assert not cloud.mariadb.databases(cloud.database_prefix)
    assert cloud.vhost not in cloud.rabbitmq.vhosts()
    assert not _processes_mentioning(str(cloud.directory))
