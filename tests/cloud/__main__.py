"""``python -m tests.cloud start|stop|status|install|forget-golden``: the test cloud by hand.

For developers who want the cloud running between test runs, or to poke at it with the
``openstack`` client. It runs one session named ``dev`` under the cache directory, which is
left running until ``stop`` (test runs never reap it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from tests.cloud.cloud import CloudError, DevCloud
from tests.cloud.golden import golden_directory
from tests.cloud.infrastructure import MariaDB, RabbitMQ, missing_prerequisites
from tests.cloud.installation import InstallationError, ServiceEnvironment, cache_directory
from tests.cloud.sessions import stop_groups

SESSION = "dev"


def _state_file() -> Path:
    return cache_directory() / "dev" / "state.json"


def attach_dev() -> DevCloud | None:
    """The dev cloud, if ``start`` left one running (for STOKER_TEST_CLOUD=dev)."""
    if not _state_file().exists():
        return None
    state = json.loads(_state_file().read_text())
    if "cloud" not in state:
        return None
    return DevCloud.attach(cache_directory() / "dev", state["cloud"])


def start() -> int:
    missing = missing_prerequisites()
    if missing:
        print("cannot start the test cloud: " + "; ".join(missing), file=sys.stderr)
        return 2
    if _state_file().exists():
        print(
            f"a dev cloud is already recorded in {_state_file()}; run `python -m tests.cloud stop` first",
            file=sys.stderr,
        )
        return 2
    cloud = DevCloud(cache_directory() / "dev", session=SESSION, die_with_parent=False)
    try:
        cloud.start()
    except (CloudError, InstallationError) as error:
        print(error, file=sys.stderr)
        return 1
    _state_file().write_text(
        json.dumps(
            {
                "groups": [
                    process.popen.pid for process in cloud.processes.values() if process.popen
                ],
                "databases": cloud.database_names,
                "vhost": cloud.vhost,
                "cloud": cloud.description(),
            }
        )
    )
    timings = cloud.timings
    print(
        f"test cloud ready in {timings.total_s:.1f} s (install {timings.install_s:.1f} s, databases "
        f"{timings.databases_s:.1f} s{' from the golden copy' if timings.golden_restored else ''}, services {timings.ready_s:.1f} s); "
        f"RSS {cloud.memory_rss_bytes() / 2**20:.0f} MiB"
    )
    print(f"logs: {cloud.logs}")
    print(
        f"export OS_CLIENT_CONFIG_FILE={cloud.clouds_yaml} OS_CLOUD={cloud.cloud_name}   # or {cloud.cloud('demo')}"
    )
    for service_type, url in cloud.endpoints.items():
        print(f"  {service_type:14} {url}")
    return 0


def stop() -> int:
    state_file = _state_file()
    if not state_file.exists():
        print("no dev cloud is recorded as running")
        return 0
    state = json.loads(state_file.read_text())
    stop_groups(state["groups"])
    MariaDB().drop(state["databases"])
    RabbitMQ().delete_vhost(state["vhost"])
    state_file.unlink()
    (cache_directory() / "sessions" / f"{SESSION}.json").unlink(missing_ok=True)
    print("test cloud stopped")
    return 0


def status() -> int:
    environment = ServiceEnvironment()
    print(f"cache:  {environment.cache}")
    print(f"venv:   {environment.path} ({'built' if environment.ready else 'not built'})")
    golden = golden_directory(environment)
    print(f"golden: {golden} ({'saved' if (golden / 'complete').exists() else 'not saved'})")
    print(
        f"dev cloud: {'running, see ' + str(_state_file()) if _state_file().exists() else 'not running'}"
    )
    return 0


def install() -> int:
    started = time.monotonic()
    environment = ServiceEnvironment()
    try:
        environment.ensure(environment.cache / "install.log")
    except InstallationError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"{environment.path} ready ({time.monotonic() - started:.1f} s)")
    return 0


def forget_golden() -> int:
    for golden in ServiceEnvironment().cache.glob("golden-*"):
        shutil.rmtree(golden)
        print(f"removed {golden}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.cloud", description=__doc__.splitlines()[0]
    )
    parser.add_argument("command", choices=["start", "stop", "status", "install", "forget-golden"])
    arguments = parser.parse_args(argv)
    return {
        "start": start,
        "stop": stop,
        "status": status,
        "install": install,
        "forget_golden": forget_golden,
    }[arguments.command.replace("-", "_")]()


if __name__ == "__main__":
    sys.exit(main())
