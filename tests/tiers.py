"""The suite's two tiers: the whole suite (CI, the README's command) and a developer's
fast tier, ``pytest -m "not slow" -n 2`` (``.ci/fast``), which leaves out the tests
marked ``slow`` here.

Owns: which tests are slow, decided in one place by ``mark_slow_tests`` at collection:
every test of the test cloud (under ``tests/cloud/``, or using the ``openstack_cloud``
fixture: the ``cloud`` marker), every test its own module marks ``slow`` (workers on
PostgreSQL, the README tour, heat-tempest), and the tests measured at 1 s or more, listed in ``tests/slow_tests.txt``.
Must not: leave a layer without tests in the fast tier (each of unit, store, engine, API
through a real server and CLI keeps its quick ones); tell a test's tier by anything but
its node id and markers (the same test is in the same tier on every machine).
"""

from __future__ import annotations

from pathlib import Path

import pytest

# Tests (node ids without parameters) measured at 1 s or more each: tests/slow_tests.txt.
MEASURED_SLOW = frozenset(
    line.strip()
    for line in (Path(__file__).parent / "slow_tests.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#")
)


def is_slow(item: pytest.Item) -> bool:
    if item.nodeid.startswith("tests/cloud/") or item.get_closest_marker("cloud") is not None:
        return True
    return item.nodeid.split("[", 1)[0] in MEASURED_SLOW


def mark_slow_tests(items: list[pytest.Item]) -> None:
    """Give the ``slow`` marker to every test the fast tier leaves out (after
    ``mark_cloud_tests``, whose ``cloud`` marker it reads)."""
    for item in items:
        if item.get_closest_marker("slow") is None and is_slow(item):
            item.add_marker(pytest.mark.slow)
