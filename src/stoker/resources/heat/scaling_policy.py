"""OS::Heat::ScalingPolicy: a signal to it adjusts an OS::Heat::AutoScalingGroup.

Owns the policy's properties and the signal's meaning; the group decides whether it
may scale (bounds, cooldown) and resizes itself. The engine runs the signal under
the stack's lock and waits for the group's nested stack (engine/scaling.py).
"""

from __future__ import annotations

from typing import Any

from stoker.resources.heat import capacity
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ResourceFailure, ValidationError
from stoker.sdk.resource import Resource

# The policy's data: its alarm credential and URL (the URL holds the secret).
ALARM_CREDENTIAL_KEY, ALARM_URL_KEY = "alarm_credential_id", "alarm_url"
# What the alarm credential is for (engine.signals.ALARM).
ALARM_PURPOSE = "alarm"


def signal_endpoint(resource: Resource) -> str | None:
    """The URL a client POSTs to signal ``resource`` (the API's resource signal route,
    on Settings.public_url), from the engine's signals hook; None without an engine."""
    signals = resource.signals()
    return None if signals is None else str(signals.resource_signal_url(resource.name))


class ScalingPolicy(Resource):
    """A resource to manage scaling of an OS::Heat::AutoScalingGroup.

    A signal to the policy (a POST to its ``signal_url``, e.g. from an alarm) adjusts
    the group by ``scaling_adjustment``: a change in capacity, an exact capacity or a
    percent change in capacity (at least ``min_adjustment_step`` members), within the
    group's ``min_size`` and ``max_size``. A signal while the group is in its cooldown
    (the policy's ``cooldown``, else the group's, from its last size change) or still
    scaling is ignored.
    """

    support_status = support.SupportStatus()

    PROPERTIES = (AUTO_SCALING_GROUP_ID, SCALING_ADJUSTMENT, ADJUSTMENT_TYPE, COOLDOWN, MIN_ADJUSTMENT_STEP) = (
        "auto_scaling_group_id",
        "scaling_adjustment",
        "adjustment_type",
        "cooldown",
        "min_adjustment_step",
    )
    ATTRIBUTES: tuple[str, ...]
    ATTRIBUTES = (ALARM_URL, SIGNAL_URL) = ("alarm_url", "signal_url")

    properties_schema = {
        AUTO_SCALING_GROUP_ID: properties.Schema(
            properties.Schema.STRING, "AutoScaling group ID to apply policy to.", required=True
        ),
        SCALING_ADJUSTMENT: properties.Schema(
            properties.Schema.NUMBER, "Size of adjustment.", required=True, update_allowed=True
        ),
        ADJUSTMENT_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Type of adjustment (absolute or percentage).",
            required=True,
            constraints=[constraints.AllowedValues([capacity.CHANGE_IN_CAPACITY, capacity.EXACT_CAPACITY, capacity.PERCENT_CHANGE_IN_CAPACITY])],
            update_allowed=True,
        ),
        COOLDOWN: properties.Schema(properties.Schema.NUMBER, "Cooldown period, in seconds.", update_allowed=True),
        MIN_ADJUSTMENT_STEP: properties.Schema(
            properties.Schema.INTEGER,
            "Minimum number of resources that are added or removed when the group scales up or down. Only with "
            "percent_change_in_capacity as the adjustment_type.",
            constraints=[constraints.Range(min=0)],
            update_allowed=True,
        ),
    }

    attributes_schema = {
        ALARM_URL: attributes.Schema("A URL to signal the policy (e.g. by an alarm).", type=attributes.Schema.STRING),
        SIGNAL_URL: attributes.Schema(
            "A URL to signal the policy using the native API.",
            type=attributes.Schema.STRING,
            support_status=support.SupportStatus(version="5.0.0"),
        ),
    }

    # The engine runs this type's signals under the stack's lock and then polls
    # check_signal_complete (engine/scaling.py).
    signal_under_lock = True

    def _optional(self, key: str) -> Any:
        """A property without a default: None when not given (not its type's zero)."""
        return self.properties[key] if self.properties.data.get(key) is not None else None

    def validate(self) -> None:
        super().validate()
        self._check_min_adjustment_step()

    def _check_min_adjustment_step(self) -> None:
        if (
            self.properties[self.ADJUSTMENT_TYPE] != capacity.PERCENT_CHANGE_IN_CAPACITY
            and self._optional(self.MIN_ADJUSTMENT_STEP) is not None
        ):
            raise ValidationError(
                f"{self.MIN_ADJUSTMENT_STEP} property should only be specified for {self.ADJUSTMENT_TYPE} with value "
                f"{capacity.PERCENT_CHANGE_IN_CAPACITY}.",
                path=f"resources.{self.name}.properties.{self.MIN_ADJUSTMENT_STEP}",
            )

    def handle_create(self) -> Any:
        # Validation skips a policy whose group is not created yet (its reference is
        # unresolved then): the rule is checked again here.
        self._check_min_adjustment_step()
        self.resource_id_set(self.uuid or self.name)
        self._issue_alarm_url()
        return None

    def handle_update(self, json_snippet: Any, tmpl_diff: Any, prop_diff: Any) -> Any:
        if prop_diff:
            self.properties = json_snippet.properties(self.properties_schema, self.context)
        return None

    def _group(self) -> Any:
        reference = self.properties[self.AUTO_SCALING_GROUP_ID]
        group = self.stack.resource_by_refid(reference)  # type: ignore[attr-defined]
        if group is None or getattr(group, "adjust", None) is None:
            raise ResourceFailure(f'Alarm {self.name} could not find scaling group named "{reference}"')
        return group

    def handle_signal(self, details: Any = None) -> tuple[bool, str, str]:
        """Start adjusting the group: the group's answer (whether it is resizing, what
        for the event, the reason its cooldown records)."""
        if self.action in (self.SUSPEND, self.DELETE):
            return False, f"Cannot signal resource during {self.action}", ""
        return self._group().adjust(
            self.properties[self.SCALING_ADJUSTMENT],
            self.properties[self.ADJUSTMENT_TYPE],
            self._optional(self.MIN_ADJUSTMENT_STEP),
            self._optional(self.COOLDOWN),
        )

    def check_signal_complete(self, token: tuple[bool, str, str]) -> str:
        """After the group's nested stack finished its update the cooldown starts;
        returns what the signal did, for its event."""
        started, message, reason = token
        if started:
            self._group().finish_adjust(self._optional(self.COOLDOWN), reason)
        return message

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        if name == self.ALARM_URL:
            return self.data().get(ALARM_URL_KEY)
        if name == self.SIGNAL_URL:
            return signal_endpoint(self)
        return None

    # -- the alarm URL: a capability of this policy's own ---------------------------------

    def _issue_alarm_url(self) -> None:
        """Heat's alarm_url is a pre-signed URL an alarm service POSTs to without
        credentials; stoker's is its own capability URL, valid for this policy only."""
        signals = self.signals()
        if signals is None or self.data().get(ALARM_URL_KEY):
            return
        credential = signals.issue_credential(ALARM_PURPOSE)
        self.data_set(ALARM_CREDENTIAL_KEY, credential.id)
        self.data_set(ALARM_URL_KEY, signals.waitcondition_url(credential), redact=True)

    def handle_delete(self) -> None:
        signals = self.signals()
        if signals is not None and self.data().get(ALARM_CREDENTIAL_KEY):
            signals.revoke_credentials()
            self.data_delete(ALARM_URL_KEY)
            self.data_delete(ALARM_CREDENTIAL_KEY)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::ScalingPolicy": ScalingPolicy}
