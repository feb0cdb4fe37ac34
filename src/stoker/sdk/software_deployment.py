"""Software deployments for plugins (Heat's ``software_deployment``: one config applied
to one server), part of ``software_config``, which plugins import them from.

What it owns: a deployment's shape (``format_deployment``, ``deployment_view``), Heat's
rules as pure functions that every implementation shares (``new_deployment`` for a
create, ``deployment_changes`` for an update, ``signal_outcome`` for the outputs a
server signals back, ``deployment_metadata`` for a server's metadata), and the
``SoftwareDeployments`` contract a plugin reaches through ``software_deployments(resource)``.

What it must not do: touch the store (``engine.software_deployments`` does) or know the
configs beyond the shape they are handed in (``software_config`` owns them, and the
in-memory stores of both for plugin tests).
"""

from __future__ import annotations

import builtins
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from stoker.sdk.exceptions import EntityNotFound, StokerError, ValidationError

if TYPE_CHECKING:
    from stoker.sdk.resource import Resource

def _isotime(value: datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else None


DEPLOYMENT_STATUSES = (IN_PROGRESS, FAILED, COMPLETE) = ("IN_PROGRESS", "FAILED", "COMPLETE")
# The outputs every signal sets, given or not (Heat's SOFTWARE_DEPLOYMENT_OUTPUTS).
DEPLOY_OUTPUTS = (DEPLOY_STDOUT, DEPLOY_STDERR, DEPLOY_STATUS_CODE) = ("deploy_stdout", "deploy_stderr", "deploy_status_code")

# The sizes of a deployment's columns: a value past one is refused, the same way
# whichever implementation stores it (Heat's ids are 36, its project ids 64).
_LIMITS = {"id": 36, "config_id": 36, "server_id": 255, "action": 255, "status": 255, "stack_user_project_id": 64}


class DeploymentConfigNotFoundError(ValidationError):
    """A deployment names a config that does not exist (Heat's Invalid: a bad request,
    not a missing deployment)."""

    def __init__(self, config_id: str):
        super().__init__(f"Config with id {config_id} not found")
        self.config_id = config_id


class SoftwareDeploymentNotFoundError(EntityNotFound):
    """No software deployment has this id (Heat's NotFound)."""

    def __init__(self, deployment_id: str):
        StokerError.__init__(self, f"Deployment with id {deployment_id} not found")
        self.entity = "Software deployment"
        self.name = deployment_id


def _text_field(name: str, value: Any, required: bool = False) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise ValidationError(f'"{name}" must be a string, not {type(value).__name__}')
    limit = _LIMITS.get(name)
    if limit is not None and len(value) > limit:
        raise ValidationError(f'"{name}" should be no more than {limit} characters')
    return value


def _deployment_time(value: datetime | str) -> datetime:
    """A time as the store keeps it: naive UTC (Heat's normalize_time(parse_isotime()))."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ValidationError(f'"updated_at" must be an ISO 8601 time, not {json.dumps(value)[:80]}') from None
    if not isinstance(value, datetime):
        raise ValidationError(f'"updated_at" must be an ISO 8601 time, not {type(value).__name__}')
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo is not None else value


def new_deployment(
    *,
    server_id: str,
    config_id: str,
    input_values: Any = None,
    action: str | None = "INIT",
    status: str | None = "COMPLETE",
    status_reason: Any = "",
    deployment_id: str | None = None,
    stack_user_project_id: str | None = None,
) -> dict[str, Any]:
    """The stored fields of a new deployment, checked as Heat's
    ``create_software_deployment`` checks them (a project id past 64 characters is
    refused; the reason is kept as text; a new id unless one is given). Whether the
    config exists is the implementation's to check."""
    if input_values is not None and not isinstance(input_values, Mapping):
        raise ValidationError(f'"input_values" must be a map, not {type(input_values).__name__}')
    return {
        "id": _text_field("id", deployment_id) or str(uuid.uuid4()),
        "config_id": _text_field("config_id", config_id, required=True),
        "server_id": _text_field("server_id", server_id, required=True),
        "input_values": dict(input_values) if input_values is not None else None,
        "action": _text_field("action", action),
        "status": _text_field("status", status),
        "status_reason": str(status_reason),
        "stack_user_project_id": _text_field("stack_user_project_id", stack_user_project_id),
    }


def deployment_changes(
    *,
    config_id: str | None = None,
    input_values: Any = None,
    output_values: Any = None,
    action: str | None = None,
    status: str | None = None,
    status_reason: Any = None,
    updated_at: datetime | str | None = None,
) -> dict[str, Any]:
    """The fields an update changes, by Heat's rule (``update_software_deployment``):
    only a field given a truthy value changes, so an update cannot empty the inputs or
    the reason; ``updated_at`` (a datetime or ISO 8601 text) is now when not given."""
    changes: dict[str, Any] = {}
    if config_id:
        changes["config_id"] = _text_field("config_id", config_id)
    for name, value in (("input_values", input_values), ("output_values", output_values)):
        if value:
            if not isinstance(value, Mapping):
                raise ValidationError(f'"{name}" must be a map, not {type(value).__name__}')
            changes[name] = dict(value)
    if action:
        changes["action"] = _text_field("action", action)
    if status:
        changes["status"] = _text_field("status", status)
    if status_reason:
        changes["status_reason"] = str(status_reason)
    changes["updated_at"] = _deployment_time(updated_at) if updated_at else datetime.now(UTC).replace(tzinfo=None)
    return changes


@dataclass(frozen=True, slots=True)
class SignalOutcome:
    """What a signal does to an IN_PROGRESS deployment: its new outputs, status and
    reason, and the text of the event that records it."""

    output_values: dict[str, Any]
    status: str
    status_reason: str
    event_reason: str


def signal_outcome(
    deployment_id: str,
    status: str | None,
    output_values: Mapping[str, Any] | None,
    config: Mapping[str, Any] | None,
    details: Any,
) -> SignalOutcome | None:
    """Heat's ``signal_software_deployment`` as a pure rule. None: the deployment is not
    IN_PROGRESS, and outputs are expected of none other. Otherwise the outputs the
    deployment's ``config`` declares (Heat's detailed shape; None: it is gone) that are
    named in ``details`` are copied into the output values, and so are deploy_stdout,
    deploy_stderr and deploy_status_code (None when not given); a non-zero status code,
    or any value of an ``error_output`` output, fails the deployment, with a reason
    listing each (``name : value``); else it is COMPLETE: "Outputs received"."""
    if status != IN_PROGRESS:
        return None
    details = details or {}
    if not isinstance(details, Mapping):
        raise ValidationError(f"A deployment's signal must be a map of output values, not {type(details).__name__}")
    values = dict(output_values or {})
    failed = False
    reasons: dict[str, str] = {}
    status_code = details.get(DEPLOY_STATUS_CODE)
    if status_code and str(status_code) != "0":
        failed = True
        reasons[DEPLOY_STATUS_CODE] = f"Deployment exited with non-zero status code: {status_code}"
        event_reason = f"deployment {deployment_id} failed ({status_code})"
    else:
        event_reason = f"deployment {deployment_id} succeeded"
    declared = (config or {}).get("outputs") or []
    for output in declared if isinstance(declared, list) else []:
        if not isinstance(output, Mapping):
            continue
        name = output.get("name")
        if name is not None and name in details:
            values[name] = details[name]
            if output.get("error_output", False):
                failed = True
                reasons[name] = str(details[name])
                event_reason = f"deployment {deployment_id} failed"
    for name in DEPLOY_OUTPUTS:
        values[name] = details.get(name)
    if failed:
        return SignalOutcome(values, FAILED, ", ".join(f"{name} : {reason}" for name, reason in reasons.items()), event_reason)
    return SignalOutcome(values, COMPLETE, "Outputs received", event_reason)


def format_deployment(
    deployment_id: str,
    server_id: str,
    config_id: str,
    input_values: Any,
    output_values: Any,
    action: str | None,
    status: str | None,
    status_reason: str | None,
    created_at: datetime | None,
    updated_at: datetime | None = None,
) -> dict[str, Any]:
    """A deployment in Heat's shape (``format_software_deployment``); ``updated_time``
    only once it was updated."""
    result: dict[str, Any] = {
        "id": deployment_id,
        "server_id": server_id,
        "input_values": input_values,
        "output_values": output_values,
        "action": action,
        "status": status,
        "status_reason": status_reason,
        "config_id": config_id,
        "creation_time": _isotime(created_at),
    }
    if updated_at:
        result["updated_time"] = _isotime(updated_at)
    return result


# A stored deployment's fields that its view shows, in ``format_deployment``'s order.
_VIEW_FIELDS = ("id", "server_id", "config_id", "input_values", "output_values", "action", "status", "status_reason", "created_at", "updated_at")


def deployment_view(stored: Mapping[str, Any] | Any) -> dict[str, Any]:
    """A stored deployment in Heat's shape (``format_deployment``), whichever
    implementation keeps it: a mapping of its fields (``MemorySoftwareDeployments``) or
    a record with them as attributes (the store's, ``engine.software_deployments``)."""
    if isinstance(stored, Mapping):
        return format_deployment(*(stored[name] for name in _VIEW_FIELDS))
    return format_deployment(*(getattr(stored, name) for name in _VIEW_FIELDS))


def deployment_metadata(configs: Sequence[Mapping[str, Any] | None]) -> list[dict[str, Any]]:
    """Heat's ``metadata_software_deployments`` as a pure rule: the detailed configs of
    a server's deployments (oldest first; None: a config that is gone and is left out),
    ordered by config name, stably, so that the order is deterministic."""
    found = [dict(config) for config in configs if config is not None]
    return sorted(found, key=lambda config: config.get("name") or "")


class SoftwareDeployments(Protocol):
    """The stored software deployments (called from handler threads). Every answer is a
    deployment in Heat's shape (``format_deployment``)."""

    def create(
        self,
        *,
        server_id: str,
        config_id: str,
        input_values: Any = None,
        action: str = "INIT",
        status: str = "COMPLETE",
        status_reason: str = "",
        deployment_id: str | None = None,
        stack_user_project_id: str | None = None,
    ) -> dict[str, Any]:
        """Store a new deployment (``new_deployment``); raises
        DeploymentConfigNotFoundError when the config does not exist, ValidationError
        when a field is refused."""
        ...

    def show(self, deployment_id: str) -> dict[str, Any]:
        """The deployment; raises SoftwareDeploymentNotFoundError."""
        ...

    def list(self, server_id: str | None = None) -> list[dict[str, Any]]:
        """Every deployment, or those to ``server_id``; oldest first."""
        ...

    def update(
        self,
        deployment_id: str,
        *,
        config_id: str | None = None,
        input_values: Any = None,
        output_values: Any = None,
        action: str | None = None,
        status: str | None = None,
        status_reason: str | None = None,
        updated_at: datetime | str | None = None,
    ) -> dict[str, Any]:
        """Change the fields given truthy values (``deployment_changes``); returns the
        deployment. Raises SoftwareDeploymentNotFoundError, or
        DeploymentConfigNotFoundError for an unknown config."""
        ...

    def delete(self, deployment_id: str) -> None:
        """Delete the deployment; raises SoftwareDeploymentNotFoundError."""
        ...

    def signal(self, deployment_id: str, details: Any, updated_at: datetime | str | None = None) -> str | None:
        """Take the outputs a server signalled (``signal_outcome``); returns the reason
        of the event to record, or None when the deployment is not IN_PROGRESS."""
        ...

    def metadata(self, server_id: str) -> builtins.list[dict[str, Any]]:  # ``list`` here is the method above
        """The detailed configs (``format_config``) of the server's deployments, by
        config name; configs that no longer exist are left out."""
        ...


def software_deployments(resource: Resource, required: bool = True) -> SoftwareDeployments | None:
    """The deployment store the engine gives ``resource`` (the hooks'
    ``software_deployments``). Without one (outside an engine, a preview): an error,
    or None when not ``required``."""
    offer = getattr(resource._hooks, "software_deployments", None)
    if offer is None:
        if not required:
            return None
        raise StokerError(f"{resource.type} needs the engine's software deployment store", path=f"resources.{resource.name}")
    return offer(resource)
