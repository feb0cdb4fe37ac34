"""OS::Heat::Delay: a pause at a chosen point of a stack's create, delete, suspend or
resume, waited for by polling ``check_*_complete`` on the engine's clock.

Owns the wait's length (minimum plus random jitter, drawn once when the action starts
and kept in the handler's token, so a restarted engine waits out the same pause). It
must not sleep: a handler returns at once and the engine polls.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, ClassVar

from stoker.sdk import constraints, properties, support
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource


class Delay(Resource):
    """A resource that pauses for a configurable delay.

    By manipulating the dependency relationships between resources in the template, a
    delay can be inserted at an arbitrary point during e.g. stack creation or deletion.
    The delay will occur after any resource that it depends on during CREATE or
    SUSPEND, and before any resource that it depends on during DELETE or RESUME.
    Similarly, it will occur before any resource that depends on it during CREATE or
    SUSPEND, and after any resource that depends on it during DELETE or RESUME.

    If a non-zero maximum jitter is specified, a random amount of jitter - chosen with
    uniform probability in the range from 0 to the product of the maximum jitter value
    and the jitter multiplier (1s by default) - is added to the minimum delay time. This
    can be used, for example, in the scaled unit of a large scaling group to prevent
    'thundering herd' issues. An update changes the delay in place without waiting.
    """

    support_status = support.SupportStatus(version="11.0.0")

    ALLOWED_ACTIONS = (Resource.CREATE, Resource.DELETE, Resource.SUSPEND, Resource.RESUME)

    PROPERTIES = (MIN_WAIT_SECS, MAX_JITTER, JITTER_MULTIPLIER_SECS, DELAY_ACTIONS) = (
        "min_wait",
        "max_jitter",
        "jitter_multiplier",
        "actions",
    )

    properties_schema = {
        MIN_WAIT_SECS: properties.Schema(
            properties.Schema.NUMBER,
            "Minimum time in seconds to wait during the specified actions.",
            update_allowed=True,
            default=0,
            constraints=[constraints.Range(min=0)],
        ),
        MAX_JITTER: properties.Schema(
            properties.Schema.NUMBER,
            "Maximum jitter to add to the minimum wait time.",
            update_allowed=True,
            default=0,
            constraints=[constraints.Range(min=0)],
        ),
        JITTER_MULTIPLIER_SECS: properties.Schema(
            properties.Schema.NUMBER,
            "Number of seconds to multiply the maximum jitter value by.",
            update_allowed=True,
            default=1.0,
            constraints=[constraints.Range(min=0)],
        ),
        DELAY_ACTIONS: properties.Schema(
            properties.Schema.LIST,
            "Actions during which the delay will occur.",
            update_allowed=True,
            default=[Resource.CREATE],
            constraints=[constraints.AllowedValues(ALLOWED_ACTIONS)],
        ),
    }

    attributes_schema: ClassVar[Mapping[str, Any]] = {}

    def _delay_parameters(self) -> tuple[float, float]:
        """The minimum delay and the maximum jitter, in seconds."""
        return (
            self.properties[self.MIN_WAIT_SECS],
            self.properties[self.MAX_JITTER] * self.properties[self.JITTER_MULTIPLIER_SECS],
        )

    def validate(self) -> None:
        super().validate()
        # The stack's timeout is known when a stack is validated (not for a bare
        # template); without one there is nothing the delay could exceed.
        timeout_mins = getattr(self.stack, "timeout_mins", None)
        if not timeout_mins:
            return
        min_wait_secs, max_jitter_secs = self._delay_parameters()
        max_wait = min_wait_secs + max_jitter_secs
        if max_wait > timeout_mins * 60:
            raise ValidationError(
                f"{self.type} maximum delay {max_wait}s exceeds stack timeout.",
                path=f"resources.{self.name}.properties",
            )

    def _start(self, action: str) -> dict[str, Any]:
        """The token of one action's wait: when it started and how long it lasts (0 for
        an action not listed in ``actions``)."""
        wait_secs = 0.0
        if action in self.properties[self.DELAY_ACTIONS]:
            min_wait_secs, max_jitter_secs = self._delay_parameters()
            wait_secs = min_wait_secs + max_jitter_secs * random.random()  # noqa: S311 - jitter, not a secret
        return {"started_at": self._hooks.now(), "wait_secs": wait_secs}

    def _waited(self, token: Mapping[str, Any]) -> bool:
        if not token["wait_secs"]:
            return True
        return self._hooks.now() - token["started_at"] >= token["wait_secs"]

    def handle_create(self) -> dict[str, Any]:
        # A physical id, so the reference is stable and a delete knows it was created.
        self.resource_id_set(self.physical_resource_name())
        return self._start(self.CREATE)

    def check_create_complete(self, token: Mapping[str, Any]) -> bool:
        return self._waited(token)

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> None:
        # Every property may change in place and an update is not a delayed action
        # (Heat's Delay has no update handler, so its update does nothing).
        return None

    def handle_delete(self) -> dict[str, Any]:
        return self._start(self.DELETE)

    def check_delete_complete(self, token: Mapping[str, Any]) -> bool:
        return self._waited(token)

    def handle_suspend(self) -> dict[str, Any]:
        return self._start(self.SUSPEND)

    def check_suspend_complete(self, token: Mapping[str, Any]) -> bool:
        return self._waited(token)

    def handle_resume(self) -> dict[str, Any]:
        return self._start(self.RESUME)

    def check_resume_complete(self, token: Mapping[str, Any]) -> bool:
        # Heat's calls a method that does not exist; here it is the same check as the others.
        return self._waited(token)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::Delay": Delay}
