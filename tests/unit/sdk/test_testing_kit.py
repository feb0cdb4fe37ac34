"""The plugin author's kit drives real plugins through the engine's handler table."""

from __future__ import annotations

import pytest

from stoker.resources.heat.random_string import RandomString
from stoker.resources.heat.test_resource import TestResource
from stoker.sdk.exceptions import PropertyError, UpdateReplace
from stoker.sdk.testing import PluginHarness


def test_harness_waits_on_a_fake_clock():
    harness = PluginHarness(TestResource, {"value": "v", "wait_secs": 3600})
    start = harness.clock.now()
    harness.create()
    assert harness.clock.now() - start >= 3600  # an hour of engine time, no real waiting
    assert harness.physical_ids == [harness.resource.resource_id]
    assert harness.attribute("output") == "v"
    harness.update({"value": "w", "wait_secs": 0})
    assert harness.attribute("output") == "w"
    harness.delete()


def test_harness_reports_failures_as_the_engine_would():
    harness = PluginHarness(TestResource, {"fail": True})
    with pytest.raises(ValueError, match="Test Resource failed resource"):
        harness.create()


def test_harness_update_replace_and_validation():
    harness = PluginHarness(RandomString, {"length": 12})
    harness.create()
    assert len(harness.reference()) == 12
    with pytest.raises(UpdateReplace):
        harness.update({"length": 13})
    with pytest.raises(PropertyError, match=r"resources.resource.properties.length: 0 is out of range"):
        PluginHarness(RandomString, {"length": 0}).validate()


def test_scaling_policy_reaches_its_signals_through_the_public_method():
    # Resource.signals(): the harness's in-memory signals, as the engine's in a stack.
    from stoker.resources.heat.scaling_policy import ScalingPolicy
    from stoker.sdk.resource import Resource

    harness = PluginHarness(ScalingPolicy, {"auto_scaling_group_id": "group", "scaling_adjustment": 1, "adjustment_type": "change_in_capacity"})
    harness.create()
    assert harness.resource.signals() is harness.signals
    alarm_url = harness.attribute("alarm_url")
    assert alarm_url.startswith("http://127.0.0.1:8004/v1/waitcondition/")
    assert harness.attribute("signal_url").endswith("/resources/resource/signal")
    assert list(harness.signals.credentials.values()) == [True]
    harness.delete()
    assert list(harness.signals.credentials.values()) == [False]  # revoked with the policy
    # Outside an engine (validation, docs) there are none, and nothing breaks.
    assert Resource.signals(ScalingPolicy("p", harness.definition({"auto_scaling_group_id": "g", "scaling_adjustment": 1, "adjustment_type": "change_in_capacity"}), harness.stack)) is None
