"""Heat's own API test suite (heat-tempest-plugin, on tempest) run against a stoker URL.

Owns the suite's virtual environment, built once per pinned set and cached outside the clone
(``~/.cache/stoker/tempest``, as ``tests/support/agents.py`` caches the agents), the
tempest.conf a run uses, and one run of the selected tests against an Orchestration API
endpoint, with a result per test. It must not start stoker (``tests/support/server.py``
does) and never installs into stoker's own venv: tempest's oslo pins are not stoker's.

No Keystone. The plugin builds every client through Keystone (``services/clients.py``:
``ClientManager._get_identity_client`` makes a password session, and the gabbi loader asks
its service catalog for the orchestration endpoint and its token). A run puts one object in
that place instead, ``TokenIdentity``: a keystoneauth1 token-endpoint session (every request
goes to the stoker endpoint with ``X-Auth-Token``), that token for the gabbi tests, and a
catalog holding only ``orchestration``, so the plugin's own ``requires_service_type`` skips
the tests that need another service type (``messaging``). Nothing else of the plugin is
changed. The selection, written into tempest.conf (``tempest_conf``):

- ``[service_available]``: every other service false, so ``requires_service('nova')``,
  ``('neutron')``, ``('cinder')`` and ``('glance')`` skip (the Zaqar tests skip by the
  catalog: tempest registers no ``zaqar`` flag, and an unknown flag reads as available);
- no admin credentials, so the tests that switch to admin skip themselves;
- ``[heat_features_enabled]`` multi_cloud false and no ``credential_secret_id`` (Barbican);
- ``skip_functional_test_list``: the one Heat-only-looking test that boots a server without
  saying so (``NEEDS_OTHER_SERVICES``).

A ``Selection`` can load other test packages instead (the scenario tests, on the test cloud:
tests/cloud/test_aodh_tempest_scenarios.py), with the plugin's own Keystone client and a
tempest.conf the caller writes.

A run is the file itself started with the suite's Python (``python tempest.py worker SPEC``),
a few at once: each loads the functional tests and the gabbi tests, then claims units of work
(a functional test; a gabbi YAML file, whose tests depend on one another in order) by creating
a claim file, until none is left, and writes a JSON line per test result. So the top of this
module imports the standard library only (and, outside a worker, ``venv_cache``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

if __name__ != "__main__":
    # Not in a worker: it runs in the suite's venv, where stoker's tests are not importable.
    from tests.support import venv_cache
    from tests.support.venv_cache import tail

# The suite, pinned: the key of the cached environment is made of these and of the full
# pinned set (constraints/tempest.txt). tempest and the plugin are what is tested with;
# gabbi, heatclient and keystoneauth1 are what talk to the server.
TEMPEST_REQUIREMENTS = (
    "tempest==47.0.0",
    "heat-tempest-plugin==3.0.0",
    "gabbi==4.2.3",
    "python-heatclient==5.3.0",
    "keystoneauth1==5.18.1",
)
# Seconds one step of the build may take before it counts as hung.
BUILD_STEP_TIMEOUT_S = 900
# Seconds a test run waits for another run's build to finish.
LOCK_WAIT_S = 1200
# The test packages run: the functional tests (a Python test per API behaviour) and the
# gabbi tests (``tests/api/gabbits/*.yaml``, loaded by ``test_heat_api.load_tests``).
FUNCTIONAL_PACKAGE = "heat_tempest_plugin.tests.functional"
GABBI_MODULE = "heat_tempest_plugin.tests.api.test_heat_api"
# Services a Heat-only run has not. Each name is a ``[service_available]`` flag the plugin's
# ``requires_service`` reads (flags no plugin registers read as available, so the tests
# behind them are also behind ``requires_service_type``, which the catalog answers).
UNAVAILABLE_SERVICES = (
    "nova",
    "neutron",
    "glance",
    "cinder",
    "swift",
    "zaqar",
    "aodh",
    "barbican",
    "octavia",
    "designate",
    "manila",
    "mistral",
    "senlin",
    "trove",
    "magnum",
    "sahara",
    "ironic",
    "gnocchi",
)
# Tests that use another service but carry no skip of the plugin's to say so: class or
# Class.test names for ``skip_functional_test_list``.
NEEDS_OTHER_SERVICES = {
    # Its template has an OS::Nova::Server (image, flavor and network from tempest.conf).
    "EncryptedParametersTest": "creates an OS::Nova::Server",
}
# The tag Heat hides stacks by out of the box (heat.conf ``hidden_stack_tags``), so that
# StackTagTest.test_hidden_stack runs instead of skipping.
HIDDEN_STACK_TAG = "data-processing-cluster"
# Seconds the plugin's waits give a stack or resource to reach a status (its default is 1200:
# a stack on a real cloud boots servers). Everything here is in-process and quick, so a
# status not reached within a minute is never reached.
BUILD_TIMEOUT_S = 60
# Seconds one test may take in all (tempest's OS_TEST_TIMEOUT fixture fails it after that).
TEST_TIMEOUT_S = 150
TOKEN = "stoker-tempest-token"


class TempestInstallationError(Exception):
    """The suite's environment could not be built; the message names the step and its log."""


class TempestUnavailableError(TempestInstallationError):
    """The package index could not be reached: the suite cannot be installed on this machine."""


def cache_directory() -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/stoker/tempest``: survives clones, shared by every run."""
    return venv_cache.cache_directory("tempest")


def tempest_key() -> str:
    """What the environment is built from: the pins and the Python version."""
    return venv_cache.environment_key(
        [*(requirement.encode() + b"\n" for requirement in TEMPEST_REQUIREMENTS), venv_cache.constraints_file("tempest").read_bytes()]
    )


def outside_environment() -> dict[str, str]:
    """The caller's environment less its venv: it carries the machine's index, proxy and CA
    settings (pip.conf, PIP_*, SSL_CERT_FILE); stoker listens on loopback, which a machine's
    HTTP proxy must not be asked for."""
    environment = venv_cache.outside_environment()
    no_proxy = ",".join(
        filter(
            None,
            [os.environ.get("no_proxy") or os.environ.get("NO_PROXY"), "127.0.0.1", "localhost"],
        )
    )
    environment.update(no_proxy=no_proxy, NO_PROXY=no_proxy, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return environment


class TempestEnvironment:
    """The cached venv with tempest and heat-tempest-plugin."""

    def __init__(self, cache: Path | None = None):
        self.cache = cache or cache_directory()
        self.key = tempest_key()
        self.path = self.cache / f"tempest-{self.key}"
        self.venv = self.path / "venv"
        self.marker = self.path / ".stoker-complete"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def ready(self) -> bool:
        return self.marker.exists()

    def ensure(self, log_path: Path) -> TempestEnvironment:
        """Build the environment unless a complete one is cached.

        Raises TempestUnavailableError when the package index cannot be reached and
        TempestInstallationError for any other failure."""
        lock = venv_cache.cache_lock(
            self.cache, f"tempest-{self.key}", LOCK_WAIT_S, TempestInstallationError
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
        python = str(self.python)
        # Few retries: an unreachable index should end in a skip within a minute, not ten.
        pip_network = ["--retries", "2", "--timeout", "60"]
        steps = [
            ("create the venv", None, [sys.executable, "-m", "venv", str(self.venv)]),
            (
                "install tempest and heat-tempest-plugin",
                ", ".join(TEMPEST_REQUIREMENTS),
                [python, "-m", "pip", "install", "-q", *pip_network, "-c", str(venv_cache.constraints_file("tempest")), *TEMPEST_REQUIREMENTS],
            ),
            (
                "import the plugin",
                None,
                [
                    python,
                    "-c",
                    f"import tempest.config, gabbi.driver, {FUNCTIONAL_PACKAGE}, heat_tempest_plugin.services.clients",
                ],
            ),
        ]
        with open(log_path, "a") as log:
            venv_cache.run_steps(
                steps,
                log,
                log_path,
                outside_environment(),
                BUILD_STEP_TIMEOUT_S,
                "tempest's venv",
                TempestInstallationError,
                TempestUnavailableError,
            )


def require_tempest(log_path: Path) -> TempestEnvironment:
    """The suite's environment, built if need be; skips the test if the index is unreachable."""
    import pytest

    try:
        return TempestEnvironment().ensure(log_path)
    except TempestUnavailableError as error:
        pytest.skip(
            f"Heat's API test suite ({', '.join(TEMPEST_REQUIREMENTS)}) cannot be installed: {error}"
        )


def tempest_conf(endpoint: str, directory: Path) -> str:
    """tempest.conf for a run against ``endpoint`` (``http://host:port/v1/<tenant>``), its
    log and locks under ``directory``.

    ``auth_url`` must be set (every test asserts it is) but is never asked: TokenIdentity
    stands in for Keystone. It names a port nothing listens on, so that anything that did
    ask would fail at once, not hang."""
    services = "".join(f"{name} = false\n" for name in UNAVAILABLE_SERVICES)
    tenant = endpoint.rstrip("/").rsplit("/", 1)[-1]
    return (
        "[DEFAULT]\n"
        "use_stderr = false\n"
        f"log_dir = {directory}\n"
        "log_file = tempest.log\n"
        "\n[oslo_concurrency]\n"
        f"lock_path = {directory / 'locks'}\n"
        "\n[service_available]\n"
        "heat = true\n"
        f"{services}"
        "\n[heat_plugin]\n"
        "auth_url = http://127.0.0.1:9/identity/v3\n"
        f"username = {tenant}\n"
        "password = unused\n"
        f"project_name = {tenant}\n"
        "user_domain_name = Default\n"
        "project_domain_name = Default\n"
        "region = RegionOne\n"
        "build_interval = 1\n"
        f"build_timeout = {BUILD_TIMEOUT_S}\n"
        f"skip_functional_test_list = {','.join(sorted(NEEDS_OTHER_SERVICES))}\n"
        f"hidden_stack_tag = {HIDDEN_STACK_TAG}\n"
        "convergence_engine_enabled = true\n"
        "\n[heat_features_enabled]\n"
        "multi_cloud = false\n"
    )


@dataclass
class Outcome:
    """One test's result: ``passed``, ``failed`` or ``skipped``, with the reason or traceback."""

    test_id: str
    status: str
    detail: str = ""
    seconds: float = 0.0

    @property
    def name(self) -> str:
        """The id less the package: ``functional.test_hooks.HooksTest.test_hook_pre_create[id-...]``.
        tempest's ``[id-...]`` stays: two gabbi tests of one file may have the same name."""
        return outcome_name(self.test_id)


def outcome_name(test_id: str) -> str:
    return test_id.removeprefix("heat_tempest_plugin.tests.")


@dataclass
class SuiteRun:
    """Every result of one run, by test name, and what the workers printed."""

    outcomes: dict[str, Outcome]
    output: str
    seconds: float

    def with_status(self, status: str) -> dict[str, Outcome]:
        return {
            name: outcome for name, outcome in self.outcomes.items() if outcome.status == status
        }

    def counts(self) -> dict[str, int]:
        counted = {"passed": 0, "failed": 0, "skipped": 0}
        for outcome in self.outcomes.values():
            counted[outcome.status] += 1
        return counted


@dataclass(frozen=True)
class Selection:
    """What a run loads: test packages, whether the gabbi tests too, and whether the plugin's
    Keystone client is replaced by ``TokenIdentity`` (a run with no Keystone) or left as it
    is (a run on a real cloud, its tempest.conf naming a real Keystone)."""

    packages: tuple[str, ...] = (FUNCTIONAL_PACKAGE,)
    gabbi: bool = True
    token_identity: bool = True


HEAT_ONLY = Selection()


def run_suite(
    environment: TempestEnvironment,
    endpoint: str,
    directory: Path,
    workers: int = 2,
    timeout_s: float = 600,
    selection: Selection = HEAT_ONLY,
    configuration_text: str | None = None,
    test_timeout_s: float = TEST_TIMEOUT_S,
) -> SuiteRun:
    """Run the selected tests (by default the functional and gabbi tests, no Keystone) against
    ``endpoint`` (``http://host:port/v1/<tenant>``), ``workers`` at once, with tempest.conf
    (``configuration_text``, or ``tempest_conf``'s) and every file of the run under
    ``directory``; each test may take ``test_timeout_s`` seconds (tempest's OS_TEST_TIMEOUT:
    a scenario test whose guests boot under emulation takes minutes)."""
    configuration = directory / "etc"
    configuration.mkdir(parents=True, exist_ok=True)
    (configuration / "tempest.conf").write_text(
        configuration_text or tempest_conf(endpoint, directory)
    )
    claims = directory / "claims"
    shutil.rmtree(claims, ignore_errors=True)
    claims.mkdir(parents=True)
    process_environment = outside_environment()
    # The plugin reads these from the environment: HEAT_URL and OS_NO_CLIENT_AUTH would take the
    # orchestration client off TokenIdentity's session; the gabbi tests' token and name prefix
    # are set by the run itself.
    for name in ("HEAT_URL", "OS_NO_CLIENT_AUTH", "OS_TOKEN", "PREFIX"):
        process_environment.pop(name, None)
    process_environment.update(
        TEMPEST_CONFIG_DIR=str(configuration),
        TEMPEST_CONFIG="tempest.conf",
        OS_TEST_TIMEOUT=str(int(test_timeout_s)),
        # Python's own: keeps tests' DeprecationWarnings out of the output.
        PYTHONWARNINGS="ignore",
    )
    started = time.monotonic()
    running = []
    for number in range(workers):
        results = directory / f"results-{number}.jsonl"
        results.unlink(missing_ok=True)
        spec = directory / f"worker-{number}.json"
        spec.write_text(
            json.dumps(
                {
                    "endpoint": endpoint,
                    "token": TOKEN,
                    "claims": str(claims),
                    "results": str(results),
                    "packages": list(selection.packages),
                    "gabbi": selection.gabbi,
                    "token_identity": selection.token_identity,
                }
            )
        )
        log = open(directory / f"worker-{number}.log", "w")  # noqa: SIM115 - closed below
        process = subprocess.Popen(
            # -P: not the script's directory first on sys.path, where this file would shadow tempest.
            [str(environment.python), "-P", str(Path(__file__).resolve()), "worker", str(spec)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=process_environment,
            cwd=directory,
        )
        running.append((process, log, results))
    deadline = started + timeout_s
    for process, log, _ in running:
        try:
            process.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
    outcomes: dict[str, Outcome] = {}
    output = []
    for number, (process, _, results) in enumerate(running):
        output.append(
            f"--- worker {number} (exit {process.returncode}) ---\n{tail(directory / f'worker-{number}.log', 40)}"
        )
        if not results.exists():
            continue
        for line in results.read_text().splitlines():
            if not line.strip():
                continue
            outcome = Outcome(**json.loads(line))
            outcomes[outcome.name] = outcome
    # A unit claimed by a worker that was killed or died has no result: count it as failed.
    for claim in claims.iterdir():
        unit = outcome_name(claim.read_text())
        if unit and unit not in outcomes:
            outcomes[unit] = Outcome(
                unit,
                "failed",
                f"no result: the worker running it was stopped after {timeout_s:.0f} s or died",
            )
    return SuiteRun(outcomes, "\n".join(output), time.monotonic() - started)


# What follows runs in the suite's venv, in a worker (``python tempest.py worker SPEC``).


class TokenIdentity:
    """Stands where the plugin's KeystoneWrapperClient stood: a token and one endpoint.

    Its ``session`` sends every request to the endpoint with the token (keystoneauth1's
    token-endpoint plugin); its catalog has the orchestration service only, so other service
    types are not found, as the plugin's ``requires_service_type`` expects of a cloud
    without them."""

    def __init__(self, endpoint: str, token: str):
        from keystoneauth1 import session, token_endpoint

        self.endpoint = endpoint
        self.auth_token = token
        self.auth_plugin = token_endpoint.Token(endpoint, token)
        self.session = session.Session(auth=self.auth_plugin)
        self.project_id = endpoint.rstrip("/").rsplit("/", 1)[-1]

    @property
    def auth_ref(self):
        raise NotImplementedError(
            "no Keystone: a token-endpoint session has no catalog or access info"
        )

    def get_endpoint_url(
        self, service_type: str, region: str | None = None, endpoint_type: str = "public"
    ) -> str:
        from keystoneauth1 import exceptions

        if service_type == "orchestration":
            return self.endpoint
        raise exceptions.EndpointNotFound(
            f"only the orchestration service is here, not {service_type}"
        )


def _load_units(spec: dict) -> list[tuple[str, object]]:
    """Every test of the selection as units of work, each (name, suite or test)."""
    import unittest

    from heat_tempest_plugin.services import clients

    endpoint, token = spec["endpoint"], spec["token"]
    if spec.get("token_identity", True):
        clients.ClientManager._get_identity_client = lambda manager: TokenIdentity(endpoint, token)
    loader = unittest.TestLoader()
    units: list[tuple[str, object]] = []
    gabbi_units: list[tuple[str, object]] = []

    def walk(suite: unittest.TestSuite) -> None:
        for item in suite:
            if type(item).__name__ == "GabbiSuite":
                tests = list(item)
                if tests:
                    # Named for its first test, which runs first and carries the fixtures.
                    gabbi_units.append((tests[0].id(), item))
            elif isinstance(item, unittest.TestSuite):
                walk(item)
            else:
                units.append((item.id(), item))

    for package in spec.get("packages", [FUNCTIONAL_PACKAGE]):
        walk(loader.discover(package, pattern="test_*.py"))
    if spec.get("gabbi", True):
        walk(loader.loadTestsFromName(GABBI_MODULE))
    if loader.errors:
        raise RuntimeError("loading the tests failed:\n" + "\n".join(loader.errors))
    # The gabbi files first: each is a sequence of a dozen requests, the longest units.
    return sorted(gabbi_units, key=lambda unit: unit[0]) + sorted(units, key=lambda unit: unit[0])


def worker(spec_path: str) -> int:
    """Claim and run units until none is left; a JSON line per test result."""
    import traceback
    import unittest

    spec = json.loads(Path(spec_path).read_text())
    claims = Path(spec["claims"])
    results = open(spec["results"], "a")  # noqa: SIM115 - for the life of the process

    class Recorder(unittest.TestResult):
        def startTest(self, test):
            super().startTest(test)
            self.started = time.monotonic()

        def write(self, test, status: str, detail: str = "") -> None:
            seconds = round(time.monotonic() - getattr(self, "started", time.monotonic()), 2)
            results.write(
                json.dumps(
                    {"test_id": test.id(), "status": status, "detail": detail, "seconds": seconds}
                )
                + "\n"
            )
            results.flush()

        def addSuccess(self, test):
            self.write(test, "passed")

        def addFailure(self, test, error):
            self.write(test, "failed", "".join(traceback.format_exception(*error)))

        def addError(self, test, error):
            self.write(test, "failed", "".join(traceback.format_exception(*error)))

        def addSkip(self, test, reason):
            self.write(test, "skipped", str(reason))

        def addExpectedFailure(self, test, error):
            self.write(test, "passed", "expected failure")

        def addUnexpectedSuccess(self, test):
            self.write(test, "failed", "unexpected success")

    recorder = Recorder()
    for name, unit in _load_units(spec):
        claim = claims / hashlib.sha256(name.encode()).hexdigest()[:24]
        try:
            descriptor = os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            continue
        with os.fdopen(descriptor, "w") as handle:
            handle.write(name)
        # A suite of its own: unittest runs setUpClass (tempest requires it) only from a suite.
        suite = unit if isinstance(unit, unittest.TestSuite) else unittest.TestSuite([unit])
        # One result for every unit; unittest keeps the last test's class in it and would not
        # set that class up again (but tear it down again: tempest's class lock would fail).
        recorder._previousTestClass = None
        suite.run(recorder)
    results.close()
    return 0


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "worker":
    sys.exit(worker(sys.argv[2]))
