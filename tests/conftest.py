"""Shared fixtures: real SQLite files and a real PostgreSQL database.

PostgreSQL: the suite uses the server at 127.0.0.1:5432 (override with
STOKER_TEST_POSTGRES_URL). If it is not running, the suite starts the machine's cluster
with pg_ctlcluster; if that fails too, PostgreSQL tests fail (they are never skipped
silently). Each test gets its own schema, dropped afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

# The session's test cloud of real OpenStack services, for any test under tests/.
from tests.cloud.addons import fixtures as _addon_fixtures
from tests.cloud.fixture import mark_cloud_tests, openstack_cloud, test_group  # noqa: F401
from tests.tiers import mark_slow_tests

# Services started only for the tests that ask for them (tests/cloud/addons/).
globals().update(_addon_fixtures())

POSTGRES_URL = os.environ.get("STOKER_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def _postgres_up(url: str) -> bool:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
        return True
    except sa.exc.OperationalError:
        return False
    finally:
        engine.dispose()


def _start_postgres() -> None:
    clusters = Path("/etc/postgresql")
    if not clusters.is_dir() or shutil.which("pg_ctlcluster") is None:
        return
    for version in sorted(os.listdir(clusters)):
        subprocess.run(
            ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "start"],
            check=False,
            capture_output=True,
            timeout=60,
        )


@pytest.fixture(scope="session")
def postgres_server() -> str:
    if not _postgres_up(POSTGRES_URL):
        _start_postgres()
        deadline = time.monotonic() + 30
        while not _postgres_up(POSTGRES_URL):
            if time.monotonic() > deadline:
                pytest.fail(f"PostgreSQL is not reachable at {POSTGRES_URL} and could not be started")
            time.sleep(0.5)
    return POSTGRES_URL


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A URL whose connections use a fresh schema of their own."""
    schema = f"stoker_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(postgres_server)
    with admin.begin() as connection:
        connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    separator = "&" if "?" in postgres_server else "?"
    yield f"{postgres_server}{separator}options=-csearch_path%3D{schema}"
    with admin.begin() as connection:
        connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'stoker.sqlite'}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest) -> str:
    """Run the test once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        return request.getfixturevalue("sqlite_url")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def make_service(sqlite_url: str):
    """Build Services on a real store; closed at the end of the test."""
    from stoker.service import Service
    from stoker.settings import Settings

    made = []

    def factory(url: str | None = None, clock=None, **settings):
        service = Service(Settings(database_url=url or sqlite_url, **settings), clock=clock)
        made.append(service)
        return service

    yield factory
    for service in made:
        service.close()


@pytest.fixture
def service(make_service):
    return make_service()


def pytest_configure(config: pytest.Config) -> None:
    """Once per run (not in each xdist worker): compile stoker's modules and the tests'
    helpers to bytecode. The suite starts thousands of ``stoker`` processes, and an
    editable install has no ``.pyc`` files; on a machine with PYTHONDONTWRITEBYTECODE
    set, each process would compile every module it imports again (about a second of
    CPU for each CLI command, several for each server start)."""
    if hasattr(config, "workerinput"):
        return
    import compileall

    import stoker

    for package in (Path(stoker.__file__).parent, Path(__file__).parent / "support"):
        compileall.compile_dir(package, quiet=2, workers=0)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # On an xdist worker, whose collection order is the one the scheduler hands out,
    # xdist sets ``dist`` to "no" and keeps ``--dist loadgroup`` as ``loadgroup``.
    parallel = config.getvalue("dist") == "loadgroup" or bool(getattr(config.option, "loadgroup", False))
    mark_cloud_tests(items, parallel=parallel)
    mark_slow_tests(items)  # the fast tier: -m "not slow" (tests/tiers.py)


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadgroup``: pytest-xdist's group scheduling, each test's group told by
    ``test_group`` (xdist 3.8's own marks are lost on pytest 9, whose node ids it cannot
    rewrite)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class SuiteGroups(LoadGroupScheduling):
        """Groups handed out in collection order (the clouds' first), not by size."""

        def __init__(self, config: pytest.Config, log) -> None:
            super().__init__(config, log)
            config.option.loadscopereorder = False

        def _split_scope(self, nodeid: str) -> str:
            return test_group(nodeid)

    return SuiteGroups(config, log)


# Seconds of test time per scheduling group (``test_group``), summed on the process that
# prints the summary (xdist's controller gets every worker's reports): what the CI's
# wall time is made of, printed last so that a CI log's tail shows it.
_GROUP_SECONDS: dict[str, float] = {}
_FILE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    group = test_group(report.nodeid)
    _GROUP_SECONDS[group] = _GROUP_SECONDS.get(group, 0.0) + report.duration
    path = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not _GROUP_SECONDS:
        return
    clouds = {name: seconds for name, seconds in _GROUP_SECONDS.items() if name.startswith("cloud")}
    rest = sum(_GROUP_SECONDS.values()) - sum(clouds.values())
    shown = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in sorted(clouds.items()))
    terminalreporter.write_line(f"test time by group: {shown}{', ' if shown else ''}the other groups {rest:.0f} s")
    slowest = sorted(_FILE_SECONDS.items(), key=lambda item: -item[1])[:12]
    terminalreporter.write_line("slowest files: " + ", ".join(f"{path.removeprefix('tests/')} {seconds:.0f} s" for path, seconds in slowest))
    # Each cloud group runs on one worker from the start: its files, to balance them.
    for name in sorted(clouds):
        files = sorted(((path, seconds) for path, seconds in _FILE_SECONDS.items() if test_group(path) == name), key=lambda item: -item[1])
        terminalreporter.write_line(f"{name} files: " + ", ".join(f"{path.removeprefix('tests/cloud/')} {seconds:.0f} s" for path, seconds in files))
