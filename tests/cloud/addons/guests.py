"""Servers that boot: a second Nova compute host in the test cloud, started only when a
test asks for ``guests_service``, whose servers are real virtual machines. Nova's libvirt
driver (the cloud's own Nova, with the libvirt bindings beside it) drives a libvirtd of the
session's own, which runs QEMU under software emulation (TCG): this machine's /dev/kvm is
a PVM host, which boots only PVM guest kernels. The guest image (``guest_image.py``:
Debian 12 with cloud-init, heat-cfntools and os-collect-config) reaches its user data
through the config drive (``force_config_drive``); its serial console is what Nova's
console log shows.

Owns: the Debian packages this needs (QEMU, libvirt, genisoimage, mmdebstrap; installed
as root the first time), the private libvirtd (a mount namespace of its own in which the
session's directories stand in for /etc/libvirt, /run/libvirt, /var/lib/libvirt,
/var/cache/libvirt and /var/log/libvirt: two sessions, or a session and the machine's own
libvirt, never share one), the compute host ``<cloud host>-guests``, and the guest image
and flavor in Glance and Nova.

Only servers of the guest image land on this host, and they land nowhere else: the host's
placement resource provider has the trait ``CUSTOM_STOKER_GUEST``, the host is in an
aggregate whose metadata requires that trait, and the image asks for it; the scheduler's
``enable_isolated_aggregate_filtering`` (configuration/nova.conf) keeps every other
server off the aggregate. The other tests' servers stay on the fake driver.

Their network (``_guest_network.py``): a session's own Open vSwitch (its userspace
datapath: this kernel has no openvswitch module) and Neutron's Open vSwitch, L3 and DHCP
agents for this host, so a guest's port is bound by ML2's ``openvswitch`` driver, gets
its address from the network's DHCP server and reaches the host (``stoker serve`` on the
external bridge's address) through its router; the host reaches a guest's floating IP.
The other tests' ports stay on the fake host and the no-op driver. The fixture lives for
one test module: the agents serve every network and router made while they run.
"""

from __future__ import annotations

import secrets
import shlex
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.cloud import guest_image, identity
from tests.cloud.addons._guest_network import DIE_WITH_THE_RUN, ExternalNetwork, GuestNetwork
from tests.cloud.addons._service import (
    Launcher,
    process_environment,
    run_command,
    stop_after_failure,
)
from tests.cloud.infrastructure import InfrastructureError
from tests.cloud.installation import BUILD_STEP_TIMEOUT_S, LOCK_WAIT_S
from tests.cloud.sessions import SessionRecord
from tests.support import debian_packages, venv_cache

if TYPE_CHECKING:
    from tests.cloud.cloud import DevCloud

PACKAGES = (
    "qemu-system-x86",
    "qemu-utils",
    "libvirt-daemon-system",
    "libvirt-clients",
    "libvirt-daemon-driver-qemu",
    "libvirt-dev",
    "pkg-config",
    "genisoimage",
    "mmdebstrap",
    # The guests' network (_guest_network.py): the switch, the DHCP servers, the routers'
    # NAT; and ping, which tests reach guests with.
    "openvswitch-switch",
    "dnsmasq-base",
    "iptables",
    "iputils-ping",
)
# The bindings Nova's libvirt driver imports, built against Debian 12's libvirt 9.0.0.
LIBVIRT_PYTHON = "libvirt-python==9.0.0"
TRAIT = "CUSTOM_STOKER_GUEST"
# The flavor guests boot with: the root file system's image is 1.4 GiB.
FLAVOR = {"name": "stoker.guest", "ram": 1024, "vcpus": 1, "disk": 3}
READY_TIMEOUT_S = 180

QEMU_CONF = """\
# The session's libvirtd runs QEMU as root with no confinement (a test machine, no
# AppArmor), no cgroups (a container's), and no virtlogd: QEMU writes the console log.
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
cgroup_controllers = [ ]
stdio_handler = "file"
"""
LIBVIRTD_CONF = """\
unix_sock_group = "root"
unix_sock_rw_perms = "0700"
auth_unix_rw = "none"
log_outputs = "3:file:{log}"
"""
# Where libvirtd looks, and the session directory that stands in for it.
LIBVIRT_PATHS = {
    "/etc/libvirt": "etc",
    "/run/libvirt": "run",
    "/var/lib/libvirt": "lib",
    "/var/cache/libvirt": "cache",
    "/var/log/libvirt": "log",
}
NOVA_CONF = """\
[DEFAULT]
compute_driver = libvirt.LibvirtDriver
host = {host}
state_path = {nova}
instances_path = {nova}/instances
force_config_drive = true
mkisofs_cmd = genisoimage
# Nova's images are qcow2 overlays of the image in _base, kept as Glance has it (no copy
# to raw: 1.4 GiB per image).
force_raw_images = false
# Neutron sends Nova no events here (notify_nova_on_port_status_changes is off in the
# cloud): a guest boots while its port is wired (seconds; the guest takes longer to ask
# for its address).
vif_plugging_is_fatal = false
vif_plugging_timeout = 0

[libvirt]
virt_type = qemu
connection_uri = {uri}
# Emulated: there is no host CPU to model.
cpu_mode = none

[compute]
provider_config_location = {provider_config}

[os_vif_ovs]
ovsdb_connection = unix:{ovsdb}

[oslo_concurrency]
lock_path = {nova}/lock
{privsep}
"""
# Nova's, os-vif's and os-brick's privileged helpers: run as they are (the test cloud
# runs as root; there is no sudo or rootwrap to go through).
PRIVSEP_SECTIONS = (
    "nova_sys_admin",
    "vif_plug_ovs_privileged",
    "vif_plug_linux_bridge_privileged",
    "privsep_osbrick",
)
PROVIDER_CONFIG = f"""\
meta:
  schema_version: '1.0'
providers:
  - identification:
      name: '$COMPUTE_NODE'
    traits:
      additional:
        - {TRAIT}
"""


class GuestsError(Exception):
    """The libvirt compute host did not start; the message names the step and its log."""


@dataclass
class GuestsService:
    """What tests get: the host's name, the guest image and flavor to boot (their ids),
    libvirt's URI, and where the logs are."""

    host: str
    image_id: str
    flavor_id: str
    libvirt_uri: str
    directory: Path
    external_network: ExternalNetwork
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def logs(self) -> Path:
        return self.directory / "logs"

    def domains(self) -> list[str]:
        """The names of the libvirt domains running on the host now."""
        listed = virsh(self.libvirt_uri, "list", "--name")
        assert listed.returncode == 0, listed.stderr
        return listed.stdout.split()


def virsh(uri: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``virsh -c uri arguments...`` (30 s at most); the caller reads its return code."""
    return subprocess.run(
        ["virsh", "-c", uri, *arguments], capture_output=True, text=True, timeout=30, check=False
    )


class Guests:
    """The libvirt host beside a running ``DevCloud``: ``start()`` then ``stop()``."""

    def __init__(self, cloud: DevCloud, directory: Path):
        self.cloud = cloud
        self.directory = directory.resolve()
        self.suffix = secrets.token_hex(3)
        self.host = f"{cloud.host}-guests-{self.suffix}"
        self.logs = self.directory / "logs"
        self.libvirt = self.directory / "libvirt"
        self.socket = self.libvirt / "run" / "libvirt-sock"
        self.uri = f"qemu+unix:///system?socket={self.socket}"
        self.nova = self.directory / "nova"
        self.configuration = self.directory / "nova-guests.conf"
        self.bindings = (
            self.cloud.environment.cache
            / f"libvirt-python-{venv_cache.environment_key([LIBVIRT_PYTHON.encode()])}"
        )
        self.launcher = Launcher(
            label="test cloud (guests)",
            directory=self.directory,
            logs=self.logs,
            environment=self._environment,
            error=GuestsError,
        )
        self.record: SessionRecord | None = None
        self.aggregate_id: int | None = None
        self.node_uuid = ""
        self.image_ids: list[str] = []
        self.timings: dict[str, float] = {}
        self.network = GuestNetwork(cloud, self.directory, self.host, self.suffix, self.launcher)

    def _environment(self) -> dict[str, str]:
        """The cloud's service environment, the libvirt bindings on PYTHONPATH, and the
        system directories (libvirtd, and what Nova runs: qemu-img, genisoimage) on PATH."""
        environment = process_environment(
            self.cloud.environment.path, tmpdir=self.directory / "tmp", pythonpath=self.bindings
        )
        environment["PATH"] += ":/usr/sbin:/sbin"
        return self.network.environment(environment)

    def start(self) -> GuestsService:
        started = time.monotonic()
        try:
            service = self._start()
        except (
            identity.ServiceError,
            InfrastructureError,
            OSError,
            guest_image.GuestImageError,
        ) as error:
            stop_after_failure(self.stop)
            raise GuestsError(
                f"the guests' compute host: {error}\nAll logs: {self.logs}"
            ) from error
        except BaseException:
            stop_after_failure(self.stop)
            raise
        self.timings["start_s"] = time.monotonic() - started
        service.timings = dict(self.timings)
        return service

    def _start(self) -> GuestsService:
        self.record = self.launcher.record = SessionRecord(
            self.cloud.environment.cache,
            f"{self.cloud.session}_guests_{self.suffix}",
            owned=True,
            databases=[],
            vhost="",
            directory=self.directory,
            venv=self.cloud.environment.path,
        )
        for path in (
            self.logs,
            self.nova / "instances",
            self.nova / "lock",
            self.directory / "tmp",
            self.directory / "provider-config",
        ):
            path.mkdir(parents=True, exist_ok=True)
        phase = time.monotonic()
        debian_packages.ensure(PACKAGES, "the test cloud's booted guests")
        self.timings["packages_s"] = time.monotonic() - phase
        image, self.timings["image_build_s"] = guest_image.ensure(self.cloud.environment.cache)
        self.timings["bindings_s"] = self._bindings()
        phase = time.monotonic()
        self.network.start_switch(self._environment())
        self._libvirtd()
        self.network.start_agents(
            self._agents_environment(), self.cloud.environment.bin("privsep-helper")
        )
        self._compute()
        self.timings["ready_s"] = time.monotonic() - phase
        phase = time.monotonic()
        connection = self.cloud.connect("admin")
        try:
            external = self.network.make_external_network(connection)
            self._isolate(connection)
            image_id = self._upload(connection, image)
            flavor_id = self._flavor(connection)
        finally:
            connection.close()
        self.timings["image_upload_s"] = time.monotonic() - phase
        return GuestsService(self.host, image_id, flavor_id, self.uri, self.directory, external)

    def _agents_environment(self) -> dict[str, str]:
        """Neutron's processes: the cloud's own drivers on PYTHONPATH (as its API has them)."""
        from tests.cloud.services import DRIVERS

        environment = self._environment()
        environment["PYTHONPATH"] = str(DRIVERS)
        return environment

    # -- the parts ------------------------------------------------------------------------

    def _bindings(self) -> float:
        """libvirt-python built for the cloud's Python into a directory of its own (on
        nova-compute's PYTHONPATH), once per machine."""
        lock = venv_cache.cache_lock(
            self.cloud.environment.cache, "libvirt-python", LOCK_WAIT_S, GuestsError
        )

        def build() -> None:
            run_command(
                f"pip install {LIBVIRT_PYTHON}",
                [
                    str(self.cloud.environment.bin("python")),
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--no-deps",
                    "--target",
                    str(self.bindings),
                    LIBVIRT_PYTHON,
                ],
                log=self.cloud.environment.cache / "libvirt-python.log",
                directory=self.directory,
                environment=venv_cache.outside_environment(),
                timeout_s=BUILD_STEP_TIMEOUT_S,
                error=GuestsError,
                label="the guests' compute host: ",
            )

        return venv_cache.build_once(self.bindings / ".stoker-complete", lock, build)

    def _libvirtd(self) -> None:
        for name in LIBVIRT_PATHS.values():
            (self.libvirt / name).mkdir(parents=True, exist_ok=True)
        (self.libvirt / "etc" / "qemu.conf").write_text(QEMU_CONF)
        (self.libvirt / "etc" / "libvirtd.conf").write_text(
            LIBVIRTD_CONF.format(log=self.logs / "libvirtd.log")
        )
        # The mount points made first: a machine whose libvirt never ran has no /run/libvirt
        # (its service makes it), and mount refuses a missing one (exit 32, seen in CI).
        mounts = "; ".join(
            f"mkdir -p {path} && mount --bind {shlex.quote(str(self.libvirt / name))} {path}"
            for path, name in LIBVIRT_PATHS.items()
        )
        # Open vSwitch's sockets where libvirt's ovs-vsctl looks for them.
        ovs = shlex.quote(str(self.network.ovs))
        mounts += f"; mkdir -p /run/openvswitch; mount --bind {ovs} /run/openvswitch"
        # Its own host name too (a UTS namespace): libvirt names the compute node after
        # it, and placement refuses a second resource provider of the same name (a second
        # test run beside this one, or an earlier run's, on the dev cloud). And its own
        # PID namespace: QEMU runs outside libvirtd's process group, but inside the
        # namespace, which ends when unshare does (--kill-child). unshare ignores SIGTERM
        # (the parent-death signal the cloud's processes get), so it gets SIGKILL when the
        # test run dies (setpriv): a killed run leaves no guest running.
        pid_file = shlex.quote(str(self.libvirt / "run" / "libvirtd.pid"))
        script = (
            f"set -e; mount --make-rprivate /; {mounts}; hostname {self.host}; "
            f"libvirtd --pid-file {pid_file}"
        )
        self.launcher.add(
            "libvirtd",
            [
                *DIE_WITH_THE_RUN,
                "unshare",
                "--mount",
                "--uts",
                "--pid",
                "--fork",
                "--kill-child",
                "--mount-proc",
                "--",
                "sh",
                "-c",
                script,
            ],
            [self.logs / "libvirtd.log"],
        )
        self.launcher.launch("libvirtd")
        self.launcher.wait("libvirtd", self._libvirt_answers, READY_TIMEOUT_S)

    def _libvirt_answers(self) -> bool:
        return self.socket.exists() and virsh(self.uri, "version").returncode == 0

    def _compute(self) -> None:
        privsep_helper = self.cloud.environment.bin("privsep-helper")
        nova_conf = self.cloud.etc / "nova" / "nova.conf"
        helper = f"{privsep_helper} --config-file {nova_conf} --config-file {self.configuration}"
        (self.directory / "provider-config" / "guests.yaml").write_text(PROVIDER_CONFIG)
        self.configuration.write_text(
            NOVA_CONF.format(
                host=self.host,
                nova=self.nova,
                uri=self.uri,
                provider_config=self.directory / "provider-config",
                ovsdb=self.network.socket,
                privsep="".join(
                    f"\n[{section}]\nhelper_command = {helper}\n" for section in PRIVSEP_SECTIONS
                ),
            )
        )
        log = self.logs / "nova-compute-guests.log"
        self.launcher.add(
            "nova-compute-guests",
            [
                # SIGKILL when the test run dies: nova-compute may take minutes to act on
                # SIGTERM (seen here), holding the host's guests' disks meanwhile.
                *DIE_WITH_THE_RUN,
                str(self.cloud.environment.bin("nova-compute")),
                "--config-file",
                str(nova_conf),
                "--config-file",
                str(self.configuration),
                "--log-file",
                str(log),
            ],
            [log],
        )
        self.launcher.launch("nova-compute-guests")
        keystone = identity.Keystone(self.cloud.keystone_url)
        self.launcher.wait(
            "nova-compute-guests", lambda: self._compute_up(keystone), READY_TIMEOUT_S
        )

    def _compute_up(self, keystone: identity.Keystone) -> bool:
        """The host's service is up and its compute node known; the node's UUID (which is
        its placement resource provider's) kept. Libvirt names the node after the machine
        (its hostname), not after the host."""
        compute = self.cloud.endpoints["compute"]
        services = keystone.call(
            "GET", f"{compute}/os-services?binary=nova-compute&host={self.host}"
        )["services"]
        if not services or services[0]["state"] != "up":
            return False
        hypervisors = identity.request(
            "GET",
            f"{compute}/os-hypervisors/detail",
            token=keystone.token,
            headers={"X-OpenStack-Nova-API-Version": "2.53"},
        ).body.get("hypervisors", [])
        mine = [found for found in hypervisors if found["service"]["host"] == self.host]
        if mine:
            self.node_uuid = mine[0]["id"]
        return bool(mine)

    def _isolate(self, connection) -> None:
        """The host in an aggregate that requires the guests' trait, and the trait on the
        host's resource provider (from the provider config) checked."""
        aggregate = connection.compute.create_aggregate(name=f"stoker-guests-{self.suffix}")
        self.aggregate_id = aggregate.id
        connection.compute.add_host_to_aggregate(aggregate, self.host)
        connection.compute.set_aggregate_metadata(aggregate, {f"trait:{TRAIT}": "required"})
        keystone = identity.Keystone(self.cloud.keystone_url)
        placement = self.cloud.endpoints["placement"]
        version = {"OpenStack-API-Version": "placement 1.6"}
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            traits = identity.request(
                "GET",
                f"{placement}/resource_providers/{self.node_uuid}/traits",
                token=keystone.token,
                headers=version,
            ).body
            if TRAIT in traits.get("traits", []):
                return
            if time.monotonic() > deadline:
                raise GuestsError(
                    f"the guests' compute host: its resource provider {self.node_uuid} never "
                    f"got the trait {TRAIT} (its traits: {traits})"
                )
            time.sleep(1)

    def _upload(self, connection, image: guest_image.GuestImage) -> str:
        """The kernel, the initramfs and the root file system in Glance; the id of the
        last, which names the other two."""
        name = f"stoker-guest-{self.suffix}"
        kernel = connection.image.create_image(
            name=f"{name}-kernel",
            filename=str(image.kernel),
            disk_format="aki",
            container_format="aki",
            visibility="public",
            wait=True,
        )
        ramdisk = connection.image.create_image(
            name=f"{name}-ramdisk",
            filename=str(image.ramdisk),
            disk_format="ari",
            container_format="ari",
            visibility="public",
            wait=True,
        )
        root = connection.image.create_image(
            name=name,
            filename=str(image.root),
            disk_format="qcow2",
            container_format="bare",
            visibility="public",
            wait=True,
            kernel_id=kernel.id,
            ramdisk_id=ramdisk.id,
            os_command_line=guest_image.KERNEL_COMMAND_LINE,
            **{f"trait:{TRAIT}": "required"},
        )
        self.image_ids = [kernel.id, ramdisk.id, root.id]
        return root.id

    def _flavor(self, connection) -> str:
        existing = connection.compute.find_flavor(FLAVOR["name"], ignore_missing=True)
        if existing is not None:
            return existing.id
        return connection.compute.create_flavor(is_public=True, **FLAVOR).id

    # -- stop -------------------------------------------------------------------------

    def stop(self) -> None:
        """Every guest ended (QEMU runs outside libvirtd's process group), the processes
        stopped, then what the host left in the cloud and on the machine deleted. Safe to
        call twice."""
        if self.socket.exists():
            for domain in virsh(self.uri, "list", "--name").stdout.split():
                virsh(self.uri, "destroy", domain)
        try:
            connection = self.cloud.connect("admin")
        except Exception as error:  # noqa: BLE001 - best effort
            print(f"the guests' compute host left its records in the cloud: {error}")
            connection = None
        namespaces = (
            self._best_effort(
                "its namespaces' names", lambda: self.network.hosted_namespaces(connection)
            )
            if connection
            else None
        )
        self.launcher.stop()
        self.network.end_processes()
        if connection is not None:
            try:
                self._forget(connection)
                for problem in self.network.forget(connection, namespaces or []):
                    print(f"the guests' compute host could not delete {problem}")
            finally:
                connection.close()
        if self.record is not None:
            self.record.remove()

    @staticmethod
    def _best_effort(what: str, step: Callable[[], object]) -> object:
        try:
            return step()
        except Exception as error:  # noqa: BLE001 - best effort, said
            print(f"the guests' compute host could not read {what}: {error}")
            return None

    def _forget(self, connection) -> None:
        """What the host left in the cloud, deleted (the dev cloud outlives a test run):
        its aggregate, its images, its compute service (and with it its node and resource
        provider). Best effort, each step on its own: what fails is printed, and a
        session's own cloud goes with the session anyway."""
        aggregate_id, self.aggregate_id = self.aggregate_id, None
        image_ids, self.image_ids = self.image_ids, []
        steps: list[tuple[str, Callable[[], object]]] = []
        if aggregate_id is not None:
            steps.append(
                ("its aggregate", lambda: self._delete_aggregate(connection, aggregate_id))
            )
        for image_id in image_ids:
            steps.append(
                (
                    f"image {image_id}",
                    lambda image_id=image_id: connection.image.delete_image(
                        image_id, ignore_missing=True
                    ),
                )
            )
        steps.append(("its compute service", lambda: self._delete_service(connection)))
        for what, step in steps:
            try:
                step()
            except Exception as error:  # noqa: BLE001 - best effort, said
                print(f"the guests' compute host could not delete {what}: {error}")

    def _delete_aggregate(self, connection, aggregate_id: int) -> None:
        connection.compute.remove_host_from_aggregate(aggregate_id, self.host)
        connection.compute.delete_aggregate(aggregate_id, ignore_missing=True)

    def _delete_service(self, connection) -> None:
        for found in connection.compute.services(binary="nova-compute", host=self.host):
            connection.compute.delete_service(found, ignore_missing=True)


def start_for(cloud: DevCloud, directory: Path) -> tuple[GuestsService, Callable[[], None]]:
    """The guests' host beside ``cloud`` outside pytest, and what stops it."""
    guests = Guests(cloud, directory)
    return guests.start(), guests.stop


@pytest.fixture(scope="module")
def guests_service(
    openstack_cloud: DevCloud, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GuestsService]:
    """A compute host whose servers boot (libvirt, QEMU), with the guest image and flavor.

    For one test module only: the Neutron agents it brings serve the networks and routers
    made while they run, any test's (a test group's modules run one after another, so
    none but this module's), and are gone before the next module's tests."""
    guests = Guests(openstack_cloud, tmp_path_factory.mktemp("guests"))
    try:
        service = guests.start()
    except GuestsError as error:
        pytest.fail(str(error), pytrace=False)
    print(
        f"\nguests' compute host {service.host} started: "
        + ", ".join(f"{k} {v:.1f}" for k, v in service.timings.items())
    )
    try:
        yield service
    finally:
        guests.stop()
