"""OS::Heat::SwiftSignal's reading of the signals PUT to its handle, on the engine's fake
clock, with Swift played by ``MemorySwift`` (the swift client plugin's calls kept in
memory, versioning included): the count, Heat's defaults for each signal, a repeated id
replacing the earlier signal, a FAILURE's reasons, the timeout's "<n> of <count>
received", a body that is not JSON, and a handle that is not this stack's. The real Swift
is in tests/cloud/test_swift_signals.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stoker.resources.openstack.swift.client_plugin import IN_PROGRESS, SwiftClientPlugin
from stoker.resources.openstack.swift.signal import SwiftSignal
from stoker.sdk.exceptions import StokerError
from stoker.sdk.testing import PluginHarness

PROJECT = "0123456789abcdef0123456789abcdef"
ACCOUNT = f"http://127.0.0.1:8080/v1/AUTH_{PROJECT}"


class MemorySwift(SwiftClientPlugin):
    """One account's containers in memory; a versioned container keeps each overwritten
    object as Swift's legacy versioning names it."""

    def __init__(self) -> None:
        super().__init__()
        self.containers: dict[str, dict[str, bytes]] = {}
        self.versioned: set[str] = set()

    @property
    def project_id(self) -> str:
        return PROJECT

    @property
    def url(self) -> str:
        return ACCOUNT

    def put_container(self, container: str, headers: Any = None) -> None:
        self.containers.setdefault(container, {})
        if headers and "x-versions-location" in headers:
            self.versioned.add(container)

    def put_object(self, container: str, name: str, contents: str | bytes) -> None:
        objects = self.containers[container]
        if container in self.versioned and name in objects:
            objects[f"{len(name):03x}{name}/{len(objects):010d}"] = objects[name]
        objects[name] = contents.encode() if isinstance(contents, str) else contents

    def get_container(self, container: str) -> tuple[dict[str, str], list[dict[str, Any]]]:
        return {}, [{"name": name} for name in sorted(self.containers[container])]

    def get_object(self, container: str, name: str) -> tuple[dict[str, str], bytes]:
        return {}, self.containers[container][name]


def harness(swift: MemorySwift, count: int = 1, handle: str | None = None) -> PluginHarness:
    """A SwiftSignal whose handle is a temp URL of its stack's container (or ``handle``)."""
    made = PluginHarness(
        SwiftSignal, {"handle": "-", "timeout": 60}, name="wait", clients={"swift": swift}
    )
    stack_id = made.stack.id
    swift.put_container(stack_id, {"x-versions-location": stack_id})
    swift.put_object(stack_id, "handle-object", IN_PROGRESS)
    url = (
        handle or f"{ACCOUNT}/{stack_id}/handle-object?temp_url_sig=abc&temp_url_expires=2147483587"
    )
    # The handle names the stack's id, known once the harness made the stack.
    made.resource = made._build({"handle": url, "timeout": 60, "count": count})
    return made


def signal(swift: MemorySwift, made: PluginHarness, body: Any) -> None:
    """What curl does: a PUT of the body to the handle's temp URL."""
    swift.put_object(
        made.stack.id, "handle-object", body if isinstance(body, str) else json.dumps(body)
    )


def test_swift_signal_completes_on_count_with_heat_defaults_and_data():
    swift = MemorySwift()
    made = harness(swift, count=2)
    signal(swift, made, {"status": "SUCCESS", "data": "one", "id": "a"})
    signal(swift, made, "")
    made.create()
    signals = made.resource.get_signals()
    assert [s["reason"] for s in signals] == ["Signal a received", "Signal 2 received"]
    assert [s["status"] for s in signals] == ["SUCCESS", "SUCCESS"]
    assert json.loads(made.attribute("data")) == {"a": "one", "2": None}


def test_swift_signal_repeated_id_replaces_the_earlier_signal():
    swift = MemorySwift()
    made = harness(swift, count=2)
    signal(swift, made, {"id": "same", "data": "first"})
    signal(swift, made, {"id": "same", "data": "second"})
    with pytest.raises(StokerError, match="1 of 2 received - Signal same received"):
        made.create()
    assert json.loads(made.attribute("data")) == {"same": "second"}


def test_swift_signal_failure_gives_every_failure_reason():
    swift = MemorySwift()
    made = harness(swift, count=3)
    signal(swift, made, {"status": "FAILURE", "reason": "disk full"})
    signal(swift, made, {"status": "SUCCESS"})
    signal(swift, made, {"status": "FAILURE", "reason": "no network"})
    with pytest.raises(StokerError) as raised:
        made.create()
    assert type(raised.value).__name__ == "SwiftSignalFailure"
    assert str(raised.value) == "disk full;no network"


def test_swift_signal_times_out_on_the_engine_clock():
    swift = MemorySwift()
    made = harness(swift)
    start = made.clock.now()
    with pytest.raises(StokerError) as raised:
        made.create()
    assert type(raised.value).__name__ == "SwiftSignalTimeout"
    assert str(raised.value) == "0 of 1 received"
    assert 60 <= made.clock.now() - start < 70


def test_swift_signal_refuses_a_body_that_is_not_json():
    swift = MemorySwift()
    made = harness(swift)
    signal(swift, made, "{not json")
    with pytest.raises(StokerError, match="Failed to parse JSON data: {not json"):
        made.create()


@pytest.mark.parametrize(
    ("handle", "part"),
    [
        (f"{ACCOUNT}/another-stack/handle-object?temp_url_sig=abc", "container name"),
        (
            "http://127.0.0.1:8080/v1/AUTH_someone/stack/handle-object?temp_url_sig=abc",
            "Swift TempURL path",
        ),
    ],
)
def test_swift_signal_refuses_a_handle_of_another_stack_or_project(handle, part):
    swift = MemorySwift()
    made = harness(swift, handle=handle)
    with pytest.raises(ValueError) as raised:
        made.create()
    assert f"is not a valid SwiftSignalHandle.  The {part} is invalid" in str(raised.value)
    assert "temp_url_sig" not in str(raised.value)
