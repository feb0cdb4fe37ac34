"""Sessions of the test cloud as the machine sees them: their process groups, and the records
that let a later test run clean up after one that was killed.

Owns finding, stopping and reaping process groups and each session's record under
``<cache>/sessions/``. A record is written before a session creates anything, lists what it
creates, and is removed by a clean stop; a record whose owning process is gone is reaped.
It knows nothing of OpenStack.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import time
from pathlib import Path

from tests.cloud.infrastructure import InfrastructureError, MariaDB, RabbitMQ

# Seconds a stopped service gets to exit on SIGTERM before its group is killed.
STOP_GRACE_S = 10

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent() -> None:
    """Run in the child before exec: if the test run dies without stopping the cloud, the
    kernel sends SIGTERM, so a killed pytest leaves no services running (the reaper then
    drops the databases and vhost)."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class SessionRecord:
    """``<cache>/sessions/<session>.json``: what a session created, and who owns it."""

    def __init__(
        self,
        cache: Path,
        session: str,
        owned: bool,
        databases: list[str],
        vhost: str,
        directory: Path,
        venv: Path,
    ):
        self.path = cache / "sessions" / f"{session}.json"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write(
            {
                # No owner: a developer's `python -m tests.cloud start`, stopped by hand.
                "owner_pid": os.getpid() if owned else None,
                "owner_start": process_start_time(os.getpid()) if owned else None,
                "databases": databases,
                "vhost": vhost,
                "directory": str(directory),
                "venv": str(venv),
                "groups": [],
            }
        )

    def _write(self, record: dict) -> None:
        self.path.write_text(json.dumps(record))

    def remember_group(self, group: int) -> None:
        record = json.loads(self.path.read_text())
        record["groups"].append(group)
        self._write(record)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def processes_by_group() -> list[tuple[int, int]]:
    """(pid, process group) of every live process on the machine.

    Zombies are left out: a service that exited stays a zombie until we wait for it, and
    counting it as alive would make every stop wait out the whole grace period.
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            found.append((int(entry.name), int(fields[2])))
    return found


def process_start_time(pid: int) -> str | None:
    """The start time of ``pid`` (clock ticks since boot): tells a live owner from a reused pid."""
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split())[19]
    except OSError:
        return None


def stop_groups(groups: list[int]) -> None:
    """SIGTERM each process group, then SIGKILL what is still there after STOP_GRACE_S."""
    for group in groups:
        try:
            os.killpg(group, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_GRACE_S
    while True:
        alive = {pgid for _pid, pgid in processes_by_group()} & set(groups)
        if not alive:
            return
        if time.monotonic() > deadline:
            break
        time.sleep(0.2)
    for group in alive:
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass


def reap_abandoned_sessions(cache: Path, mariadb: MariaDB, rabbitmq: RabbitMQ) -> list[str]:
    """Stop what sessions whose test run died left behind: processes, databases, vhosts."""
    reaped = []
    sessions = cache / "sessions"
    if not sessions.is_dir():
        return reaped
    for record_path in sessions.glob("*.json"):
        try:
            record = json.loads(record_path.read_text())
        except (OSError, ValueError):
            continue
        owner = record.get("owner_pid")
        if owner is None:
            continue  # a developer's `python -m tests.cloud start`: stopped by hand
        if process_start_time(owner) == record.get("owner_start"):
            continue  # its test run is still going
        venv = record.get("venv", "")
        members = processes_by_group()
        groups = []
        for group in record.get("groups", []):
            # Only groups still running the cloud's own programs: the pid may have been reused.
            for pid, pgid in members:
                if pgid == group:
                    try:
                        if venv and venv in Path(f"/proc/{pid}/cmdline").read_text(
                            errors="replace"
                        ):
                            groups.append(group)
                            break
                    except OSError:
                        continue
        stop_groups(groups)
        try:
            mariadb.drop(record.get("databases", []))
            if record.get("vhost"):
                rabbitmq.delete_vhost(record["vhost"])
        except InfrastructureError:
            continue
        record_path.unlink(missing_ok=True)
        reaped.append(record_path.stem)
    return reaped
