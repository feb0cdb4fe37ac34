"""OS::Heat::TestResource."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import attributes, properties, support
from stoker.sdk.exceptions import UpdateReplace
from stoker.sdk.resource import Resource


class TestResource(Resource):
    """A resource which stores the string value that was provided.

    This resource is to be used only for testing. It has control knobs such as
    'update_replace', 'fail', 'wait_secs'. Waits are measured on the engine's clock, so
    a test with a fake clock does not sleep.
    """

    __test__ = False  # not a pytest test class
    support_status = support.SupportStatus(version="5.0.0")

    PROPERTIES = (VALUE, UPDATE_REPLACE, FAIL, CLIENT_NAME, ENTITY_NAME, WAIT_SECS, ACTION_WAIT_SECS) = (
        "value",
        "update_replace",
        "fail",
        "client_name",
        "entity_name",
        "wait_secs",
        "action_wait_secs",
    )

    properties_schema = {
        VALUE: properties.Schema(properties.Schema.STRING, "The input string to be stored.", default="test_string", update_allowed=True),
        FAIL: properties.Schema(
            properties.Schema.BOOLEAN,
            "Value which can be set to fail the resource operation to test failure scenarios.",
            update_allowed=True,
            default=False,
        ),
        UPDATE_REPLACE: properties.Schema(
            properties.Schema.BOOLEAN,
            "Value which can be set to trigger update replace for the particular resource.",
            update_allowed=True,
            default=False,
        ),
        WAIT_SECS: properties.Schema(
            properties.Schema.NUMBER, "Seconds to wait after an action (-1 is infinite).", update_allowed=True, default=0
        ),
        ACTION_WAIT_SECS: properties.Schema(
            properties.Schema.MAP,
            "Options for simulating waiting.",
            update_allowed=True,
            schema={
                action: properties.Schema(
                    properties.Schema.NUMBER,
                    f"Seconds to wait after a {action}. Defaults to the global wait_secs.",
                    update_allowed=True,
                )
                for action in ("create", "update", "delete", "suspend", "resume")
            },
        ),
        CLIENT_NAME: properties.Schema(properties.Schema.STRING, "Client to poll.", default="", update_allowed=True),
        ENTITY_NAME: properties.Schema(properties.Schema.STRING, "Client entity to poll.", default="", update_allowed=True),
    }

    attributes_schema = {
        "output": attributes.Schema(
            "The string that was stored. This value is also available by referencing the resource.",
            cache_mode=attributes.Schema.CACHE_NONE,
        ),
    }

    def _wait_secs(self, action: str) -> float:
        waits = self.properties[self.ACTION_WAIT_SECS] or {}
        secs = waits.get(action)
        return self.properties[self.WAIT_SECS] if secs is None else secs

    def _token(self, action: str) -> dict[str, Any]:
        # A plain dict so the engine can persist it and resume after a restart.
        return {"started_at": self._hooks.now(), "wait_secs": self._wait_secs(action), "action": action}

    def _done(self, token: Mapping[str, Any]) -> bool:
        wait = token["wait_secs"]
        if wait < 0 or self._hooks.now() - token["started_at"] < wait:
            return False
        if self.properties[self.FAIL] and token["action"] != "delete":
            raise ValueError(f"Test Resource failed {self.name}")
        return True

    def handle_create(self) -> dict[str, Any]:
        if not self.properties[self.FAIL]:
            self.data_set("value", self.properties[self.VALUE])
            self.resource_id_set(self.physical_resource_name())
        return self._token("create")

    def check_create_complete(self, token: Mapping[str, Any]) -> bool:
        return self._done(token)

    def needs_replace_with_prop_diff(self, changed_properties_set: set[str], after_props: Mapping[str, Any], before_props: Mapping[str, Any]) -> bool:
        return self.UPDATE_REPLACE in changed_properties_set and bool(after_props.get(self.UPDATE_REPLACE))

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> dict[str, Any]:
        if prop_diff.get(self.UPDATE_REPLACE):
            raise UpdateReplace(self.name)
        self.properties = json_snippet.properties(self.properties_schema, self.context)
        value = prop_diff.get(self.VALUE)
        if value and not self.properties[self.FAIL]:
            self.data_set("value", value)
        return self._token("update")

    def check_update_complete(self, token: Mapping[str, Any]) -> bool:
        return self._done(token)

    def handle_delete(self) -> dict[str, Any]:
        return self._token("delete")

    def check_delete_complete(self, token: Mapping[str, Any]) -> bool:
        return self._done(token)

    def handle_suspend(self) -> dict[str, Any]:
        return self._token("suspend")

    def check_suspend_complete(self, token: Mapping[str, Any]) -> bool:
        return self._done(token)

    def handle_resume(self) -> dict[str, Any]:
        return self._token("resume")

    def check_resume_complete(self, token: Mapping[str, Any]) -> bool:
        return self._done(token)

    def _resolve_attribute(self, name: str) -> Any:
        if name == "output":
            return self.data().get("value")
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::TestResource": TestResource}
