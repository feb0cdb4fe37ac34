"""Wait conditions: OS::Heat::WaitCondition and AWS::CloudFormation::WaitCondition.

A wait condition's create (or update) starts a wait and returns a token (its handle's
name, when it started, how long it may take); ``check_*_complete`` reads the handle's
signals, which the engine keeps as rows, so a wait resumed after an engine restart sees
the signals that arrived meanwhile. Time is the engine's clock (``_hooks.now``).

Must not: sleep, or name a handle's URL (it holds a secret) in a message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stoker.resources.heat.wait_condition_handle import (
    BaseWaitConditionHandle,
    WaitConditionHandle,
    handle_class_of,
    kept_signals,
)
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import StokerError
from stoker.sdk.resource import Resource
from stoker.sdk.signals import SignalSource


# Named as Heat names them: the failure reason reads "WaitConditionFailure: ...".
class WaitConditionFailure(StokerError):  # noqa: N818
    """A FAILURE signal arrived (the message: the reasons of every FAILURE, ';'-joined)."""


class WaitConditionTimeout(StokerError):  # noqa: N818
    """Not enough SUCCESS signals arrived in time ("<n> of <count> received")."""


def _shown(reference: Any) -> str:
    """A handle reference as a message may show it: a URL's query holds its secret."""
    text = str(reference)
    return text.split("?", 1)[0] + ("?..." if "?" in text else "")


class HeatWaitCondition(Resource):
    """Resource for handling signals received by WaitConditionHandle.

    Resource takes WaitConditionHandle and starts to create. Resource is in
    CREATE_IN_PROGRESS status until WaitConditionHandle doesn't receive sufficient number
    of successful signals (this number can be specified with count property) and
    successfully creates after that, or fails due to timeout. A FAILURE signal fails it
    at once. Signals sent before the wait began count too; an update waits again (for
    ``count`` signals in all).
    """

    support_status = support.SupportStatus(version="2014.2")

    PROPERTIES = (HANDLE, TIMEOUT, COUNT) = ("handle", "timeout", "count")

    ATTRIBUTES = (DATA,) = ("data",)

    properties_schema = {
        HANDLE: properties.Schema(
            properties.Schema.STRING,
            "A reference to the wait condition handle used to signal this wait condition.",
            required=True,
        ),
        TIMEOUT: properties.Schema(
            properties.Schema.NUMBER,
            "The number of seconds to wait for the correct number of signals to arrive.",
            required=True,
            constraints=[constraints.Range(1, 43200)],
        ),
        COUNT: properties.Schema(
            properties.Schema.INTEGER,
            "The number of success signals that must be received before the stack creation process continues.",
            constraints=[constraints.Range(min=1)],
            default=1,
            update_allowed=True,
        ),
    }

    attributes_schema = {
        DATA: attributes.Schema(
            "JSON string containing data associated with wait condition signals sent to the handle.",
            cache_mode=attributes.Schema.CACHE_NONE,
            type=attributes.Schema.STRING,
        ),
    }

    # The handle types this wait condition accepts.
    handle_class: type[BaseWaitConditionHandle] = BaseWaitConditionHandle

    def _invalid_handle(self, source: SignalSource | None) -> Exception:
        return ValueError(f"{source.name if source else _shown(self.properties[self.HANDLE])} is not a valid wait condition handle.")

    def _handle(self) -> SignalSource:
        source = kept_signals(self).find(self.properties[self.HANDLE])
        if source is None or not issubclass(source.plugin_class, self.handle_class):
            raise self._invalid_handle(source)
        return source

    def _start(self) -> dict[str, Any]:
        source = self._handle()
        return {
            "handle": source.name,
            "started_at": self._hooks.now(),
            "timeout": float(self.properties[self.TIMEOUT]),
            "count": int(self.properties[self.COUNT]),
        }

    def _wait(self, token: Mapping[str, Any]) -> bool:
        source = kept_signals(self).source(token["handle"])
        handle = handle_class_of(source)
        if source is None or handle is None or not issubclass(handle, self.handle_class):
            raise self._invalid_handle(source)
        _, reason, status, _ = handle.METADATA_KEYS
        count = token["count"]
        if self._hooks.now() - token["started_at"] > token["timeout"]:
            succeeded = [entry[reason] for entry in handle.metadata(source.signals.received()).values() if entry[status] == handle.STATUS_SUCCESS]
            text = f"{len(succeeded)} of {count} received"
            raise WaitConditionTimeout(f"{text} - {';'.join(succeeded)}" if succeeded else text)
        handle.service_signals(source)
        received = source.signals.received()
        entries = handle.metadata(received).values()
        if any(entry[status] != handle.STATUS_SUCCESS for entry in entries):
            raise WaitConditionFailure(";".join(str(entry[reason]) for entry in entries if entry[status] == handle.STATUS_FAILURE))
        if len(entries) >= count:
            source.signals.mark_handled(received)
            return True
        return False

    def handle_create(self) -> dict[str, Any]:
        token = self._start()
        self.resource_id_set(self.physical_resource_name())
        return token

    def check_create_complete(self, token: Mapping[str, Any]) -> bool:
        return self._wait(token)

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> dict[str, Any]:
        if prop_diff:
            self.properties = json_snippet.properties(self.properties_schema, self.context)
        return self._start()

    def check_update_complete(self, token: Mapping[str, Any]) -> bool:
        return self._wait(token)

    def handle_delete(self) -> None:
        # As Heat: the handle's signals go with the wait condition.
        source = kept_signals(self).find(self.properties[self.HANDLE])
        if source is not None and issubclass(source.plugin_class, BaseWaitConditionHandle):
            source.signals.clear()

    def _resolve_attribute(self, name: str) -> Any:
        if name != self.DATA:
            return None
        source = kept_signals(self).find(self.properties[self.HANDLE])
        handle = handle_class_of(source)
        if source is None or handle is None:
            return ""
        data = handle.METADATA_KEYS[0]
        return json.dumps({key: entry.get(data) for key, entry in handle.metadata(source.signals.received()).items()})


class WaitCondition(HeatWaitCondition):
    """AWS::CloudFormation::WaitCondition: waits for ``Count`` SUCCESS signals to its
    AWS::CloudFormation::WaitConditionHandle (``Handle``: the handle's URL), for at most
    ``Timeout`` seconds; a FAILURE signal fails it at once. ``Data``: the signals' data
    by UniqueId, as JSON.
    """

    support_status = support.SupportStatus(version="2014.1")

    PROPERTIES = (HANDLE, TIMEOUT, COUNT) = ("Handle", "Timeout", "Count")

    ATTRIBUTES = (DATA,) = ("Data",)

    properties_schema = {
        HANDLE: properties.Schema(
            properties.Schema.STRING,
            "A reference to the wait condition handle used to signal this wait condition.",
            required=True,
        ),
        TIMEOUT: properties.Schema(
            properties.Schema.INTEGER,
            "The number of seconds to wait for the correct number of signals to arrive.",
            required=True,
            constraints=[constraints.Range(1, 43200)],
        ),
        COUNT: properties.Schema(
            properties.Schema.INTEGER,
            "The number of success signals that must be received before the stack creation process continues.",
            constraints=[constraints.Range(min=1)],
            default=1,
            update_allowed=True,
        ),
    }

    attributes_schema = {
        DATA: attributes.Schema(
            "JSON string containing data associated with wait condition signals sent to the handle.",
            cache_mode=attributes.Schema.CACHE_NONE,
            type=attributes.Schema.STRING,
        ),
    }

    handle_class = WaitConditionHandle

    def _invalid_handle(self, source: SignalSource | None) -> Exception:
        return ValueError(f"WaitCondition invalid Handle {source.name if source else _shown(self.properties[self.HANDLE])}")


def resource_mapping() -> dict[str, type[Resource]]:
    return {
        "OS::Heat::WaitCondition": HeatWaitCondition,
        "AWS::CloudFormation::WaitCondition": WaitCondition,
    }
