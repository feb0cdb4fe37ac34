"""The real agents a Heat server runs to apply software deployments, for tests.

Owns the agents' virtual environment, built once per pinned set and cached outside the clone
(os-collect-config and os-apply-config from PyPI with their dependencies, python-heatclient
and requests for heat-config-notify, and heat-agents' sdist extracted beside it: its wheel
is empty), and one run of those agents against a metadata URL, every path they write kept
under the test's tmp dir. It must not start stoker (``tests/support/server.py`` does) and
never installs into stoker's own venv: the agents' oslo and keystoneclient pins are not
stoker's dependencies.

A run does what a server's os-collect-config does with heat-agents' elements installed:
the ``request`` collector GETs the metadata URL, and the command (os-refresh-config's
place) renders heat-agents' os-apply-config templates, then runs ``55-heat-config``, which
hands each new deployment to the ``script`` hook and the hook's result to
``heat-config-notify``, which PUTs or POSTs it to the deployment's ``deploy_signal_id``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import venv_cache

# The agents, pinned: the key of the cached environment is made of these and of the full
# pinned set (constraints/agents.txt).
AGENT_REQUIREMENTS = (
    "os-collect-config==14.1.0",
    "os-apply-config==14.1.0",
    # heat-config-notify signals with requests, and imports heatclient and keystoneclient
    # (a dependency of os-collect-config) when it has them.
    "python-heatclient==5.3.0",
    "requests==2.34.2",
)
# Only the sdist carries the hooks and scripts (heat-config/, heat-config-script/).
HEAT_AGENTS = "heat-agents==13.0.0"
# Seconds one step of the build may take before it counts as hung.
BUILD_STEP_TIMEOUT_S = 900
# Seconds a test run waits for another run's build to finish.
LOCK_WAIT_S = 1200
# Seconds one run of the agents may take: a handful of Python startups, the script, its signal.
AGENT_RUN_TIMEOUT_S = 180


class AgentInstallationError(Exception):
    """The agents' environment could not be built; the message names the step and its log."""


class AgentsUnavailableError(AgentInstallationError):
    """The package index could not be reached: the agents cannot be installed on this machine."""


def cache_directory() -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/stoker/agents``: survives clones, shared by every run."""
    return venv_cache.cache_directory("agents")


def agents_key() -> str:
    """What the environment is built from: the pins and the Python version."""
    return venv_cache.environment_key(
        [
            *(requirement.encode() + b"\n" for requirement in (*AGENT_REQUIREMENTS, HEAT_AGENTS)),
            venv_cache.constraints_file("agents").read_bytes(),
        ]
    )


class AgentEnvironment:
    """The cached venv with os-collect-config and os-apply-config, and heat-agents' sources."""

    def __init__(self, cache: Path | None = None):
        self.cache = cache or cache_directory()
        self.key = agents_key()
        self.path = self.cache / f"agents-{self.key}"
        self.venv = self.path / "venv"
        self.heat_agents = self.path / "heat-agents"
        self.marker = self.path / ".stoker-complete"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def bin(self, name: str) -> Path:
        return self.venv / "bin" / name

    @property
    def templates(self) -> Path:
        """heat-agents' os-apply-config templates: ``/var/run/heat-config/heat-config`` and
        ``/etc/os-collect-config.conf``, as the heat-config element installs them."""
        return self.heat_agents / "heat-config" / "os-apply-config"

    @property
    def heat_config(self) -> Path:
        """``55-heat-config``: runs each new deployment's hook, then heat-config-notify."""
        return (
            self.heat_agents
            / "heat-config"
            / "os-refresh-config"
            / "configure.d"
            / "55-heat-config"
        )

    @property
    def notify(self) -> Path:
        return self.heat_agents / "heat-config" / "bin" / "heat-config-notify"

    @property
    def script_hook(self) -> Path:
        return self.heat_agents / "heat-config-script" / "install.d" / "hook-script.py"

    @property
    def ready(self) -> bool:
        return self.marker.exists()

    def ensure(self, log_path: Path) -> AgentEnvironment:
        """Build the environment unless a complete one is cached.

        Raises AgentsUnavailableError when the package index cannot be reached and
        AgentInstallationError for any other failure."""
        lock = venv_cache.cache_lock(
            self.cache, f"agents-{self.key}", LOCK_WAIT_S, AgentInstallationError
        )
        venv_cache.build_once(self.marker, lock, lambda: self._build(log_path))
        return self

    def _build(self, log_path: Path) -> None:
        # An incomplete environment (a build killed half-way) is rebuilt from nothing; the
        # marker is written last. Scripts carry the venv's absolute path, so it is built in
        # place, never moved.
        shutil.rmtree(self.path, ignore_errors=True)
        self.path.mkdir(parents=True)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        # The caller's environment is kept: it carries the machine's index, proxy and CA
        # settings (pip.conf, PIP_*, SSL_CERT_FILE), which pip needs.
        environment = venv_cache.outside_environment()
        environment["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        downloads = self.path / "downloads"
        python = str(self.python)
        # Few retries: an unreachable index should end in a skip within a minute, not ten.
        pip_network = ["--retries", "2", "--timeout", "60"]
        steps = [
            ("create the venv", None, [sys.executable, "-m", "venv", str(self.venv)]),
            (
                "install the agents",
                ", ".join(AGENT_REQUIREMENTS),
                [python, "-m", "pip", "install", "-q", *pip_network, "-c", str(venv_cache.constraints_file("agents")), *AGENT_REQUIREMENTS],
            ),
            (
                "download heat-agents' sdist",
                HEAT_AGENTS,
                [
                    python,
                    "-m",
                    "pip",
                    "download",
                    "-q",
                    *pip_network,
                    "--no-deps",
                    "--no-binary",
                    ":all:",
                    "--dest",
                    str(downloads),
                    HEAT_AGENTS,
                ],
            ),
        ]
        with open(log_path, "a") as log:
            venv_cache.run_steps(
                steps,
                log,
                log_path,
                environment,
                BUILD_STEP_TIMEOUT_S,
                "the agents' venv",
                AgentInstallationError,
                AgentsUnavailableError,
            )
        archives = sorted(downloads.glob("heat_agents-*.tar.gz")) + sorted(
            downloads.glob("heat-agents-*.tar.gz")
        )
        if len(archives) != 1:
            raise AgentInstallationError(
                f"expected one heat-agents sdist in {downloads}, found {sorted(downloads.iterdir())}"
            )
        # The "data" filter (Python 3.11.4+) refuses links and paths out of the directory.
        safety = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        with tarfile.open(archives[0]) as archive:
            archive.extractall(self.path, **safety)
        (unpacked,) = [
            path
            for path in self.path.iterdir()
            if path.is_dir() and path.name.startswith("heat_agents-")
        ]
        unpacked.rename(self.heat_agents)
        for needed in (
            self.heat_config,
            self.notify,
            self.script_hook,
            self.templates / "var/run/heat-config/heat-config",
        ):
            if not needed.is_file():
                raise AgentInstallationError(
                    f"{HEAT_AGENTS}'s sdist has no {needed.relative_to(self.heat_agents)}"
                )


def require_agents(log_path: Path) -> AgentEnvironment:
    """The agents' environment, built if need be; skips the test if the index is unreachable."""
    try:
        return AgentEnvironment().ensure(log_path)
    except AgentsUnavailableError as error:
        pytest.skip(
            f"the real os-collect-config/os-apply-config/heat-agents cannot be installed: {error}"
        )


@dataclass
class AgentRun:
    """One run of os-collect-config: its exit status and everything the agents printed."""

    returncode: int
    output: str
    root: Path

    @property
    def deployed(self) -> Path:
        """55-heat-config's record: ``<config id>.json`` per deployment it ran, and
        ``<config id>.notify.json`` with what heat-config-notify sent."""
        return self.root / "var/lib/heat-config/deployed"

    def notifications(self) -> dict[str, dict]:
        """What heat-config-notify was given to send, by derived config id."""
        return {
            path.name.removesuffix(".notify.json"): json.loads(path.read_text())
            for path in sorted(self.deployed.glob("*.notify.json"))
        }

    def __str__(self) -> str:
        return f"os-collect-config exited {self.returncode}:\n{self.output}"


def _write_executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def _python_wrapper(path: Path, python: Path, script: Path) -> Path:
    """heat-agents' scripts start with ``#!/usr/bin/env python3``: run them with the agents'
    Python, whatever python3 the PATH finds first."""
    return _write_executable(
        path, f'#!/bin/sh\nexec {shlex.quote(str(python))} {shlex.quote(str(script))} "$@"\n'
    )


def prepare_server(environment: AgentEnvironment, directory: Path) -> Path:
    """Lay out a server's agent files under ``directory`` (idempotent); returns the command
    os-collect-config runs on new metadata. ``directory/root`` stands for the server's /."""
    root = directory / "root"
    bin_directory = directory / "bin"
    hooks = directory / "hooks"
    _python_wrapper(hooks / "script", environment.python, environment.script_hook)
    notify = _python_wrapper(
        bin_directory / "heat-config-notify", environment.python, environment.notify
    )
    # As root, os-apply-config also logs to /var/log/os-apply-config.log; these runs write
    # nothing outside their tmp dir, so it is told it is not root (it changes nothing else).
    shim = bin_directory / "os-apply-config.py"
    shim.parent.mkdir(parents=True, exist_ok=True)
    shim.write_text(
        "import os\nimport sys\n\n"
        "from os_apply_config import apply_config\n\n"
        "os.geteuid = lambda: 65534\n"
        "sys.exit(apply_config.main(sys.argv))\n"
    )
    apply_config = _python_wrapper(bin_directory / "os-apply-config", environment.python, shim)
    variables = {
        "HEAT_SHELL_CONFIG": root / "var/run/heat-config/heat-config",
        "HEAT_CONFIG_DEPLOYED": root / "var/lib/heat-config/deployed",
        "HEAT_CONFIG_DEPLOYED_OLD": root / "var/run/heat-config/deployed",
        "HEAT_CONFIG_HOOKS": hooks,
        "HEAT_CONFIG_NOTIFY": notify,
        "HEAT_SCRIPT_WORKING": root / "var/lib/heat-config/heat-config-script",
        "HEAT_SCRIPT_OUTPUTS": root / "var/run/heat-config/heat-config-script",
    }
    exports = "".join(
        f"export {name}={shlex.quote(str(value))}\n" for name, value in variables.items()
    )
    # os-refresh-config's place: its configure.d holds 20-os-apply-config, then 55-heat-config.
    return _write_executable(
        bin_directory / "refresh-config",
        "#!/bin/sh\nset -eu\n"
        + exports
        + f"{shlex.quote(str(apply_config))} --templates {shlex.quote(str(environment.templates))}"
        f" --output {shlex.quote(str(root))}\n"
        f"exec {shlex.quote(str(environment.python))} {shlex.quote(str(environment.heat_config))}\n",
    )


def _collector_options(collector: dict[str, dict[str, str]]) -> str:
    """The ``collectors`` line and each collector's section of os-collect-config.conf."""
    text = f"collectors = {', '.join(collector)}\n"
    for name, options in collector.items():
        text += f"\n[{name}]\n"
        for key, value in options.items():
            # oslo.config reads "$name" as a reference to another option; "$$" is a "$".
            text += f"{key} = {str(value).replace('$', '$$')}\n"
    return text


def run_agents(environment: AgentEnvironment, metadata_url: str | None, directory: Path, collector: dict[str, dict[str, str]] | None = None) -> AgentRun:
    """Run ``os-collect-config --one-time`` with the ``request`` collector on ``metadata_url``
    (or, given ``collector``, the collector it names with its options: ``{"heat": {...}}``,
    as the metadata's ``os-collect-config`` section gives them), as a server does; a second
    run in the same ``directory`` is the same server polling again (55-heat-config skips
    configs it already deployed)."""
    command = prepare_server(environment, directory)
    root = directory / "root"
    state = directory / "os-collect-config"
    state.mkdir(parents=True, exist_ok=True)  # it makes its cachedir with mkdir, not makedirs
    # Its own config file: without one, os-collect-config reads /etc/os-collect-config.conf.
    config_file = directory / "os-collect-config.conf"
    config_file.write_text(
        "[DEFAULT]\n"
        f"command = {shlex.quote(str(command))}\n"
        f"cachedir = {state / 'cache'}\n"
        f"backup_cachedir = {state / 'backup'}\n"
        + _collector_options(collector or {"request": {"metadata_url": str(metadata_url)}})
    )
    arguments = [
        str(environment.bin("os-collect-config")),
        "--config-file",
        str(config_file),
        "--one-time",
    ]
    # stoker listens on loopback: a machine's HTTP proxy must not be asked for it.
    no_proxy = ",".join(
        filter(
            None,
            [os.environ.get("no_proxy") or os.environ.get("NO_PROXY"), "127.0.0.1", "localhost"],
        )
    )
    process_environment = {
        name: value
        for name, value in os.environ.items()
        if name not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    }
    process_environment.update(no_proxy=no_proxy, NO_PROXY=no_proxy)
    result = subprocess.run(
        arguments,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=process_environment,
        timeout=AGENT_RUN_TIMEOUT_S,
        cwd=directory,
        check=False,
    )
    return AgentRun(result.returncode, result.stdout, root)
