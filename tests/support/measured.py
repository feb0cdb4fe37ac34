"""Run a command in a subprocess and measure its peak memory (RSS) truly.

A process's peak RSS counts what it held before its exec: forked from a large pytest
process, any command would report pytest's size. So the command is started by a small
launcher (``python -S`` running this module), and the launcher's own child, forked
from that small process, is the one measured; the launcher reports the child's
``wait4`` usage. The launcher may also cap the command's address space, so a runaway
fails fast instead of eating the machine.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path


def run_measured(
    command: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    timeout_s: float,
    address_space_bytes: int | None = None,
) -> tuple[int, str, int]:
    """Run ``command``; (exit status, stderr, peak RSS in bytes). Past ``timeout_s`` it is
    killed (status -9)."""
    report = cwd / f"measured-{time.monotonic_ns()}.json"
    errors = cwd / f"measured-{time.monotonic_ns()}.stderr"
    launcher = [sys.executable, "-S", __file__, str(report), str(address_space_bytes or 0), str(timeout_s), *command]
    with open(errors, "w") as stderr:
        subprocess.run(launcher, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, env=env, cwd=cwd, timeout=timeout_s + 30, check=False)
    try:
        measured = json.loads(report.read_text())
        return measured["status"], errors.read_text(), measured["peak_rss_bytes"]
    finally:
        report.unlink(missing_ok=True)
        errors.unlink(missing_ok=True)


def _launch(report: str, address_space_bytes: int, timeout_s: float, command: list[str]) -> None:
    pid = os.fork()
    if pid == 0:
        if address_space_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (address_space_bytes, address_space_bytes))
        os.execv(command[0], command)
    deadline = time.monotonic() + timeout_s
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            _, status, usage = os.wait4(pid, 0)
            break
        time.sleep(0.02)
    outcome = {"status": os.waitstatus_to_exitcode(status), "peak_rss_bytes": usage.ru_maxrss * 1024}  # Linux: KiB
    Path(report).write_text(json.dumps(outcome))


if __name__ == "__main__":
    _launch(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:])
