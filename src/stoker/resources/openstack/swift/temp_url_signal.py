"""TEMP_URL_SIGNAL over Swift, for resources that are signalled (software deployments):
as Heat does it, the signal is an object PUT to a Swift temp URL, which the resource
reads while it waits.

Owns: whether the cloud offers Swift (its catalog has ``object-store``), the resource's
object (named ``physical_resource_name()``, in the container named by the stack's id)
and its temp URL (kept redacted in the resource's data), reading a new signal from the
object (each PUT is told apart by Swift's ``x-timestamp``; the one already taken is
remembered, so a later action does not take an earlier action's signal again), and
deleting the object, then the container once it is empty.

Must not: put the temp URL (its query is a signature) into a message.
"""

from __future__ import annotations

import json
from typing import Any

from stoker.sdk.exceptions import ClientPluginError, StokerError
from stoker.sdk.resource import Resource

__all__ = ["forget", "new_signal", "signal_url", "swift_offered"]

# Keys of the resource's data.
SWIFT_SIGNAL_URL, SWIFT_OBJECT, SWIFT_TAKEN = (
    "swift_signal_url",
    "swift_signal_object_name",
    "swift_signal_taken",
)


def swift_offered(resource: Resource) -> bool:
    """Whether the resource's cloud has Swift: False with no cloud configured at all, or
    a catalog without ``object-store``."""
    try:
        return bool(resource.client_plugin("swift").connection.has_service("object-store"))
    except ClientPluginError:
        return False


def signal_url(resource: Resource) -> str:
    """The resource's temp URL (PUT), made once: an empty object in the stack's container."""
    url = resource.data().get(SWIFT_SIGNAL_URL)
    if url:
        return str(url)
    plugin = resource.client_plugin("swift")
    container, name = str(resource.stack.id), resource.physical_resource_name()
    # Recorded first: a crash from here on leaves a name the delete cleans up after.
    resource.data_set(SWIFT_OBJECT, name)
    plugin.put_container(container)
    url = plugin.get_temp_url(container, name)
    plugin.put_object(container, name, "")
    resource.data_set(SWIFT_SIGNAL_URL, url, redact=True)
    return url


def new_signal(resource: Resource) -> Any:
    """The details of a signal PUT since the last one taken (parsed JSON), or None."""
    name = resource.data().get(SWIFT_OBJECT)
    if not name:
        return None
    plugin = resource.client_plugin("swift")
    container = str(resource.stack.id)
    try:
        headers, body = plugin.read(lambda: plugin.get_object(container, name))
    except Exception as error:  # noqa: BLE001 - openstacksdk's types
        plugin.ignore_not_found(error)  # not there yet, or deleted by the user
        return None
    stamp = headers.get("x-timestamp") or headers.get("last-modified")
    if not body or stamp == resource.data().get(SWIFT_TAKEN):
        return None
    text = body.decode() if isinstance(body, bytes) else str(body)
    try:
        details = json.loads(text)
    except ValueError:
        raise StokerError(f"Failed to parse JSON data: {text}") from None
    resource.data_set(SWIFT_TAKEN, stamp)
    return details


def forget(resource: Resource) -> None:
    """Delete the object (every version of it) and the container once empty."""
    name = resource.data().get(SWIFT_OBJECT)
    if not name:
        return
    plugin = resource.client_plugin("swift")
    container = str(resource.stack.id)
    with plugin.ignore_not_found:
        for entry in plugin.get_container(container)[1]:
            if name in entry["name"]:
                with plugin.ignore_not_found:
                    plugin.delete_object(container, name)
        if int(plugin.head_container(container).get("x-container-object-count", "0")) == 0:
            with plugin.ignore_conflict_and_not_found:
                plugin.delete_container(container)
    for key in (SWIFT_SIGNAL_URL, SWIFT_OBJECT, SWIFT_TAKEN):
        resource.data_delete(key)
