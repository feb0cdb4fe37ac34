"""OS::Heat::SwiftSignal, as Heat has it: waits for signals PUT to an
OS::Heat::SwiftSignalHandle's temp URL.

Owns: checking the handle is a temp URL of this project and this stack's container,
the wait (its token: when it started and how long it may take, on the engine's clock,
so a wait resumed after an engine restart goes on where it was), reading the signals
from Swift at each poll (every version of the handle's object; a body that is not JSON
fails the wait), and the ``data`` attribute. A FAILURE fails it at once with the
signals' reasons; too few SUCCESSes in time fail it with Heat's "<n> of <count>
received".

Must not: sleep, or put the handle's URL (its query is a signature) into a message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib import parse

from stoker.resources.openstack.swift.client_plugin import IN_PROGRESS
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import StokerError
from stoker.sdk.resource import Resource

__all__ = ["SwiftSignal", "resource_mapping"]


# Named as Heat names them: the failure reason reads "SwiftSignalFailure: ...".
class SwiftSignalFailure(StokerError):  # noqa: N818
    """A FAILURE signal arrived (the message: the reasons of every FAILURE, ';'-joined)."""


class SwiftSignalTimeout(StokerError):  # noqa: N818
    """Not enough SUCCESS signals arrived in time ("<n> of <count> received")."""


class SwiftSignal(Resource):
    """Resource for handling signals received by SwiftSignalHandle.

    This resource handles signals received by SwiftSignalHandle and is same as
    WaitCondition resource.
    """

    support_status = support.SupportStatus(version="2014.2")
    default_client_name = "swift"

    PROPERTIES = (HANDLE, TIMEOUT, COUNT) = ("handle", "timeout", "count")
    ATTRIBUTES = (DATA,) = ("data",)
    WAIT_STATUSES = (STATUS_FAILURE, STATUS_SUCCESS) = ("FAILURE", "SUCCESS")
    METADATA_KEYS = (DATA_KEY, REASON, STATUS, UNIQUE_ID) = ("data", "reason", "status", "id")

    properties_schema = {
        HANDLE: properties.Schema(
            properties.Schema.STRING,
            "URL of TempURL where resource will signal completion and optionally upload data.",
            required=True,
        ),
        TIMEOUT: properties.Schema(
            properties.Schema.NUMBER,
            "The maximum number of seconds to wait for the resource to signal completion. Once "
            "the timeout is reached, creation of the signal resource will fail.",
            required=True,
            constraints=[constraints.Range(1, 43200)],
        ),
        COUNT: properties.Schema(
            properties.Schema.INTEGER,
            "The number of success signals that must be received before the stack creation process continues.",
            default=1,
            constraints=[constraints.Range(1, 1000)],
        ),
    }

    attributes_schema = {
        DATA: attributes.Schema(
            "JSON data that was uploaded via the SwiftSignalHandle.", type=attributes.Schema.STRING
        ),
    }

    # -- the handle's URL -----------------------------------------------------------------

    def _path(self) -> str:
        return parse.urlparse(self.properties[self.HANDLE]).path

    def _object_name(self) -> str:
        return self._path().split("/")[4]

    def _validate_handle_url(self) -> None:
        path = self._path()

        def invalid(part: str) -> ValueError:
            return ValueError(f'"{path}" is not a valid SwiftSignalHandle.  The {part} is invalid')

        if not self.client_plugin().is_valid_temp_url_path(path):
            raise invalid("Swift TempURL path")
        if path.split("/")[3] != str(self.stack.id):
            raise invalid("container name")

    # -- the signals ------------------------------------------------------------------------

    def get_signals(self) -> list[dict[str, Any]]:
        """Every signal PUT to the handle (each version of its object), oldest first, with
        Heat's defaults: a signal repeating an earlier one's ``id`` replaces it."""
        plugin = self.client_plugin()
        container = str(self.stack.id)
        try:
            listed = plugin.read(lambda: plugin.get_container(container))[1]
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            plugin.ignore_not_found(error)
            return []
        # Handles of one stack share the container: only this handle's object and versions.
        name = self._object_name()
        bodies: list[dict[str, Any]] = []
        for entry in listed:
            if name not in entry["name"]:
                continue
            try:
                body = plugin.read(lambda entry=entry: plugin.get_object(container, entry["name"]))[
                    1
                ]
            except Exception as error:  # noqa: BLE001 - openstacksdk's types
                plugin.ignore_not_found(error)
                continue
            text = body.decode() if isinstance(body, bytes) else str(body)
            if text == IN_PROGRESS:
                continue
            if text == "":
                bodies.append({})
                continue
            try:
                parsed = json.loads(text)
            except ValueError:
                raise StokerError(f"Failed to parse JSON data: {text}") from None
            bodies.append(parsed if isinstance(parsed, dict) else {self.DATA_KEY: parsed})
        signals: list[dict[str, Any]] = []
        for number, signal in enumerate(bodies, start=1):
            if self.UNIQUE_ID in signal:
                signals = [s for s in signals if s.get(self.UNIQUE_ID) != signal[self.UNIQUE_ID]]
            signal.setdefault(self.DATA_KEY, None)
            unique_id = signal.setdefault(self.UNIQUE_ID, number)
            signal.setdefault(self.REASON, f"Signal {unique_id} received")
            signal.setdefault(self.STATUS, self.STATUS_SUCCESS)
            signals.append(signal)
        return signals

    def get_data(self) -> dict[str, Any] | None:
        signals = self.get_signals()
        if not signals:
            return None
        return {signal[self.UNIQUE_ID]: signal[self.DATA_KEY] for signal in signals}

    # -- lifecycle ----------------------------------------------------------------------------

    def handle_create(self) -> dict[str, Any]:
        self._validate_handle_url()
        self.resource_id_set(self.physical_resource_name())
        return {"started_at": self._hooks.now(), "timeout": float(self.properties[self.TIMEOUT])}

    def check_create_complete(self, token: Mapping[str, Any]) -> bool:
        signals = (
            self.get_signals()
            if self._hooks.now() - token["started_at"] <= token["timeout"]
            else None
        )
        if signals is None:
            succeeded = [
                str(s[self.REASON])
                for s in self.get_signals()
                if s[self.STATUS] == self.STATUS_SUCCESS
            ]
            text = f"{len(succeeded)} of {self.properties[self.COUNT]} received"
            raise SwiftSignalTimeout(f"{text} - {';'.join(succeeded)}" if succeeded else text)
        for signal in signals:
            if signal[self.STATUS] == self.STATUS_FAILURE:
                raise SwiftSignalFailure(
                    ";".join(
                        str(s[self.REASON])
                        for s in signals
                        if s[self.STATUS] == self.STATUS_FAILURE
                    )
                )
            if signal[self.STATUS] != self.STATUS_SUCCESS:
                raise StokerError(f"Unknown status: {signal[self.STATUS]}")
        return bool(signals) and len(signals) >= self.properties[self.COUNT]

    def _resolve_attribute(self, name: str) -> Any:
        if name == self.DATA:
            return json.dumps(self.get_data())
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::SwiftSignal": SwiftSignal}
