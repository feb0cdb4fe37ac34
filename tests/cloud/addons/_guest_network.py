"""The network of the guests' host (``guests.py``): Open vSwitch and Neutron's agents, as a
real Neutron deployment with ML2/OVS has them, for the guests' ports, routers and DHCP.

- **Open vSwitch of the session's own**: ovsdb-server and ovs-vswitchd with their database,
  sockets and logs in the session's directory, every bridge on the userspace datapath
  (``datapath_type=netdev``: this machine's kernel has no openvswitch module). libvirtd sees
  the directory as ``/run/openvswitch`` (it runs ``ovs-vsctl`` to plug a guest's tap); os-vif
  and the agents are given its socket; the agents' own ``ovs-vsctl`` calls find it through
  ``OVS_RUNDIR``.
- **Neutron's RPC server** (``neutron-rpc-server``, with the cloud's own configuration): the
  cloud's neutron-api runs under uWSGI and serves no RPC, so the agents' reports would reach
  nobody without it.
- **The Open vSwitch, L3 and DHCP agents** of the guests' host (named as the compute host, so
  ML2's ``openvswitch`` driver binds the guests' ports: it binds only where its agent is
  alive, and the fake host's ports still go to the no-op driver), each with an OpenFlow port
  of its own (two sessions run on one machine). Routers and DHCP servers live in network
  namespaces (``qrouter-<id>``, ``qdhcp-<id>``), NAT in their iptables.
- **The external network**: a flat network on a physical network named for the session,
  mapped to a ``netdev`` bridge whose host address is in a /24 chosen for the session
  (``172.24.<n>.1``): the host (tempest, a test) reaches floating IPs through it, and a guest
  reaches the host (``stoker serve`` listening on that address) through its router's SNAT.

Must not: change the cloud's six services (their configuration already lists the
``openvswitch`` driver before the no-op one and ``flat_networks = *``).
"""

from __future__ import annotations

import ipaddress
import os
import random
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tests.cloud import identity
from tests.cloud.addons._service import Launcher, run_command

if TYPE_CHECKING:
    from tests.cloud.cloud import DevCloud

READY_TIMEOUT_S = 180
# A process's command prefix: it gets SIGKILL, not the cloud's SIGTERM, when the test run
# dies (for processes that ignore SIGTERM or take long over it: the agents kept running
# for minutes after one, seen here).
DIE_WITH_THE_RUN = ("setpriv", "--pdeathsig", "KILL", "--")
# The agents' privileged helpers (neutron.privileged's contexts): run as they are.
PRIVSEP_SECTIONS = (
    "privsep",
    "privsep_dhcp_release",
    "privsep_ovs_vsctl",
    "privsep_namespace",
    "privsep_conntrack",
    "privsep_link",
)
AGENTS = {"openvswitch": "Open vSwitch agent", "l3": "L3 agent", "dhcp": "DHCP agent"}
AGENTS_CONF = """\
[DEFAULT]
host = {host}
interface_driver = openvswitch
# Guests read their metadata from the config drive: no metadata proxy (haproxy).
enable_isolated_metadata = false
enable_metadata_proxy = false
# The RPC server beside the API (below) answers the agents.
rpc_workers = 1
rpc_state_report_workers = 1
# Only networks and routers made while the agents run come to them (the RPC server reads
# this file), not every one an earlier test left in the cloud.
network_auto_schedule = false
router_auto_schedule = false
# The agents' state (DHCP servers' files, routers' processes) in the session's directory.
state_path = {state}
# dnsmasq stays root: it reads its hosts file after dropping to "nobody", who cannot
# reach the session's root-only directory; it then answered no guest's DHCP request.
dnsmasq_config_file = {dnsmasq_conf}

[agent]
# Root already: commands run as they are.
root_helper = env
tunnel_types = vxlan
report_interval = 5

[ovs]
integration_bridge = br-int
tunnel_bridge = br-tun
datapath_type = netdev
local_ip = 127.0.0.1
bridge_mappings = {physnet}:{bridge}
ovsdb_connection = unix:{socket}
of_listen_port = {openflow_port}

[securitygroup]
firewall_driver = openvswitch
{privsep}
"""


@dataclass(frozen=True)
class ExternalNetwork:
    """The guests' external network: its id and name, and the host's address on it."""

    id: str
    name: str
    host_address: str
    cidr: str


class GuestNetwork:
    """Open vSwitch and the agents for the host ``host``, launched by ``launcher`` (the
    guests' processes), their state under ``directory``."""

    def __init__(
        self, cloud: DevCloud, directory: Path, host: str, suffix: str, launcher: Launcher
    ):
        from tests.cloud.cloud import free_port

        self.cloud = cloud
        self.directory = directory
        self.host = host
        self.launcher = launcher
        self.ovs = directory / "openvswitch"
        self.socket = self.ovs / "db.sock"
        self.bridge = f"brg{suffix}"  # an interface name: 15 characters at most
        self.physnet = f"guests{suffix}"
        self.configuration = directory / "neutron-guests.conf"
        self.openflow_port = free_port()
        self.external: ExternalNetwork | None = None

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` with Open vSwitch's directory for its tools (``OVS_RUNDIR``, ...)."""
        return {
            **base,
            "OVS_RUNDIR": str(self.ovs),
            "OVS_DBDIR": str(self.ovs),
            "OVS_LOGDIR": str(self.ovs),
        }

    # -- the switch ---------------------------------------------------------------------------

    def start_switch(self, environment: dict[str, str]) -> None:
        """ovsdb-server and ovs-vswitchd, and the external bridge with the host's address."""
        self.ovs.mkdir(parents=True, exist_ok=True)
        environment = self.environment(environment)
        database = self.ovs / "conf.db"
        run_command(
            "ovsdb-tool create",
            ["ovsdb-tool", "create", str(database), "/usr/share/openvswitch/vswitch.ovsschema"],
            log=self.ovs / "setup.log",
            directory=self.directory,
            environment=environment,
            timeout_s=60,
            error=OSError,
            label="Open vSwitch: ",
        )
        self.launcher.add(
            "ovsdb-server",
            [
                "ovsdb-server",
                f"--remote=punix:{self.socket}",
                f"--unixctl={self.ovs / 'ovsdb-server.ctl'}",
                f"--log-file={self.ovs / 'ovsdb-server.log'}",
                str(database),
            ],
            [self.ovs / "ovsdb-server.log"],
        )
        self.launcher.launch("ovsdb-server", environment)
        self.launcher.wait("ovsdb-server", self.socket.exists, READY_TIMEOUT_S)
        self.vsctl(environment, "--no-wait", "init")
        # Checksums a guest's virtio-net left to the hardware (a kernel tap, read through
        # AF_PACKET) are completed before the packet leaves the switch: without it, a
        # guest's UDP and TCP reached the namespaces with bad checksums and were dropped
        # there (a veth's UDP broadcast was, here; ICMP, whose checksum is always filled
        # in, got through).
        self.vsctl(
            environment,
            "--no-wait",
            "set",
            "Open_vSwitch",
            ".",
            "other_config:userspace-tso-enable=true",
        )
        self.launcher.add(
            "ovs-vswitchd",
            [
                "ovs-vswitchd",
                f"unix:{self.socket}",
                f"--unixctl={self.ovs / 'ovs-vswitchd.ctl'}",
                f"--log-file={self.ovs / 'ovs-vswitchd.log'}",
            ],
            [self.ovs / "ovs-vswitchd.log"],
        )
        self.launcher.launch("ovs-vswitchd", environment)
        self.launcher.wait("ovs-vswitchd", (self.ovs / "ovs-vswitchd.ctl").exists, READY_TIMEOUT_S)
        self.vsctl(
            environment,
            "add-br",
            self.bridge,
            "--",
            "set",
            "bridge",
            self.bridge,
            "datapath_type=netdev",
        )
        cidr = free_subnet()
        host_address = str(next(ipaddress.ip_network(cidr).hosts()))
        for command in (
            ["ip", "addr", "add", f"{host_address}/24", "dev", self.bridge],
            ["ip", "link", "set", self.bridge, "up"],
        ):
            subprocess.run(command, check=True, capture_output=True, timeout=30)
        self.external = ExternalNetwork("", "", host_address, cidr)

    def vsctl(self, environment: dict[str, str], *arguments: str) -> str:
        done = subprocess.run(
            ["ovs-vsctl", f"--db=unix:{self.socket}", "--timeout=30", *arguments],
            env=environment,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise OSError(f"ovs-vsctl {' '.join(arguments)} failed: {done.stderr.strip()}")
        return done.stdout

    # -- the agents ---------------------------------------------------------------------------

    def start_agents(self, environment: dict[str, str], privsep_helper: Path) -> None:
        """The RPC server and the three agents, until Neutron lists them alive."""
        neutron = self.cloud.etc / "neutron"
        files = [neutron / "neutron.conf", neutron / "ml2_conf.ini", self.configuration]
        configuration = [argument for path in files for argument in ("--config-file", str(path))]
        helper = " ".join([str(privsep_helper), *configuration])
        state = self.directory / "neutron-state"
        state.mkdir(parents=True, exist_ok=True)
        dnsmasq_conf = self.directory / "dnsmasq.conf"
        dnsmasq_conf.write_text("user=root\n")
        self.configuration.write_text(
            AGENTS_CONF.format(
                state=state,
                dnsmasq_conf=dnsmasq_conf,
                host=self.host,
                physnet=self.physnet,
                bridge=self.bridge,
                socket=self.socket,
                openflow_port=self.openflow_port,
                privsep="".join(
                    f"\n[{section}]\nhelper_command = {helper}\n" for section in PRIVSEP_SECTIONS
                ),
            )
        )
        environment = self.environment(environment)
        logs = self.directory / "logs"
        programs = ["neutron-rpc-server", *(f"neutron-{agent}-agent" for agent in AGENTS)]
        for program in programs:
            log = logs / f"{program}.log"
            self.launcher.add(
                program,
                [
                    *DIE_WITH_THE_RUN,
                    str(self.cloud.environment.bin(program)),
                    *configuration,
                    "--log-file",
                    str(log),
                ],
                [log],
            )
            self.launcher.launch(program, environment)
        keystone = identity.Keystone(self.cloud.keystone_url)
        self.launcher.wait(
            "neutron-openvswitch-agent", lambda: self._agents_alive(keystone), READY_TIMEOUT_S
        )

    def _agents_alive(self, keystone: identity.Keystone) -> bool:
        network = self.cloud.endpoints["network"]
        agents = keystone.call("GET", f"{network}/v2.0/agents?host={self.host}")["agents"]
        alive = {agent["agent_type"] for agent in agents if agent["alive"]}
        return set(AGENTS.values()) <= alive

    # -- the external network -----------------------------------------------------------------

    def make_external_network(self, connection) -> ExternalNetwork:
        """The flat external network on the bridge, its subnet the bridge's /24 (the host
        is its gateway; floating IPs from .10 up)."""
        assert self.external is not None, "start_switch first"
        network = connection.network.create_network(
            name=f"guests-public-{self.physnet}",
            # External (routers' gateways, floating IPs), not shared: a project's server
            # asking Nova for "auto" must not find it among its networks.
            is_router_external=True,
            provider_network_type="flat",
            provider_physical_network=self.physnet,
        )
        subnet = ipaddress.ip_network(self.external.cidr)
        connection.network.create_subnet(
            network_id=network.id,
            name=f"guests-public-{self.physnet}",
            ip_version=4,
            cidr=self.external.cidr,
            gateway_ip=self.external.host_address,
            enable_dhcp=False,
            allocation_pools=[{"start": str(subnet[10]), "end": str(subnet[250])}],
        )
        self.external = ExternalNetwork(
            network.id, network.name, self.external.host_address, self.external.cidr
        )
        return self.external

    # -- stop -----------------------------------------------------------------------------------

    def hosted_namespaces(self, connection) -> list[str]:
        """The namespaces the agents made for the routers and networks they host (asked
        before the agents stop; deleted after)."""
        names = []
        for agent in connection.network.agents(host=self.host):
            if agent.agent_type == AGENTS["l3"]:
                names += [
                    f"qrouter-{router.id}"
                    for router in connection.network.agent_hosted_routers(agent)
                ]
            elif agent.agent_type == AGENTS["dhcp"]:
                names += [
                    f"qdhcp-{network.id}"
                    for network in connection.network.dhcp_agent_hosting_networks(agent)
                ]
        return names

    def end_processes(self) -> None:
        """After the agents stopped: the processes they left running (a DHCP server per
        network: an agent that stops leaves them, as it would to restart) ended, found by
        the pid files under the agents' state."""
        for pid_file in (self.directory / "neutron-state").glob("**/pid*"):
            if not pid_file.is_file():
                continue
            try:
                os.kill(int(pid_file.read_text().strip()), signal.SIGKILL)
            except (ValueError, ProcessLookupError, PermissionError):
                pass

    def forget(self, connection, namespaces: list[str]) -> list[str]:
        """After the agents stopped: their namespaces deleted, the external network and the
        agents' records too. What could not be deleted, said."""
        problems = []
        for namespace in namespaces:
            done = subprocess.run(
                ["ip", "netns", "delete", namespace], capture_output=True, text=True, check=False
            )
            if done.returncode != 0 and "No such file" not in done.stderr:
                problems.append(f"namespace {namespace}: {done.stderr.strip()}")
        steps = []
        if self.external is not None and self.external.id:
            steps.append(
                (
                    f"network {self.external.name}",
                    lambda: connection.network.delete_network(
                        self.external.id, ignore_missing=True
                    ),
                )
            )
        for agent in connection.network.agents(host=self.host):
            steps.append(
                (
                    f"agent {agent.agent_type}",
                    lambda agent=agent: connection.network.delete_agent(agent, ignore_missing=True),
                )
            )
        for what, step in steps:
            try:
                step()
            except Exception as error:  # noqa: BLE001 - best effort, said
                problems.append(f"{what}: {error}")
        return problems


def free_subnet() -> str:
    """A /24 of 172.24.0.0/16 no interface of this machine is on (each session's external
    bridge has one of its own)."""
    used = subprocess.run(
        ["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True, check=True
    ).stdout
    taken = {
        ipaddress.ip_interface(field).network
        for line in used.splitlines()
        for field in line.split()
        if "/" in field and field[0].isdigit()
    }
    chooser = random.Random(os.getpid() ^ time.monotonic_ns())
    for _ in range(500):
        candidate = ipaddress.ip_network(f"172.24.{chooser.randrange(1, 255)}.0/24")
        if not any(candidate.overlaps(network) for network in taken):
            return str(candidate)
    raise OSError("no free /24 in 172.24.0.0/16 for the guests' external network")
