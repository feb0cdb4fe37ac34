"""What every Aodh alarm type shares, as Heat's ``alarm_base``: the common properties
(actions, queues, repeat, description, enabled, severity, time constraints) and
``BaseAlarm``, which turns properties into Aodh's alarm body and runs the lifecycle.

Owns: create (the physical resource name is the alarm's name, so a create cut short
before its id was recorded is found again by it: ``find_created``), update in place
(every property of every alarm type is ``update_allowed`` but a few, which replace),
delete tolerating an alarm already gone, suspend and resume (Heat disables and enables
the alarm), check and ``show`` reading the live alarm. How a type's own properties become
its ``<type>_rule`` is each type's (``get_alarm_props``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from stoker.resources.openstack.aodh.client_plugin import AodhRequestError
from stoker.sdk import constraints, properties, support
from stoker.sdk.resource import Resource

__all__ = ["BaseAlarm", "COMMON_PROPERTIES", "INTERNAL_PROPERTIES", "common_properties_schema"]

COMMON_PROPERTIES = (
    ALARM_ACTIONS, OK_ACTIONS, INSUFFICIENT_DATA_ACTIONS,
    ALARM_QUEUES, OK_QUEUES, INSUFFICIENT_DATA_QUEUES,
    REPEAT_ACTIONS, DESCRIPTION, ENABLED, TIME_CONSTRAINTS, SEVERITY,
) = (
    "alarm_actions", "ok_actions", "insufficient_data_actions",
    "alarm_queues", "ok_queues", "insufficient_data_queues",
    "repeat_actions", "description", "enabled", "time_constraints", "severity",
)  # fmt: skip

# The queue properties: Heat turns them into trust+zaqar:// actions, Aodh never has them.
INTERNAL_PROPERTIES = (ALARM_QUEUES, OK_QUEUES, INSUFFICIENT_DATA_QUEUES)

_TIME_CONSTRAINT_KEYS = (NAME, START, DURATION, TIMEZONE, TIME_CONSTRAINT_DESCRIPTION) = (
    "name",
    "start",
    "duration",
    "timezone",
    "description",
)


def _queues(description: str) -> properties.Schema:
    return properties.Schema(
        properties.Schema.LIST,
        description,
        support_status=support.SupportStatus(version="8.0.0"),
        schema=properties.Schema(
            properties.Schema.STRING,
            constraints=[constraints.CustomConstraint("zaqar.queue")],
        ),
        default=[],
        update_allowed=True,
    )


common_properties_schema = {
    DESCRIPTION: properties.Schema(
        properties.Schema.STRING, "Description for the alarm.", update_allowed=True
    ),
    ENABLED: properties.Schema(
        properties.Schema.BOOLEAN,
        "True if alarm evaluation/actioning is enabled.",
        default="true",
        update_allowed=True,
    ),
    ALARM_ACTIONS: properties.Schema(
        properties.Schema.LIST,
        "A list of URLs (webhooks) to invoke when state transitions to alarm.",
        update_allowed=True,
    ),
    OK_ACTIONS: properties.Schema(
        properties.Schema.LIST,
        "A list of URLs (webhooks) to invoke when state transitions to ok.",
        update_allowed=True,
    ),
    INSUFFICIENT_DATA_ACTIONS: properties.Schema(
        properties.Schema.LIST,
        "A list of URLs (webhooks) to invoke when state transitions to insufficient-data.",
        update_allowed=True,
    ),
    ALARM_QUEUES: _queues("A list of Zaqar queues to post to when state transitions to alarm."),
    OK_QUEUES: _queues("A list of Zaqar queues to post to when state transitions to ok."),
    INSUFFICIENT_DATA_QUEUES: _queues(
        "A list of Zaqar queues to post to when state transitions to insufficient-data."
    ),
    REPEAT_ACTIONS: properties.Schema(
        properties.Schema.BOOLEAN,
        "False to trigger actions when the threshold is reached AND the alarm's state has "
        "changed. By default, actions are called each time the threshold is reached.",
        default="true",
        update_allowed=True,
    ),
    SEVERITY: properties.Schema(
        properties.Schema.STRING,
        "Severity of the alarm.",
        default="low",
        constraints=[constraints.AllowedValues(["low", "moderate", "critical"])],
        update_allowed=True,
        support_status=support.SupportStatus(version="5.0.0"),
    ),
    TIME_CONSTRAINTS: properties.Schema(
        properties.Schema.LIST,
        "Describe time constraints for the alarm. Only evaluate the alarm if the time at "
        "evaluation is within this time constraint. Start point(s) of the constraint are "
        "specified with a cron expression, whereas its duration is given in seconds.",
        schema=properties.Schema(
            properties.Schema.MAP,
            schema={
                NAME: properties.Schema(
                    properties.Schema.STRING, "Name for the time constraint.", required=True
                ),
                START: properties.Schema(
                    properties.Schema.STRING,
                    "Start time for the time constraint. A CRON expression property.",
                    constraints=[constraints.CustomConstraint("cron_expression")],
                    required=True,
                ),
                TIME_CONSTRAINT_DESCRIPTION: properties.Schema(
                    properties.Schema.STRING, "Description for the time constraint."
                ),
                DURATION: properties.Schema(
                    properties.Schema.INTEGER,
                    "Duration for the time constraint.",
                    constraints=[constraints.Range(min=0)],
                    required=True,
                ),
                TIMEZONE: properties.Schema(
                    properties.Schema.STRING,
                    "Timezone for the time constraint (eg. 'Asia/Taipei', 'Europe/Amsterdam').",
                    constraints=[constraints.CustomConstraint("timezone")],
                ),
            },
        ),
        support_status=support.SupportStatus(version="5.0.0"),
        default=[],
    ),
}

QUERY_FACTOR_FIELDS = (QF_FIELD, QF_OP, QF_VALUE, QF_TYPE) = ("field", "op", "value", "type")
QF_OPERATORS = ["le", "ge", "eq", "lt", "gt", "ne"]
QF_TYPES = ["integer", "float", "string", "boolean", "datetime"]


def query_schema(
    field_description: str, type_support: support.SupportStatus | None = None
) -> dict[str, properties.Schema]:
    """The map of one query factor (field, type, op, value), as Heat's alarms take it."""
    return {
        QF_FIELD: properties.Schema(properties.Schema.STRING, field_description),
        QF_TYPE: properties.Schema(
            properties.Schema.STRING,
            "The type of the attribute.",
            default="string",
            constraints=[constraints.AllowedValues(QF_TYPES)],
            support_status=type_support,
        ),
        QF_OP: properties.Schema(
            properties.Schema.STRING,
            "Comparison operator.",
            constraints=[constraints.AllowedValues(QF_OPERATORS)],
        ),
        QF_VALUE: properties.Schema(
            properties.Schema.STRING, "String value with which to compare."
        ),
    }


# Aodh's answer when the token it was called with may not create the trust a ``trust+``
# action needs (Keystone's 403, which Aodh passes on inside a 500).
TRUST_REFUSALS = ("not authorized", "HTTP 403", "Forbidden")


def _trust_action_refusal(error: AodhRequestError, alarm: Mapping[str, Any]) -> AodhRequestError | None:
    """Aodh's refusal of an alarm with a ``trust+`` action for want of a trust, with what to
    do; None for any other refusal."""
    actions = [
        action
        for key in (ALARM_ACTIONS, OK_ACTIONS, INSUFFICIENT_DATA_ACTIONS)
        for action in alarm.get(key) or []
        if str(action).startswith("trust+")
    ]
    if not actions or not any(text in error.answer for text in TRUST_REFUSALS):
        return None
    return AodhRequestError(
        error.method,
        error.request_path,
        error.status_code,
        error.answer,
        hint=(
            f"the alarm's action {actions[0].split('?')[0]} has Aodh create a Keystone trust with the "
            "token stoker called it with, and Keystone refused. Through stoker serve --auth-mode "
            "keystone, stoker calls Aodh through the stack's own trust, which Keystone lets delegate "
            "on only if its operator sets STOKER_ALLOW_TRUSTS_REDELEGATION=true (Heat's "
            "allow_trusts_redelegation) before the stack is created; or make the action the "
            "scaling policy's pre-signed alarm_url, which needs no trust"
        ),
    )


class BaseAlarm(Resource):
    """Base Alarm Manager."""

    default_client_name = "aodh"
    entity = "alarm"
    alarm_type = "threshold"
    PROPERTIES: tuple[str, ...] = ()

    # -- properties -> Aodh's alarm -----------------------------------------------------

    def actions_to_urls(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The properties with each queue made a ``trust+zaqar://`` action, as Heat does."""
        alarm = dict(given)
        for actions, queues in (
            (ALARM_ACTIONS, ALARM_QUEUES),
            (OK_ACTIONS, OK_QUEUES),
            (INSUFFICIENT_DATA_ACTIONS, INSUFFICIENT_DATA_QUEUES),
        ):
            urls = [str(action) for action in alarm.get(actions) or [] if action]
            urls += [
                "trust+zaqar://?" + urlencode({"queue_name": queue})
                for queue in alarm.pop(queues, None) or []
            ]
            alarm[actions] = urls
        return alarm

    def _reformat_properties(self, alarm: dict[str, Any]) -> dict[str, Any]:
        """The type's own properties moved into ``<alarm_type>_rule``."""
        rule = {name: alarm.pop(name) for name in self.PROPERTIES if name in alarm}
        if rule:
            alarm[f"{self.alarm_type}_rule"] = rule
        return alarm

    def get_alarm_props(self, given: Mapping[str, Any]) -> dict[str, Any]:
        alarm = self.actions_to_urls(given)
        alarm["type"] = self.alarm_type
        return self._reformat_properties(alarm)

    def create_body(self) -> dict[str, Any]:
        alarm = self.get_alarm_props(self.properties.resolved())
        alarm["name"] = self.physical_resource_name()
        alarm["type"] = self.alarm_type
        return alarm

    def update_body(
        self, new_properties: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> dict[str, Any]:
        return self.get_alarm_props(new_properties)

    # -- lifecycle ----------------------------------------------------------------------

    def handle_create(self) -> str:
        body = self.create_body()
        try:
            alarm = self.client_plugin().create_alarm(body)
        except AodhRequestError as error:
            raise _trust_action_refusal(error, body) or error from None
        self.resource_id_set(str(alarm["alarm_id"]))
        return str(alarm["alarm_id"])

    def find_created(self) -> str | None:
        found = self.client_plugin().alarms_named(self.physical_resource_name())
        return str(found[0]["alarm_id"]) if len(found) == 1 else None

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if not prop_diff:
            return
        new_properties = json_snippet.properties(self.properties_schema, self.context)
        self.client_plugin().update_alarm(
            self.resource_id, self.update_body(new_properties.resolved(), prop_diff)
        )

    def handle_delete(self) -> None:
        if self.resource_id is not None:
            self.client_plugin().delete_alarm(self.resource_id)

    def handle_suspend(self) -> None:
        if self.resource_id is not None:
            self.client_plugin().set_enabled(self.resource_id, False)

    def handle_resume(self) -> None:
        if self.resource_id is not None:
            self.client_plugin().set_enabled(self.resource_id, True)

    def handle_check(self) -> None:
        self.client_plugin().get_alarm(self.resource_id)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return self.client_plugin().get_alarm(self.resource_id)

    def parse_live_resource_data(
        self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The update-allowed properties as the live alarm has them (its rule flattened)."""
        data = dict(resource_data.get(f"{self.alarm_type}_rule") or {})
        data.update(resource_data)
        return {
            key: data.get(key)
            for key, schema in self.properties_schema.items()
            if key not in INTERNAL_PROPERTIES and schema.update_allowed
        }
