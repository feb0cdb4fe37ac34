"""Plain records the repository returns and accepts; no SQLAlchemy objects leak out."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any


def utcnow() -> datetime:
    """Now, as the records' timestamps hold it: UTC without a zone (as the tables store it)."""
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass(slots=True)
class StackRecord:
    id: str
    name: str
    action: str
    status: str
    status_reason: str
    raw_template_id: int
    parameters: dict[str, Any]
    disable_rollback: bool = True
    timeout_mins: int | None = None
    tags: list[str] = field(default_factory=list)
    project_id: str = ""
    prev_raw_template_id: int | None = None
    prev_parameters: dict[str, Any] | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    deleted_at: datetime | None = None
    # A nested stack's parent stack id and the parent's resource name (None: top level).
    owner_id: str | None = None
    owner_resource: str | None = None
    nested_depth: int = 0
    # The stack user domain's project its users live in (Heat's stack_user_project_id).
    stack_user_project_id: str | None = None

    @property
    def state(self) -> str:
        return f"{self.action}_{self.status}"


_STACK_FIELDS = tuple(stack_field.name for stack_field in fields(StackRecord))


def stack_record(row: Any) -> StackRecord:
    """A stack's record from a row of ``tables.stacks`` (each field is a column)."""
    return StackRecord(**{name: getattr(row, name) for name in _STACK_FIELDS})


@dataclass(slots=True)
class TemplateRecord:
    id: int
    template: dict[str, Any]
    files: dict[str, str]
    environment: dict[str, Any]


@dataclass(slots=True)
class ResourceRecord:
    id: int | None
    uuid: str
    stack_id: str
    name: str
    type: str
    action: str = "INIT"
    status: str = "COMPLETE"
    status_reason: str = ""
    physical_resource_id: str | None = None
    properties: dict[str, Any] | None = None
    attributes: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    definition: dict[str, Any] | None = None
    handler_token: Any = None
    hook: str | None = None
    current: bool = True
    replaces: int | None = None
    replaced_by: int | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def state(self) -> str:
        return f"{self.action}_{self.status}"

    @property
    def stored_id(self) -> int:
        """``id`` of a record the store has inserted: only a new record (``new_record``)
        before its insert has none."""
        assert self.id is not None, f"resource {self.name} has not been stored"
        return self.id


@dataclass(slots=True)
class EventRecord:
    id: int | None
    uuid: str
    stack_id: str
    resource_name: str
    physical_resource_id: str | None
    resource_type: str
    resource_action: str
    resource_status: str
    resource_status_reason: str
    created_at: datetime | None = None


@dataclass(slots=True)
class SnapshotRecord:
    id: str
    stack_id: str
    name: str | None
    status: str
    status_reason: str
    data: dict[str, Any] | None = None
    created_at: datetime | None = None


@dataclass(slots=True)
class SoftwareConfigRecord:
    """A software config (Heat's SoftwareConfig row): ``config`` is the stored body,
    {"config", "inputs", "outputs", "options"}; ``tenant`` the project that made it;
    ``shown`` the body as users see it when a hidden parameter's value is in it (masked),
    else None."""

    id: str
    name: str | None
    group: str | None
    config: dict[str, Any] | None
    tenant: str = ""
    created_at: datetime | None = None
    shown: dict[str, Any] | None = None


@dataclass(slots=True)
class SoftwareDeploymentRecord:
    """A software deployment (Heat's SoftwareDeployment row): config ``config_id``
    applied to server ``server_id``; ``tenant`` the project that made it."""

    id: str
    config_id: str
    server_id: str
    input_values: Any = None
    output_values: Any = None
    action: str | None = "INIT"
    status: str | None = "COMPLETE"
    status_reason: str | None = ""
    tenant: str = ""
    stack_user_project_id: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    # The input and output values as users see them when a hidden parameter's value is
    # in them (masked), else None.
    shown_input_values: Any = None
    shown_output_values: Any = None


@dataclass(slots=True)
class SignalRecord:
    """A signal a resource received: ``signal_id`` is the sender's id or its ordinal;
    ``ordinal`` its place among the resource's signals (1: the first)."""

    id: int
    stack_id: str
    resource_uuid: str
    signal_id: str
    details: Any
    created_at: datetime | None = None
    handled_at: datetime | None = None
    ordinal: int = 0


@dataclass(slots=True)
class SignalCredentialRecord:
    """A capability to signal one resource: only the SHA-256 of its secret is stored."""

    id: str
    stack_id: str
    resource_uuid: str
    secret_hash: str
    created_at: datetime | None = None
    revoked_at: datetime | None = None
    # None (or "signal"): an ordinary credential that may signal the resource;
    # "metadata": one that lets a server's agent read the server's deployments.
    purpose: str | None = None
