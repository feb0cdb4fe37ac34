"""The ``aodh`` client plugin: Aodh's v2 alarms API through openstacksdk's ``alarm`` proxy
(service type ``alarm``, which the catalog may also call ``alarming``, Heat's name).

openstacksdk's alarm proxy models few of Aodh's rule types, so alarms go through the same
proxy as a keystoneauth adapter (its endpoint discovery, its token) on Aodh's REST paths,
as aodhclient sends them: create is a POST of the whole alarm, update a GET then a PUT of
the alarm with the changes merged in (each ``*_rule`` merged key by key, as aodhclient
merges them), delete a DELETE. Aodh has no microversions.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin, http_status
from stoker.sdk.exceptions import ClientPluginError

__all__ = ["AodhClientPlugin", "AodhRequestError", "client_mapping", "constraint_mapping"]

# Fields of an alarm Aodh sets itself: never sent back in an update.
READ_ONLY_FIELDS = ("timestamp", "state_timestamp", "state_reason")


class AodhRequestError(ClientPluginError):
    """Aodh refused a request; the message carries its status and answer."""

    def __init__(self, method: str, path: str, status: int, answer: str, hint: str | None = None):
        super().__init__(f"Aodh refused {method} {path}: {status} {answer}", hint=hint)
        self.method, self.request_path, self.answer = method, path, answer
        self.status_code = status


class AodhClientPlugin(OpenStackClientPlugin):
    """Aodh through openstacksdk's ``connection.alarm`` adapter."""

    name = "aodh"
    service_type = "alarm"
    proxy_name = "alarm"

    def root(self) -> str:
        """Aodh's unversioned endpoint, as the catalog has it."""
        endpoint = str(self.client().get_endpoint()).rstrip("/")
        return endpoint.removesuffix("/v2")

    def request(self, method: str, path: str, json: Any = None) -> Any:
        """One request on ``<root>/v2<path>``; the decoded answer (None when empty). A
        refusal raises AodhRequestError with the HTTP status (``is_not_found`` knows 404)."""
        response = self.client().request(
            f"{self.root()}/v2{path}", method.upper(), json=json, raise_exc=False
        )
        if response.status_code >= 400:
            raise AodhRequestError(method.upper(), path, response.status_code, response.text[:500])
        return response.json() if response.content else None

    @staticmethod
    def alarm_path(alarm_id: str) -> str:
        return f"/alarms/{quote(str(alarm_id), safe='')}"

    # -- alarms ---------------------------------------------------------------------------

    def create_alarm(self, alarm: dict[str, Any]) -> dict[str, Any]:
        return dict(self.request("POST", "/alarms", json=_without_none(alarm)) or {})

    def get_alarm(self, alarm_id: str) -> dict[str, Any]:
        return dict(self.request("GET", self.alarm_path(alarm_id)) or {})

    def update_alarm(self, alarm_id: str, changes: dict[str, Any]) -> dict[str, Any]:
        """aodhclient's update: the alarm read, ``changes`` merged in (a ``*_rule`` key by
        key, a composite rule whole), and the whole alarm put back."""
        alarm = self.get_alarm(alarm_id)
        for key, value in changes.items():
            if key.endswith("_rule") and key != "composite_rule" and isinstance(value, dict):
                merged = dict(alarm.get(key) or {})
                merged.update(value)
                alarm[key] = merged
            else:
                alarm[key] = value
        for key in READ_ONLY_FIELDS:
            alarm.pop(key, None)
        return dict(self.request("PUT", self.alarm_path(alarm_id), json=_without_none(alarm)) or {})

    def delete_alarm(self, alarm_id: str) -> None:
        """Delete the alarm; one already gone is deleted. The DELETE, safe to send again,
        is sent again when no answer came, or when Aodh's answer says its own call behind
        it got none (``is_transient``)."""
        try:
            self.read(lambda: self.request("DELETE", self.alarm_path(alarm_id)))
        except AodhRequestError as error:
            self.ignore_not_found(error)

    def alarms_named(self, name: str) -> list[dict[str, Any]]:
        """The project's alarms called ``name`` (Aodh's query filter)."""
        query = urlencode({"q.field": "name", "q.op": "eq", "q.value": name})
        return list(self.request("GET", f"/alarms?{query}") or [])

    def set_enabled(self, alarm_id: str, enabled: bool) -> None:
        self.update_alarm(alarm_id, {"enabled": enabled})

    # -- errors ---------------------------------------------------------------------------

    def is_not_found(self, error: BaseException) -> bool:
        return super().is_not_found(error) or http_status(error) == 404

    def is_transient(self, error: BaseException) -> bool:
        """Also Aodh's 500 when a request it made got no answer: deleting an alarm with a
        ``trust+`` action deletes its trust in Keystone first, and a Keystone that dropped
        that request (the test cloud's, on SQLite, under concurrent writes) makes Aodh
        answer "Unable to establish connection to .../OS-TRUST/trusts/...", the alarm kept."""
        if isinstance(error, AodhRequestError) and error.status_code == 500:
            return "Unable to establish connection" in error.answer
        return super().is_transient(error)


def _without_none(alarm: dict[str, Any]) -> dict[str, Any]:
    """The alarm without unset fields: Aodh's API types refuse null for most of them."""
    return {key: value for key, value in alarm.items() if value is not None}


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"aodh": AodhClientPlugin}


def constraint_mapping() -> dict[str, Any]:
    # Heat's aodh plugin has no custom constraints; the alarms' cron_expression and
    # timezone are Heat's common ones (resources/openstack/schedules.py).
    return {}
