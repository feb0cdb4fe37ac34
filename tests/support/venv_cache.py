"""Virtual environments built once per pinned set and cached outside the clone, under
``${XDG_CACHE_HOME:-~/.cache}/stoker``: the agents' (``agents.py``), Heat's API test
suite's (``tempest.py``), Horizon's (``horizon.py``) and the test cloud's services'
(``tests/cloud/installation.py``).

Owns what those three share: the cache directory, the key an environment is cached under
(its pins and the Python version), the file lock two test runs share it by, building an
environment once (the marker written last), running the build's steps into a log, and the
log's tail for error messages. What each environment holds, and its own error classes and
wording, stay with it. The keys and paths must never change for a refactoring: the
environments already cached would be built again.

Standard library only: ``tempest.py`` is also run with the suite's own Python.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO

# What pip says when it cannot reach the package index at all (DNS, refused, proxy, timeout).
UNREACHABLE_INDEX = (
    "NewConnectionError",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "No route to host",
    "ConnectTimeoutError",
    "ProxyError",
)


# The full pinned sets of the side environments (every package, not only the ones named):
# ``.ci/refresh-constraints`` writes them, and each environment's key includes its file.
CONSTRAINTS_DIRECTORY = Path(__file__).with_name("constraints")


def constraints_file(name: str) -> Path:
    """The pins of side environment ``name`` (``tempest``, ``agents``), for ``pip -c``."""
    return CONSTRAINTS_DIRECTORY / f"{name}.txt"


def cache_directory(name: str) -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/stoker/<name>``: survives clones, shared by every run."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "stoker" / name


def environment_key(parts: Iterable[bytes]) -> str:
    """What an environment is built from, as the name it is cached under: ``parts`` (its
    pins, in order), then the Python version."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    digest.update(f"{sys.version_info.major}.{sys.version_info.minor}".encode())
    return digest.hexdigest()[:16]


@contextlib.contextmanager
def cache_lock(directory: Path, name: str, wait_s: float, error: type[Exception]) -> Iterator[None]:
    """An exclusive lock shared by every test run on the machine (flock: released if we
    die); ``error`` is raised when another run holds it for ``wait_s`` seconds."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.lock"
    with open(path, "w") as handle:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise error(
                        f"another test run has held {path} for {wait_s:.0f} s; "
                        "if no other run is going on, delete that file"
                    ) from None
                time.sleep(1)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_once(marker: Path, lock: AbstractContextManager[None], build: Callable[[], None]) -> float:
    """Build an environment unless a complete one is cached (``marker`` exists); returns
    the seconds spent building. ``lock`` is taken only to build, and the marker looked for
    again under it: another run may have finished building while this one waited."""
    if marker.exists():
        return 0.0
    with lock:
        if marker.exists():
            return 0.0
        started = time.monotonic()
        build()
        elapsed = time.monotonic() - started
        marker.write_text(json.dumps({"build_seconds": round(elapsed, 1)}))
        return elapsed


def outside_environment(also: Sequence[str] = ()) -> dict[str, str]:
    """The caller's environment less its venv (and the names in ``also``): it carries the
    machine's index, proxy and CA settings (pip.conf, PIP_*, SSL_CERT_FILE), which pip
    needs."""
    left_out = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", *also)
    return {name: value for name, value in os.environ.items() if name not in left_out}


def run_steps(
    steps: Iterable[tuple[str, str | None, list[str]]],
    log: IO[str],
    log_path: Path,
    environment: Mapping[str, str],
    timeout_s: float,
    building: str,
    error: type[Exception],
    unavailable: type[Exception] | None = None,
    shown: Callable[[list[str]], str] = shlex.join,
) -> None:
    """Run each step (``(what, requirements, command)``) with its output in ``log`` (open
    on ``log_path``), stopping at the first that fails: ``error`` names the step
    (``building``: what is being built, as the message says it); ``unavailable`` instead
    when a step that installs ``requirements`` could not reach the package index."""
    for what, requirements, command in steps:
        log.write(f"\n$ {shown(command)}\n")
        log.flush()
        started = log.tell()
        try:
            result = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise error(f"building {building}: '{what}' took over {timeout_s} s; see {log_path}") from None
        if result.returncode == 0:
            continue
        log.flush()
        if unavailable is not None and requirements:
            with open(log_path, errors="replace") as step_log:
                step_log.seek(started)
                output = step_log.read()
            if any(marker in output for marker in UNREACHABLE_INDEX):
                raise unavailable(
                    f"could not install {requirements}: the package index is unreachable "
                    f"('{what}' failed, exit {result.returncode}):\n{tail(log_path, 8)}\nFull log: {log_path}"
                )
        raise error(
            f"building {building}: '{what}' failed (exit {result.returncode}):\n"
            f"{tail(log_path)}\nFull log: {log_path}"
        )


def tail(path: Path, lines: int = 30) -> str:
    """The last lines of a log, for error messages."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:])
