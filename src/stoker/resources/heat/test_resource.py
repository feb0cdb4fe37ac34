"""OS::Heat::TestResource, and ``test_constr``, the custom constraint that makes
validating its ``constraint_prop_secs`` slow.

Owns the test knobs Heat's TestResource has (waits per action, failure, replacement,
slow attributes, slow validation, polling an entity through a client plugin). Waits on
actions are measured on the engine's clock and done by polling ``check_*_complete``, so
they hold no thread and a fake clock makes them instant.

The two knobs that must block the caller (``attr_wait_secs`` while an attribute is read,
``constraint_prop_secs`` while the property is validated) sleep as Heat's do, but never
on a thread that runs an event loop: in Heat they are eventlet sleeps, which block
nothing else, so here they block only the handler thread or the request's thread that
validates or reads (the service and the engine validate and resolve off the loop).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ClientPluginError, StokerError, UpdateReplace, ValidationError
from stoker.sdk.resource import Resource

LOG = logging.getLogger(__name__)

# The actions whose wait action_wait_secs can set: Heat's create, update and delete, and
# the suspend and resume stoker's TestResource also waits on.
WAITED_ACTIONS = ("create", "update", "delete", "suspend", "resume")
TEST_CONSTRAINT = "test_constr"


def pause_off_loop(seconds: float, why: str) -> None:
    """Sleep ``seconds`` unless this thread runs an event loop (where a sleep would stop
    every stack action of the process); then only log that the pause was skipped."""
    if seconds <= 0:
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        time.sleep(seconds)
        return
    LOG.debug("not pausing %ss for %s on the event loop's thread", seconds, why)


class DelayConstraint(constraints.BaseCustomConstraint):
    """``test_constr``: validating a number takes that many seconds (for testing slow
    validation, as Heat's ``TestConstraintDelay``). A negative number is invalid."""

    def validate_with_client(self, client: Any, value: Any) -> None:
        seconds = float(value)
        if seconds < 0:
            raise ValueError(f"a delay of {value} seconds is negative")
        pause_off_loop(seconds, "test_constr")


class _OwnConstraint:
    """A validation context whose registry lacks ``test_constr`` (a plugin harness
    given no constraints) gets this module's: the property is this plugin's own."""

    def __init__(self, context: Any):
        self._context = context

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)

    def custom_constraint(self, name: str) -> Any:
        found = self._context.custom_constraint(name)
        return DelayConstraint if found is None and name == TEST_CONSTRAINT else found


class _TestConstraint(constraints.CustomConstraint):
    """``CustomConstraint("test_constr")`` that is never "not registered"."""

    def _is_valid(self, value: Any, context: Any) -> bool:
        if callable(getattr(context, "custom_constraint", None)):
            context = _OwnConstraint(context)
        return super()._is_valid(value, context)


class TestResource(Resource):
    """A resource which stores the string value that was provided.

    This resource is to be used only for testing. It has control knobs such as
    'update_replace', 'fail', 'wait_secs'. Waits are measured on the engine's clock, so
    a test with a fake clock does not sleep.

    An update replaces it when ``value`` changes while ``update_replace`` is true (as in
    Heat), when ``update_replace`` is turned on, or when ``update_replace_value`` changes.
    An update waits (``action_wait_secs.update`` or ``wait_secs``) only when ``value``
    changes. ``fail`` fails every action but delete once its wait is over.
    ``client_name`` and ``entity_name`` name a client plugin and an entity of its client
    that each poll looks up by the stored value or the physical id while the resource
    waits (a failed lookup is only logged, as in Heat; an unknown client plugin or
    entity is an error).
    """

    __test__ = False  # not a pytest test class
    support_status = support.SupportStatus(version="5.0.0")

    PROPERTIES = (
        VALUE,
        UPDATE_REPLACE,
        FAIL,
        CLIENT_NAME,
        ENTITY_NAME,
        WAIT_SECS,
        ACTION_WAIT_SECS,
        ATTR_WAIT_SECS,
        CONSTRAINT_PROP_SECS,
        UPDATE_REPLACE_VALUE,
    ) = (
        "value",
        "update_replace",
        "fail",
        "client_name",
        "entity_name",
        "wait_secs",
        "action_wait_secs",
        "attr_wait_secs",
        "constraint_prop_secs",
        "update_replace_value",
    )
    ATTRIBUTES = (OUTPUT,) = ("output",)

    properties_schema = {
        CONSTRAINT_PROP_SECS: properties.Schema(
            properties.Schema.NUMBER,
            "Number value for delay during resolve constraint.",
            default=0,
            update_allowed=True,
            constraints=[_TestConstraint(TEST_CONSTRAINT)],
            support_status=support.SupportStatus(version="6.0.0"),
        ),
        ATTR_WAIT_SECS: properties.Schema(
            properties.Schema.NUMBER,
            "Number value for timeout during resolving output value.",
            default=0,
            update_allowed=True,
            support_status=support.SupportStatus(version="6.0.0"),
        ),
        VALUE: properties.Schema(properties.Schema.STRING, "The input string to be stored.", default="test_string", update_allowed=True),
        UPDATE_REPLACE_VALUE: properties.Schema(
            properties.Schema.STRING,
            "Some value that can be stored but can not be updated.",
            support_status=support.SupportStatus(version="7.0.0"),
        ),
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
                for action in WAITED_ACTIONS
            },
        ),
        CLIENT_NAME: properties.Schema(properties.Schema.STRING, "Client to poll.", default="", update_allowed=True),
        ENTITY_NAME: properties.Schema(properties.Schema.STRING, "Client entity to poll.", default="", update_allowed=True),
    }

    attributes_schema = {
        OUTPUT: attributes.Schema(
            "The string that was stored. This value is also available by referencing the resource.",
            cache_mode=attributes.Schema.CACHE_NONE,
        ),
    }

    # -- validation -------------------------------------------------------------

    def validate(self) -> None:
        super().validate()
        client_name = self.properties[self.CLIENT_NAME]
        if client_name:
            try:
                self.client_plugin(client_name)
            except ClientPluginError as error:
                raise ValidationError(
                    error.message, path=f"resources.{self.name}.properties.{self.CLIENT_NAME}", hint=error.hint
                ) from error

    # -- waiting --------------------------------------------------------------------

    def _wait_secs(self, action: str) -> float:
        waits = self.properties[self.ACTION_WAIT_SECS] or {}
        secs = waits.get(action)
        return self.properties[self.WAIT_SECS] if secs is None else secs

    def _token(self, action: str, wait_secs: float | None = None) -> dict[str, Any]:
        # A plain dict so the engine can persist it and resume after a restart; it
        # carries the properties it depends on, which a resumed instance may not have.
        return {
            "started_at": self._hooks.now(),
            "wait_secs": self._wait_secs(action) if wait_secs is None else wait_secs,
            "action": action,
            "fail": bool(self.properties[self.FAIL]),
        }

    def _done(self, token: Mapping[str, Any]) -> bool:
        wait = token["wait_secs"]
        if wait < 0 or self._hooks.now() - token["started_at"] < wait:
            self._simulated_effort()
            return False
        if token.get("fail", self.properties[self.FAIL]) and token["action"] != "delete":
            raise ValueError(f"Test Resource failed {self.name}")
        return True

    def _simulated_effort(self) -> None:
        """While waiting, look up ``entity_name`` through the client plugin ``client_name``
        (Heat's way of loading a service); only the lookup's own failure is ignored."""
        client_name, entity = self.properties[self.CLIENT_NAME], self.properties[self.ENTITY_NAME]
        if not (client_name and entity):
            return
        entity_id = self.data().get("value") or self.resource_id
        client = self.client(client_name)
        manager = getattr(client, entity, None)
        if manager is not None and callable(getattr(manager, "get", None)):
            lookup = manager.get  # a python-*client manager, as Heat's clients have
        else:
            # openstacksdk's proxies have get_<entity>: "servers" -> get_server
            singular = entity[:-1] if entity.endswith("s") else entity
            lookup = getattr(client, f"get_{singular}", None)
            if not callable(lookup):
                raise StokerError(
                    f"The client of client plugin {client_name!r} has no entity {entity!r} "
                    f"(neither {entity}.get nor get_{singular})",
                    path=f"resources.{self.name}.properties.{self.ENTITY_NAME}",
                )
        try:
            lookup(entity_id)
        except Exception as error:  # noqa: BLE001 - any client's error: the lookup is only load
            LOG.debug("%s.%s(%s) %s", client_name, entity, entity_id, error)

    # -- handlers ---------------------------------------------------------------------

    def handle_create(self) -> dict[str, Any]:
        if not self.properties[self.FAIL]:
            self.data_set("value", self.properties[self.VALUE])
            self.resource_id_set(self.physical_resource_name())
        return self._token("create")

    def check_create_complete(self, token: Mapping[str, Any]) -> bool:
        return self._done(token)

    def needs_replace_with_prop_diff(self, changed_properties_set: set[str], after_props: Mapping[str, Any], before_props: Mapping[str, Any]) -> bool:
        # Heat: a new value while update_replace is on. stoker: turning update_replace on.
        if self.VALUE in changed_properties_set and after_props.get(self.UPDATE_REPLACE):
            return True
        return self.UPDATE_REPLACE in changed_properties_set and bool(after_props.get(self.UPDATE_REPLACE))

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> dict[str, Any]:
        new = json_snippet.properties(self.properties_schema, self.context)
        if self.needs_replace_with_prop_diff(set(prop_diff), new.resolved(), self.properties.resolved()):
            raise UpdateReplace(self.name)
        self.properties = new
        value = prop_diff.get(self.VALUE)
        if not value:
            return self._token("update", wait_secs=0)
        if not self.properties[self.FAIL]:
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

    def handle_check(self) -> None:
        if not self.resource_id:
            raise ValueError("Resource not created")

    # -- attributes -------------------------------------------------------------------

    def _resolve_attribute(self, name: str) -> Any:
        pause_off_loop(self.properties[self.ATTR_WAIT_SECS], f"{self.name}.{self.ATTR_WAIT_SECS}")
        if name == self.OUTPUT:
            return self.data().get("value")
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::TestResource": TestResource}


def constraint_mapping() -> dict[str, type[constraints.BaseCustomConstraint]]:
    return {TEST_CONSTRAINT: DelayConstraint}
