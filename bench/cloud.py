"""Benchmark on a real cloud: a network, a subnet and N servers, each on its own port
(flavor m1.tiny, image stoker-tiny), created then deleted, by stoker and by the floor.

  stoker  a stack (OS::Neutron::Net/Subnet/Port, OS::Nova::Server) through
          ``stoker.service.Service`` embedded on an SQLite file.
  floor   the same work done directly with openstacksdk in concurrent threads: the
          flavor and image found by name (once each), ports, then servers, ACTIVE
          waited for by polling the project's server list; delete the servers, wait
          until they are gone, delete the ports, subnet and network.

Prints, per N and side, the wall seconds of create and delete and the API calls, counted
twice: the requests the side sent to each service (exact, counted in this process), and
the requests each service received meanwhile, from the services' uWSGI access logs (one
line per request; the lines appended during the phase). The logs include Nova's own calls
to Neutron, Glance and Placement while it boots a server (part of what the work costs) and
the calls of anyone else using the cloud at the time.
Then Heat 27.0.1's numbers on the same kind of cloud, and the target. No thresholds:
it prints.

The cloud: the dev cloud ``python -m tests.cloud start`` left running if there is one
(it is shared: another client's requests during a phase are counted too, so run it on a
quiet cloud), else a ``tests.cloud.cloud.DevCloud`` started for the run and stopped at
the end. The runs of one N work in a project of their own (created, with quotas for N
servers, and deleted afterwards); that set-up, and the floor's authentication and
version discovery, happen before the phases and are not counted. stoker connects in its
create phase, as one command does, and its token and version documents count. On a
shared cloud, the calls other
clients make in 5 idle seconds before the runs are printed first, as a measure of the noise.

    .venv/bin/python bench/cloud.py                      # N = 1, 10, 20
    .venv/bin/python bench/cloud.py --servers 1,10 --sides floor
    .venv/bin/python bench/cloud.py --servers 1,10 --own-cloud   # a cloud of its own
"""

from __future__ import annotations

import argparse
import re
import secrets
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SIDES = ("floor", "stoker")
# The services whose access logs are counted, as the columns show them (API names of
# tests/cloud/services.py).
APIS = ("nova", "neutron", "glance", "placement", "cinder", "keystone")
FLAVOR, IMAGE = "m1.tiny", "stoker-tiny"
CIDR = "10.77.0.0/24"
# Seconds between two looks at the server list while waiting (the floor's only tunable).
POLL_INTERVAL_S = 1.0
# Seconds spent counting other clients' calls on a shared cloud before the runs.
IDLE_PROBE_S = 5.0
# Seconds a phase may take before the benchmark gives up on it.
PHASE_TIMEOUT_S = 600.0

# Heat 27.0.1 and the floor on the same kind of cloud, N = 20 (measured elsewhere); the
# calls are those of the create phase (this benchmark's floor, on the dev cloud while no
# one else used it, recorded exactly 25, 332 and 40).
HEAT_REFERENCE = {
    "heat": {"create": 27.3, "delete": 21.3, "nova": 202, "neutron": 601, "glance": 141},
    "floor": {"create": 17.9, "delete": 8.6, "nova": 25, "neutron": 332, "glance": 40},
}
TARGET = 1.10  # stoker within 10% of the floor, in time and in API calls

# One request line of uWSGI's log: "[pid: 6541|app: 0|req: 2/2] 127.0.0.1 () {...} [date]
# GET /v2.1/flavors => generated 101 bytes in 34 msecs (HTTP/1.1 200) ..."
REQUEST_LINE = re.compile(rb"^\[pid: \d+\|app: [-\d]+\|req: \d+/\d+\] .* => generated ")


# -- counting API calls ----------------------------------------------------------------------


class AccessLogs:
    """Counts the request lines appended to each service's access log between ``mark()``
    and ``count()``."""

    def __init__(self, logs: dict[str, Path]):
        self.logs = {api: logs[api] for api in APIS if api in logs}
        self._offsets: dict[str, int] = {}

    def mark(self) -> None:
        self._offsets = {api: _size(path) for api, path in self.logs.items()}

    def count(self) -> dict[str, int]:
        counts = {}
        for api, path in self.logs.items():
            with open(path, "rb") as log:
                log.seek(self._offsets.get(api, 0))
                counts[api] = sum(1 for line in log if REQUEST_LINE.match(line))
        return counts


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


class SentRequests:
    """Counts the HTTP requests this process sends to each API of the cloud, by port:
    exact, whoever else uses the cloud, but without the services' calls to each other.
    It wraps ``requests``' ``HTTPAdapter.send``, which keystoneauth (so openstacksdk)
    sends every request through; the wrapper only counts and calls through."""

    def __init__(self, ports: dict[str, int]):
        self.apis = {port: api for api, port in ports.items()}
        self._lock = threading.Lock()  # handler and floor threads send at once
        self._sent: dict[str, int] = {}
        self._marked: dict[str, int] = {}

    @contextmanager
    def installed(self) -> Iterator[SentRequests]:
        from urllib.parse import urlsplit

        from requests.adapters import HTTPAdapter

        original = HTTPAdapter.send

        def send(adapter: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
            api = self.apis.get(urlsplit(request.url).port or 0, "other")
            with self._lock:
                self._sent[api] = self._sent.get(api, 0) + 1
            return original(adapter, request, *args, **kwargs)

        HTTPAdapter.send = send
        try:
            yield self
        finally:
            HTTPAdapter.send = original

    def mark(self) -> None:
        with self._lock:
            self._marked = dict(self._sent)

    def count(self) -> dict[str, int]:
        with self._lock:
            return {
                api: total - self._marked.get(api, 0)
                for api, total in self._sent.items()
                if total > self._marked.get(api, 0)
            }


@dataclass
class Counters:
    logs: AccessLogs
    sent: SentRequests


@dataclass
class Phase:
    seconds: float
    # Requests each service's access log recorded (Nova's calls to the others included).
    calls: dict[str, int]
    # Requests the side itself sent to each service.
    sent: dict[str, int] = field(default_factory=dict)


@dataclass
class Result:
    side: str
    servers: int
    phases: dict[str, Phase] = field(default_factory=dict)
    project_id: str = ""  # the project it ran in
    skipped: str | None = None
    error: str | None = None


def measured(counters: Counters, result: Result, name: str, work: Callable[[], None]) -> None:
    counters.logs.mark()
    counters.sent.mark()
    started = time.perf_counter()
    work()
    seconds = time.perf_counter() - started
    result.phases[name] = Phase(seconds, counters.logs.count(), counters.sent.count())


# -- the project the run works in -------------------------------------------------------------


@dataclass
class Project:
    """A project and a member of it, made for one run (its quotas fit N servers)."""

    id: str
    environ: dict[str, str]
    connection: Any


@contextmanager
def bench_project(cloud: Any, servers: int) -> Iterator[Project]:
    admin = cloud.connect("admin")
    suffix = secrets.token_hex(3)
    password = secrets.token_hex(12)
    project = admin.identity.create_project(name=f"bench-{suffix}", domain_id="default")
    user = admin.identity.create_user(
        name=f"bench-{suffix}",
        password=password,
        domain_id="default",
        default_project_id=project.id,
    )
    try:
        admin.identity.assign_project_role_to_user(
            project, user, admin.identity.find_role("member")
        )
        # Nova's defaults allow 10 instances a project; a run needs N, and a port each.
        admin.set_compute_quotas(
            project.id, instances=servers + 5, cores=servers + 5, ram=(servers + 5) * 512
        )
        admin.set_network_quotas(project.id, port=servers + 20, network=10, subnet=10)
        environ = {
            **cloud.environ("admin"),
            "OS_USERNAME": user.name,
            "OS_PASSWORD": password,
            "OS_PROJECT_NAME": project.name,
        }
        environ.pop("OS_CLIENT_CONFIG_FILE", None)
        import openstack.connection

        connection = openstack.connection.Connection(
            auth_url=environ["OS_AUTH_URL"],
            username=user.name,
            password=password,
            project_name=project.name,
            user_domain_name="Default",
            project_domain_name="Default",
            region_name=environ["OS_REGION_NAME"],
        )
        # Set-up that is not the benchmark's work: a token, each service's version
        # discovery, and Neutron's default security group of the new project.
        connection.authorize()
        list(connection.network.security_groups())
        list(connection.compute.flavors())
        connection.image.get_image(cloud.image_id)
        yield Project(project.id, environ, connection)
    finally:
        _clean_project(admin, project.id)
        admin.delete_compute_quotas(project.id)
        admin.delete_network_quotas(project.id)
        admin.identity.delete_user(user, ignore_missing=True)
        admin.identity.delete_project(project, ignore_missing=True)


def _clean_project(admin: Any, project_id: str) -> None:
    """What is left in the project: whatever a failed run made (servers, ports, subnets,
    networks), and the default security group."""
    leftover = list(admin.compute.servers(all_projects=True, project_id=project_id))
    for server in leftover:
        admin.compute.delete_server(server, ignore_missing=True)
    for server in leftover:
        admin.compute.wait_for_delete(server, wait=120)
    for port in admin.network.ports(project_id=project_id):
        if port.device_owner in ("", None) or port.device_owner.startswith("compute:"):
            admin.network.delete_port(port, ignore_missing=True)
    for network in admin.network.networks(project_id=project_id):
        for port in admin.network.ports(network_id=network.id):
            admin.network.delete_port(port, ignore_missing=True)
        admin.network.delete_network(network, ignore_missing=True)
    # Neutron made the project's default security group on its first request.
    for group in admin.network.security_groups(project_id=project_id):
        admin.network.delete_security_group(group, ignore_missing=True)


# -- the floor: openstacksdk directly, in threads ---------------------------------------------


def _all(work: Callable[[Any], Any], items: list[Any]) -> list[Any]:
    with ThreadPoolExecutor(max_workers=max(1, len(items))) as pool:
        return list(pool.map(work, items))


def _wait_servers(connection: Any, ids: set[str], until: str) -> None:
    """Poll the project's server list (one call a round) until every server in ``ids``
    is ACTIVE (``until="active"``) or gone (``until="gone"``)."""
    deadline = time.monotonic() + PHASE_TIMEOUT_S
    while True:
        servers = {
            server.id: server
            for server in connection.compute.servers(details=True)
            if server.id in ids
        }
        failed = [server for server in servers.values() if server.status == "ERROR"]
        if failed:
            fault = (failed[0].fault or {}).get("message", "no fault given")
            raise RuntimeError(f"server {failed[0].id} went to ERROR: {fault}")
        if until == "gone" and not servers:
            return
        if (
            until == "active"
            and len(servers) == len(ids)
            and all(s.status == "ACTIVE" for s in servers.values())
        ):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"servers not {until} after {PHASE_TIMEOUT_S:.0f} s")
        time.sleep(POLL_INTERVAL_S)


def run_floor(project: Project, count: int, counters: Counters) -> Result:
    result = Result("floor", count, project_id=project.id)
    connection = project.connection
    made: dict[str, Any] = {}

    def create() -> None:
        # The flavor and the image by the names the template gives (openstacksdk's
        # finders, once each: the floor knows the 20 servers share them).
        flavor = connection.compute.find_flavor(FLAVOR, ignore_missing=False)
        image = connection.image.find_image(IMAGE, ignore_missing=False)
        made["network"] = connection.network.create_network(name="bench")
        made["subnet"] = connection.network.create_subnet(
            network_id=made["network"].id, cidr=CIDR, ip_version=4
        )
        made["ports"] = _all(
            lambda index: connection.network.create_port(
                network_id=made["network"].id,
                name=f"bench-port-{index}",
                fixed_ips=[{"subnet_id": made["subnet"].id}],
            ),
            list(range(count)),
        )
        made["servers"] = _all(
            lambda pair: connection.compute.create_server(
                name=f"bench-server-{pair[0]}",
                flavor_id=flavor.id,
                image_id=image.id,
                networks=[{"port": pair[1].id}],
            ),
            list(enumerate(made["ports"])),
        )
        _wait_servers(connection, {server.id for server in made["servers"]}, "active")

    def delete() -> None:
        _all(connection.compute.delete_server, made["servers"])
        _wait_servers(connection, {server.id for server in made["servers"]}, "gone")
        _all(connection.network.delete_port, made["ports"])
        connection.network.delete_subnet(made["subnet"])
        connection.network.delete_network(made["network"])

    try:
        measured(counters, result, "create", create)
        measured(counters, result, "delete", delete)
    except Exception as error:  # noqa: BLE001 - reported in the table, the run goes on
        result.error = f"{type(error).__name__}: {error}"
    return result


# -- stoker: a stack -------------------------------------------------------------------------


def stack_template(count: int) -> str:
    import yaml

    resources: dict[str, Any] = {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": "bench"}},
        "subnet": {
            "type": "OS::Neutron::Subnet",
            "properties": {"network": {"get_resource": "net"}, "cidr": CIDR},
        },
    }
    for index in range(count):
        resources[f"port{index}"] = {
            "type": "OS::Neutron::Port",
            "properties": {
                "name": f"bench-port-{index}",
                "network": {"get_resource": "net"},
                "fixed_ips": [{"subnet": {"get_resource": "subnet"}}],
            },
        }
        resources[f"server{index}"] = {
            "type": "OS::Nova::Server",
            "properties": {
                "name": f"bench-server-{index}",
                "flavor": FLAVOR,
                "image": IMAGE,
                "networks": [{"port": {"get_resource": f"port{index}"}}],
            },
        }
    return yaml.safe_dump(
        {"heat_template_version": "2021-04-16", "resources": resources}, sort_keys=False
    )


def run_stoker(project: Project, count: int, counters: Counters) -> Result:
    from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
    from stoker.service import Service, Source
    from stoker.settings import Settings

    result = Result("stoker", count, project_id=project.id)
    with tempfile.TemporaryDirectory(prefix="stoker-bench-") as directory:
        service = Service(Settings(database_url=f"sqlite:///{Path(directory) / 'bench.sqlite'}"))
        try:
            if "OS::Nova::Server" not in service.registry.known_types():
                result.skipped = "OS::Nova::Server missing"
                return result
            set_cloud_source(EnvironmentCloudSource(project.environ))
            source = Source(stack_template(count), "bench.yaml")
            states: dict[str, Any] = {}

            def create() -> None:
                states["create"] = service.create_stack("bench", source)

            def delete() -> None:
                states["delete"] = service.delete_stack("bench")

            try:
                measured(counters, result, "create", create)
                if states["create"].state != "CREATE_COMPLETE":
                    result.error = (
                        f"create: {states['create'].state}: {states['create'].status_reason}"
                    )
                measured(counters, result, "delete", delete)
                if states["delete"].state != "DELETE_COMPLETE":
                    result.error = (
                        f"delete: {states['delete'].state}: {states['delete'].status_reason}"
                    )
            except Exception as error:  # noqa: BLE001 - reported in the table
                result.error = f"{type(error).__name__}: {error}"
        finally:
            set_cloud_source(None)
            service.close()
    return result


RUNNERS = {"floor": run_floor, "stoker": run_stoker}


# -- the cloud, the run, the table ----------------------------------------------------------


@contextmanager
def benchmark_cloud(own: bool = False) -> Iterator[tuple[Any, str, bool]]:
    """The running dev cloud (unless ``own``), else one started here and stopped at the
    end; with a description, and whether other clients share it."""
    from tests.cloud.__main__ import attach_dev

    attached = None if own else attach_dev()
    if attached is not None:
        yield (
            attached,
            "the dev cloud (shared: other clients' calls during a phase are counted too)",
            True,
        )
        return
    from tests.cloud.cloud import DevCloud
    from tests.cloud.infrastructure import missing_prerequisites

    missing = missing_prerequisites()
    if missing:
        raise SystemExit("no dev cloud runs and none can start: " + "; ".join(missing))
    with tempfile.TemporaryDirectory(prefix="stoker-bench-cloud-") as directory:
        cloud = DevCloud(Path(directory))
        try:
            cloud.start()
            yield (
                cloud,
                f"a test cloud started for this run ({cloud.timings.total_s:.0f} s to start)",
                False,
            )
        finally:
            cloud.stop()


def background_calls(logs: AccessLogs, seconds: float) -> dict[str, int]:
    """The calls other clients make while the benchmark does nothing, for ``seconds``."""
    logs.mark()
    time.sleep(seconds)
    return logs.count()


def run(
    cloud: Any,
    sizes: list[int],
    sides: list[str],
    out: Callable[[str], None] = print,
    idle_s: float = 0.0,
) -> list[Result]:
    """Every (N, side) in turn, in a project per N; prints a row per phase.
    With ``idle_s``, first counts what other clients of the cloud do in that many seconds."""
    logs = AccessLogs(cloud.access_logs)
    results = []
    if idle_s > 0:
        idle = background_calls(logs, idle_s)
        shown = ", ".join(f"{api} {idle[api]}" for api in APIS if idle.get(api))
        out(
            f"other clients, {idle_s:.0f} s before the runs: {sum(idle.values())} calls ({shown or 'none'})"
        )
    out(_header())
    with SentRequests(cloud.ports).installed() as sent:
        counters = Counters(logs, sent)
        for count in sizes:
            # One project per N: each side deletes all it made before the next one starts.
            with bench_project(cloud, count) as project:
                for side in sides:
                    result = RUNNERS[side](project, count, counters)
                    results.append(result)
                    for line in _rows(result):
                        out(line)
    out("")
    for line in _comparison(results) + _reference():
        out(line)
    return results


# The columns: what the side sent (exact), then what the access logs recorded.
SENT_COLUMNS = ("nova", "neutron", "glance", "keystone")


def _header() -> str:
    sent = "".join(f"{api:>9}" for api in SENT_COLUMNS)
    logged = "".join(f"{api:>10}" for api in APIS)
    return (
        f"{'':<27}{'sent by the side':^{9 * len(SENT_COLUMNS)}} | {'recorded by the access logs':^{10 * len(APIS) + 7}}\n"
        f"{'N':>3}  {'side':<7}{'phase':<8}{'seconds':>7}{sent} | {logged}{'all':>7}"
    )


def _rows(result: Result) -> list[str]:
    if result.skipped:
        return [f"{result.servers:>3}  {result.side:<7}skipped: {result.skipped}"]
    rows = []
    for name, phase in result.phases.items():
        sent = "".join(f"{phase.sent.get(api, 0):>9}" for api in SENT_COLUMNS)
        logged = "".join(f"{phase.calls.get(api, 0):>10}" for api in APIS)
        total = sum(phase.calls.values())
        rows.append(
            f"{result.servers:>3}  {result.side:<7}{name:<8}{phase.seconds:>7.1f}{sent} | {logged}{total:>7}"
        )
    if result.error:
        rows.append(f"{result.servers:>3}  {result.side:<7}FAILED: {result.error}")
    return rows


def _comparison(results: list[Result]) -> list[str]:
    """stoker / floor per N and phase: time, then each service's calls as the access logs
    recorded them and (in brackets) as the side sent them."""
    lines = [
        f"stoker / floor (target: {TARGET:.2f} or less in time and in API calls; "
        "calls: access logs [sent by the side])"
    ]
    by_key = {(r.side, r.servers): r for r in results}
    for (side, count), stoker in by_key.items():
        floor = by_key.get(("floor", count))
        if side != "stoker" or floor is None or stoker.skipped:
            continue
        for name, phase in stoker.phases.items():
            base = floor.phases.get(name)
            if base is None:
                continue
            ratios = [f"time {phase.seconds / base.seconds:.2f}"]
            for api in ("nova", "neutron", "glance"):
                logged = _ratio(phase.calls.get(api, 0), base.calls.get(api, 0))
                sent = _ratio(phase.sent.get(api, 0), base.sent.get(api, 0))
                ratios.append(f"{api} {logged} [{sent}]")
            lines.append(f"  N={count:<3} {name:<7} " + ", ".join(ratios))
    if len(lines) == 1:
        lines.append("  (no stoker run to compare)")
    return lines


def _ratio(value: int, base: int) -> str:
    if base:
        return f"{value / base:.2f}"
    return "=" if value == 0 else f"{value}/0"


def _reference() -> list[str]:
    heat, floor = HEAT_REFERENCE["heat"], HEAT_REFERENCE["floor"]
    return [
        "",
        "Reference: Heat 27.0.1 on the same kind of cloud, N = 20 (API calls of the create phase)",
        f"{'':<13}{'create s':>9}{'delete s':>9}{'nova':>7}{'neutron':>9}{'glance':>8}",
        *(
            f"{label:<13}{row['create']:>9.1f}{row['delete']:>9.1f}{row['nova']:>7}{row['neutron']:>9}{row['glance']:>8}"
            for label, row in (("Heat 27.0.1", heat), ("floor", floor))
        ),
        f"{'Heat / floor':<13}{heat['create'] / floor['create']:>9.2f}{heat['delete'] / floor['delete']:>9.2f}"
        f"{heat['nova'] / floor['nova']:>7.1f}{heat['neutron'] / floor['neutron']:>9.2f}{heat['glance'] / floor['glance']:>8.2f}",
        f"target: stoker within {round((TARGET - 1) * 100)}% of the floor in time and API calls "
        f"(at N = 20 on that cloud: create <= {floor['create'] * TARGET:.1f} s, delete <= {floor['delete'] * TARGET:.1f} s)",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--servers", default="1,10,20", help="the Ns, comma-separated (default 1,10,20)"
    )
    parser.add_argument("--sides", default=",".join(SIDES), help="floor, stoker or both (default)")
    parser.add_argument(
        "--own-cloud",
        action="store_true",
        help="start a test cloud for this run even if the dev cloud runs (API counts then have no other clients' calls)",
    )
    arguments = parser.parse_args(argv)
    sizes = [int(value) for value in arguments.servers.split(",") if value.strip()]
    sides = [value.strip() for value in arguments.sides.split(",") if value.strip()]
    unknown = [side for side in sides if side not in SIDES]
    if unknown:
        parser.error(f"unknown sides {unknown}; choose from {', '.join(SIDES)}")
    with benchmark_cloud(own=arguments.own_cloud) as (cloud, which, shared):
        print(f"stoker and the floor on {which}; {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
        print("seconds: wall time of the phase. API calls: sent by the side = the requests this")
        print("process sent to each service (exact); recorded by the access logs = every request")
        print("the service received meanwhile (Nova's own calls to the others, and other clients')")
        run(cloud, sizes, sides, idle_s=IDLE_PROBE_S if shared else 0.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
