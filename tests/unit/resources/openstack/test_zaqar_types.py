"""The Zaqar types without a cloud: Heat's schemas, validation rules, names, and what
updates in place (no client is called here; tests/cloud/test_zaqar_types.py drives the
real Zaqar)."""

from __future__ import annotations

import json

import pytest

from stoker.resources.openstack import constraint_mapping, resource_mapping
from stoker.resources.openstack.zaqar.client_plugin import ZaqarClientPlugin, _expiry
from stoker.resources.openstack.zaqar.mistral_trigger import MistralTrigger
from stoker.resources.openstack.zaqar.queue import ZaqarQueue
from stoker.resources.openstack.zaqar.signed_queue_url import ZaqarSignedQueueURL
from stoker.resources.openstack.zaqar.subscription import ZaqarSubscription
from stoker.sdk.exceptions import UpdateReplace, ValidationError
from stoker.sdk.testing import PluginHarness

QUEUE_NAMES = {"zaqar.queue": lambda value: isinstance(value, str) and 0 < len(value) <= 64}


def test_zaqar_types_and_constraints_are_registered_under_heat_names():
    mapping = resource_mapping()
    assert mapping["OS::Zaqar::Queue"] is ZaqarQueue
    assert mapping["OS::Zaqar::SignedQueueURL"] is ZaqarSignedQueueURL
    assert mapping["OS::Zaqar::Subscription"] is ZaqarSubscription
    assert mapping["OS::Zaqar::MistralTrigger"] is MistralTrigger
    assert {"zaqar.queue", "mistral.workflow"} <= set(constraint_mapping())


def test_zaqar_queue_constraint_takes_names_of_1_to_64_characters():
    plugin = ZaqarClientPlugin(name="zaqar")
    assert plugin.get_queue("q" * 64) == "q" * 64
    for wrong, message in ((123, "must be a string"), ("", "1-64"), ("q" * 65, "1-64")):
        with pytest.raises(ValidationError, match=message):
            plugin.get_queue(wrong)


def test_zaqar_queue_name_is_the_property_or_a_shortened_physical_name():
    named = PluginHarness(ZaqarQueue, {"name": "jobs"}, name="queue")
    assert named.resource.physical_resource_name() == "jobs"
    long_stack = PluginHarness(ZaqarQueue, {}, name="queue", stack_name="s" * 80)
    generated = long_stack.resource.physical_resource_name()
    assert (
        len(generated) == 64
        and generated.startswith("sss")
        and generated.rsplit("-", 1)[1].isalnum()
    )


def test_zaqar_queue_metadata_updates_in_place_and_name_replaces():
    queue = PluginHarness(ZaqarQueue, {"name": "jobs", "metadata": {"a": 1}}, name="queue")
    with pytest.raises(UpdateReplace):
        queue.update({"name": "other", "metadata": {"a": 1}})


def subscription(**properties) -> PluginHarness:
    return PluginHarness(ZaqarSubscription, properties, name="sub", constraints=QUEUE_NAMES)


def test_zaqar_subscription_subscriber_type_is_one_heat_knows():
    for good in (
        "http://h/x",
        "https://h/x",
        "mailto:a@b.c",
        "trust+http://h/x",
        "trust+https://h/x",
    ):
        subscription(queue_name="q", subscriber=good).validate()
    with pytest.raises(ValidationError, match="The subscriber type of must be one of") as raised:
        subscription(queue_name="q", subscriber="ftp://h/x").validate()
    assert raised.value.path == "resources.sub.properties.subscriber"


def test_zaqar_subscription_defaults_and_limits_are_heats():
    data = subscription(queue_name="q", subscriber="http://h/x").resource._subscription_data()
    assert data == {"subscriber": "http://h/x", "ttl": 220367260800, "options": {}}
    with pytest.raises(ValidationError):
        subscription(queue_name="q", subscriber="http://h/x", ttl=59).validate()
    with pytest.raises(UpdateReplace):
        subscription(queue_name="q", subscriber="http://h/x").update(
            {"queue_name": "r", "subscriber": "http://h/x"}
        )


def test_zaqar_mistral_trigger_passes_the_message_as_env_notification():
    trigger = PluginHarness(
        MistralTrigger,
        {"queue_name": "q", "workflow_id": "wf", "params": {"env": {"a": 1}}, "input": {"x": 2}},
        name="trigger",
        constraints={**QUEUE_NAMES, "mistral.workflow": lambda value: value == "wf"},
    )
    post_data = json.loads(trigger.resource._subscription_options()["post_data"])
    assert post_data == {
        "workflow_id": "wf",
        "params": {"env": {"a": 1, "notification": "$zaqar_message$"}},
        "input": {"x": 2},
    }
    live = trigger.resource.parse_live_resource_data(
        {}, {"queue_name": "q", "ttl": 60, "options": {"post_data": json.dumps(post_data)}}
    )
    assert live == {
        "queue_name": "q",
        "ttl": 60,
        "workflow_id": "wf",
        "params": {"env": {"a": 1}},
        "input": {"x": 2},
    }


def test_zaqar_signed_url_methods_are_heats_and_expiry_is_zaqars_format():
    with pytest.raises(ValidationError):
        PluginHarness(
            ZaqarSignedQueueURL, {"queue": "q", "methods": ["HEAD"]}, name="signed"
        ).validate()
    expiry = _expiry(60)
    assert len(expiry) == 19 and expiry[10] == "T" and not expiry.endswith("Z")


def test_zaqar_signed_url_has_no_live_object_to_import_or_check():
    # The signature is the stack's own: Zaqar keeps nothing of it (its queue and
    # subscriptions, which it does keep, are read).
    assert not ZaqarSignedQueueURL.reads_live_state()
    assert ZaqarQueue.reads_live_state() and ZaqarSubscription.reads_live_state() and MistralTrigger.reads_live_state()
