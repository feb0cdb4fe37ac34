"""Debian packages a test needs from the machine (Chromium for the dashboard's browser
tests; QEMU, libvirt and Open vSwitch for the test cloud's booted guests), installed with
apt the first time a test asks, as root, once per machine: every test run and xdist
worker takes the same lock, and the others find the packages there when they get it.

A test is skipped, with the reason, only when apt itself is not there or the run is not
root; a failed install fails the test with apt's output.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

INSTALL_LOCK = Path("/tmp/stoker-tests-apt-install.lock")
INSTALL_TIMEOUT_S = 900


def missing(packages: Sequence[str]) -> list[str]:
    """The packages of ``packages`` not installed (dpkg's status)."""
    query = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\n", *packages],
        capture_output=True,
        text=True,
        check=False,
    )
    installed = {
        line.split()[0] for line in query.stdout.splitlines() if line.endswith(" installed")
    }
    return [package for package in packages if package not in installed]


def ensure(packages: Sequence[str], needed_for: str) -> None:
    """Install the packages of ``packages`` that are missing (``needed_for``: what needs
    them, as the skip or failure says it)."""
    if not missing(packages):
        return
    apt = shutil.which("apt-get")
    if apt is None:
        pytest.skip(
            f"{needed_for} need Debian's packages {', '.join(packages)}, and apt-get is not available to install them"
        )
    if os.geteuid() != 0:
        pytest.skip(
            f"{needed_for} need Debian's packages: install them as root (apt-get install -y {' '.join(packages)})"
        )
    with open(INSTALL_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        absent = missing(packages)
        if not absent:
            return
        environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        install = [apt, "install", "-y", "-q", "--no-install-recommends", *absent]
        done = subprocess.run(
            install, env=environment, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S
        )
        if done.returncode != 0:
            # The package lists may be missing or stale on a fresh machine.
            update = [apt, "update", "-q"]
            subprocess.run(
                update, env=environment, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S
            )
            done = subprocess.run(
                install, env=environment, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S
            )
    still = missing(packages)
    assert done.returncode == 0 and not still, (
        f"apt-get install {' '.join(absent)} (for {needed_for}) failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    )
