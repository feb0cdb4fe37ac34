"""Custom constraints without a cloud: the per-context lookup cache, and the address and
DNS name constraints Heat registers."""

from __future__ import annotations

import gc
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from stoker.resources.openstack import addresses, constraint_mapping
from stoker.resources.openstack.constraints import LookupCache


class _Context:
    """One validation (or one stack action)."""


def test_lookup_cache_asks_once_per_context_and_value():
    cache, asked = LookupCache(), []

    def ask(value):
        def lookup():
            asked.append(value)
            return None if value == "private" else f"The network ({value}) could not be found."

        return lookup

    validation = _Context()
    answers = [cache.answer(validation, ("neutron.network", value), ask(value)) for value in ["private"] * 500 + ["nowhere"] * 3]

    assert asked == ["private", "nowhere"]
    assert answers[0] is None and answers[-1] == "The network (nowhere) could not be found."


def test_lookup_cache_threads_asking_one_value_at_once_ask_once():
    cache, asked, release = LookupCache(), [], threading.Event()
    action = _Context()

    def slow_lookup():
        asked.append("image")
        release.wait(5)
        return "image-id"

    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(cache.answer, action, ("glance", "find", "image", "tiny"), slow_lookup) for _ in range(8)]
        time.sleep(0.2)  # every thread is waiting on the first one's answer
        release.set()
        answers = [future.result(timeout=10) for future in futures]

    assert answers == ["image-id"] * 8
    assert asked == ["image"]


def test_lookup_cache_failed_ask_is_asked_again_by_the_next_thread():
    cache, calls = LookupCache(), []
    action = _Context()

    def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("the cloud did not answer")
        return "net-id"

    with pytest.raises(ConnectionError):
        cache.answer(action, ("neutron", "network", "private"), flaky)

    assert cache.answer(action, ("neutron", "network", "private"), flaky) == "net-id"
    assert cache.answer(action, ("neutron", "network", "private"), flaky) == "net-id"
    assert len(calls) == 2


def test_lookup_cache_forgets_a_finished_context():
    cache, asked = LookupCache(), []
    first = _Context()
    cache.answer(first, ("nova.flavor", "m1.small"), lambda: asked.append(1))
    del first
    gc.collect()

    cache.answer(_Context(), ("nova.flavor", "m1.small"), lambda: asked.append(2))

    assert asked == [1, 2]
    assert len(cache._by_context) == 0


class _Validation:
    """A create's validation of stack ``stack-1``."""

    validates_stack = "stack-1"


class _Action:
    """A stack action's context: its ``id`` is the stack's."""

    def __init__(self, stack_id: str):
        self.id = stack_id


def test_lookup_cache_hands_a_validations_answers_to_its_stacks_action_only(monkeypatch):
    from stoker.resources.openstack import constraints

    cache, asked = LookupCache(), []

    def lookup(value):
        def ask():
            asked.append(value)
            return f"{value}-id"

        return ask

    key = ("nova", "find", "flavor", "m1.tiny")
    assert cache.answer(_Validation(), key, lookup("validation")) == "validation-id"
    # The create that follows asks nothing; another stack's action asks for itself.
    create = _Action("stack-1")
    assert cache.answer(create, key, lookup("create")) == "validation-id"
    assert cache.answer(_Action("stack-2"), key, lookup("other")) == "other-id"
    assert asked == ["validation", "other"]
    # An action's own answers are not handed on to a later action of the stack.
    own = ("glance", "find", "image", "tiny")
    assert cache.answer(create, own, lookup("create")) == "create-id"
    assert cache.answer(_Action("stack-1"), own, lookup("later")) == "later-id"
    # A minute later the cloud is asked again.
    later = time.monotonic() + constraints.HAND_OVER_S + 1
    monkeypatch.setattr(constraints.time, "monotonic", lambda: later)
    assert cache.answer(_Action("stack-1"), key, lookup("much later")) == "much later-id"


def test_constraint_mapping_has_heat_names():
    assert {
        "neutron.network", "neutron.subnet", "neutron.port", "neutron.router", "neutron.security_group",
        "nova.flavor", "nova.keypair", "nova.server", "glance.image", "cinder.volume", "cinder.vtype",
        "ip_addr", "net_cidr", "mac_addr",
    } <= set(constraint_mapping())


@pytest.mark.parametrize(
    ("name", "good", "bad"),
    [
        ("ip_addr", ["10.0.0.1", "fe80::1"], ["10.0.0.256", "10.0.0.0/24", ""]),
        ("net_cidr", ["10.0.0.0/24", "2001:db8::/64"], ["10.0.0.1", "10.0.0.0/33"]),
        ("ip_or_cidr", ["10.0.0.1", "10.0.0.0/24"], ["ten"]),
        ("mac_addr", ["fa:16:3e:00:00:01"], ["fa:16:3e:00:00", "zz:16:3e:00:00:01"]),
        ("dns_name", ["web.example.org", "web.example.org."], ["-web", "a..b"]),
        ("rel_dns_name", ["web"], ["web."]),
    ],
)
def test_address_constraint_accepts_and_refuses(name, good, bad):
    constraint = addresses.constraint_mapping()[name]()

    assert all(constraint.validate(value) for value in good)
    assert not any(constraint.validate(value) for value in bad)
