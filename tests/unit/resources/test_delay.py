"""OS::Heat::Delay's handler pairs, each through the engine's handler table on a fake
clock (Heat's check_resume_complete called a missing method; every pair is run here)."""

from __future__ import annotations

import pytest

from stoker.resources.heat.delay import Delay
from stoker.sdk.testing import PluginHarness

ALL = ["CREATE", "DELETE", "SUSPEND", "RESUME"]


@pytest.mark.parametrize("action", ["create", "suspend", "resume", "delete"])
def test_delay_each_handler_pair_waits_when_listed(action):
    harness = PluginHarness(Delay, {"min_wait": 30, "actions": ALL})
    if action != "create":
        harness.create()
    start = harness.clock.now()
    getattr(harness, action)()
    assert harness.clock.now() - start >= 30


@pytest.mark.parametrize("action", ["create", "suspend", "resume", "delete"])
def test_delay_each_handler_pair_is_immediate_when_not_listed(action):
    harness = PluginHarness(Delay, {"min_wait": 30, "actions": []})
    start = harness.clock.now()
    getattr(harness, action)()
    assert harness.clock.now() == start


def test_delay_update_in_place_does_not_wait():
    harness = PluginHarness(Delay, {"min_wait": 30, "actions": ALL})
    harness.create()
    start = harness.clock.now()
    harness.update({"min_wait": 60, "max_jitter": 5, "actions": ALL})
    assert harness.clock.now() == start


def test_delay_jitter_is_drawn_once_per_action_within_bounds():
    harness = PluginHarness(Delay, {"min_wait": 5, "max_jitter": 10, "jitter_multiplier": 3})
    tokens = [harness.resource.handle_create() for _ in range(50)]
    waits = [token["wait_secs"] for token in tokens]
    assert all(5 <= wait <= 35 for wait in waits)
    assert len(set(waits)) > 1  # random, not a fixed value
