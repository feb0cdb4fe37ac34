"""The schema. Alembic migrations in ``migrations/`` must build exactly this (tested)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from stoker.store.sealing import JSONDocument, SealedJSON

metadata = sa.MetaData()

# Row identities are never reused: a write that names a row by id can never land in a
# row made later for something else. PostgreSQL's sequences never go back; SQLite needs
# AUTOINCREMENT for that (without it, the id of a deleted last row is handed out again).
NEVER_REUSED: dict[str, Any] = {"sqlite_autoincrement": True}

JSON = JSONDocument()

raw_templates = sa.Table(
    "raw_templates",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    # A nested stack's template may hold resolved values (a group's members' properties).
    sa.Column("template", SealedJSON("stack template"), nullable=False),
    # The files a request sent: environment files among them (what ``-e`` and heatclient
    # send as ``environment_files``) hold parameters' values, hidden ones included.
    sa.Column("files", SealedJSON("stack files"), nullable=False),
    # The environment holds the values of parameters, hidden ones included.
    sa.Column("environment", SealedJSON("stack environment"), nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
    **NEVER_REUSED,
)

stacks = sa.Table(
    "stacks",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("name", sa.String(255), nullable=False, index=True),
    sa.Column("action", sa.String(32), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("status_reason", sa.Text, nullable=False, default=""),
    sa.Column("raw_template_id", sa.Integer, sa.ForeignKey("raw_templates.id"), nullable=False),
    sa.Column("prev_raw_template_id", sa.Integer, sa.ForeignKey("raw_templates.id"), nullable=True),
    sa.Column("parameters", SealedJSON("stack parameters"), nullable=False),
    # The parameters before the last update began (a rollback returns to them).
    sa.Column("prev_parameters", SealedJSON("stack parameters"), nullable=True),
    sa.Column("disable_rollback", sa.Boolean, nullable=False, default=True),
    sa.Column("timeout_mins", sa.Integer, nullable=True),
    sa.Column("tags", JSON, nullable=False),
    sa.Column("project_id", sa.String(64), nullable=False, default=""),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=True),
    sa.Column("deleted_at", sa.DateTime, nullable=True, index=True),
    # A nested stack: the stack and resource that own it, and how deep it is (top: 0).
    sa.Column("owner_id", sa.String(36), nullable=True, index=True),
    sa.Column("owner_resource", sa.String(255), nullable=True),
    sa.Column("nested_depth", sa.Integer, nullable=False, default=0, server_default="0"),
    # Heat's stack_user_project_id: the project of the stack user domain its users live
    # in (None: none made, or the stack's own project, Heat's legacy placement).
    sa.Column("stack_user_project_id", sa.String(64), nullable=True),
)
# And the partial unique index uq_stacks_live_name, in ``schema()``.

resources = sa.Table(
    "resources",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("uuid", sa.String(36), nullable=False, unique=True),
    sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("type", sa.String(255), nullable=False),
    sa.Column("action", sa.String(32), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("status_reason", sa.Text, nullable=False, default=""),
    # Indexed: a software deployment's server is looked up by it (whose server it is).
    sa.Column("physical_resource_id", sa.String(255), nullable=True, index=True),
    # What a resource resolved and computed may carry a hidden parameter's value.
    sa.Column("properties", SealedJSON("resource properties"), nullable=True),
    sa.Column("attributes", SealedJSON("resource attributes"), nullable=True),
    # A plugin's data: its redacted values are sealed one by one (sealing.py) whatever
    # the setting, and the whole with the values made from parameters.
    sa.Column("data", SealedJSON("resource data"), nullable=True),
    # The definition as rendered: a group member's holds its resolved properties.
    sa.Column("definition", SealedJSON("resource definition"), nullable=True),
    sa.Column("handler_token", JSON, nullable=True),
    # The breakpoint (hook) the resource waits at, e.g. "pre-create"; cleared by a signal.
    sa.Column("hook", sa.String(16), nullable=True),
    sa.Column("current", sa.Boolean, nullable=False, default=True),
    sa.Column("replaces", sa.Integer, nullable=True),
    sa.Column("replaced_by", sa.Integer, nullable=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=True),
    **NEVER_REUSED,
)

events = sa.Table(
    "events",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("uuid", sa.String(36), nullable=False, unique=True),
    sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("resource_name", sa.String(255), nullable=False),
    sa.Column("physical_resource_id", sa.String(255), nullable=True),
    sa.Column("resource_type", sa.String(255), nullable=False),
    sa.Column("resource_action", sa.String(32), nullable=False),
    sa.Column("resource_status", sa.String(32), nullable=False),
    sa.Column("resource_status_reason", sa.Text, nullable=False, default=""),
    sa.Column("created_at", sa.DateTime, nullable=False),
    # PostgreSQL: the id of the transaction that wrote the row (pg_current_xact_id()),
    # set by the store's insert; SQLite, whose writers commit one at a time: 0. With the
    # id it orders the event stream so that a reader never skips a row committed late
    # (store/event_feed.py); the index serves the stream's one query per poll.
    sa.Column("txid", sa.BigInteger, nullable=False, server_default="0"),
    sa.Index("ix_events_stream", "stack_id", "txid", "id"),
    **NEVER_REUSED,
)

# One row per stack while a job acts on it. ``expires_at`` is a lease the holder renews
# (heartbeat); an expired lease, or a holder process known to be dead on this host, may
# be taken over. ``token`` is new at every acquisition (the fencing token): the store
# refuses a job's writes once the row no longer carries its token. ``pid`` and ``host``
# identify the holder.
stack_locks = sa.Table(
    "stack_locks",
    metadata,
    sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("engine_id", sa.String(36), nullable=False),
    sa.Column("token", sa.String(36), nullable=False),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("expires_at", sa.DateTime, nullable=False),
    # A user asked to cancel the action: "rollback" or "no_rollback", or a delete asked
    # the action to stop ("delete"); the holder polls it.
    sa.Column("cancel", sa.String(16), nullable=True),
)

# Actions the API accepted for workers (workers.py), each committed with its job's
# enqueue and deleted in the transaction that records the action IN_PROGRESS (or when
# its job ends without starting it). While the row exists the action has not started:
# a job whose worker died is handed back to the queue, and only a job whose row still
# exists may start the action, so it starts once.
accepted_actions = sa.Table(
    "accepted_actions",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), nullable=False),
    sa.Column("action", sa.String(16), nullable=False),
    # procrastinate's job (procrastinate_jobs.id) that runs it.
    sa.Column("job_id", sa.BigInteger, nullable=False, unique=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
)

snapshots = sa.Table(
    "snapshots",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("name", sa.String(255), nullable=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("status_reason", sa.Text, nullable=False),
    sa.Column("data", SealedJSON("snapshot data"), nullable=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
)

# Heat's software configs (``heat/db/models.py`` SoftwareConfig): immutable once made.
# ``config`` holds what Heat keeps in its one JSON column: {"config", "inputs",
# "outputs", "options"}. ``tenant`` is the project that made it (the API's tenant, or
# the stack's project for a config a resource made). A config a stack's resource made
# may carry what a hidden parameter produced (a derived config's input values, a script
# made with str_replace): ``config`` is sealed, and ``shown`` is the body as users see
# it, those values masked (NULL: shown as stored, it has none).
software_config = sa.Table(
    "software_config",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("name", sa.String(255), nullable=True),
    sa.Column("group", sa.String(255), nullable=True),
    sa.Column("config", SealedJSON("software config"), nullable=True),
    sa.Column("shown", SealedJSON("software config"), nullable=True),
    sa.Column("tenant", sa.String(64), nullable=False, index=True),
    sa.Column("created_at", sa.DateTime, nullable=False, index=True),
)

# Signals sent to a resource (a wait condition handle's "SUCCESS"/"FAILURE"), kept as
# rows so that one arriving while no engine runs waits for the next. ``signal_id`` is
# the sender's id (Heat's "id", CFN's "UniqueId") or, without one, the signal's ordinal
# among the resource's signals; a repeated id is the same signal, not a second one.
signals = sa.Table(
    "signals",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), nullable=False, index=True),
    # The uuid of the resource's record (a replacement is a new record: new signals).
    sa.Column("resource_uuid", sa.String(36), nullable=False),
    sa.Column("signal_id", sa.String(255), nullable=False),
    sa.Column("details", JSON, nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("handled_at", sa.DateTime, nullable=True),
    sa.UniqueConstraint("resource_uuid", "signal_id", name="uq_signals_resource_signal"),
    **NEVER_REUSED,
)

# Capabilities to signal one resource (engine/signals.py): only the SHA-256 of each
# secret is kept; the id names the credential in a signal URL. Revoked when the
# resource is deleted or issues a new one.
signal_credentials = sa.Table(
    "signal_credentials",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("resource_uuid", sa.String(36), nullable=False, index=True),
    sa.Column("secret_hash", sa.String(64), nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("revoked_at", sa.DateTime, nullable=True),
    # NULL or "signal": the credential may signal its resource; "metadata": it lets a
    # server's agent read the server's deployments. Issuing one revokes only those of
    # its own purpose.
    sa.Column("purpose", sa.String(32), nullable=True),
)

# Heat's software deployments (``heat/db/models.py`` SoftwareDeployment): one config
# applied to one server. ``config_id`` has no foreign key: a deployment outlives its
# config (the metadata of its server leaves a missing config out). ``tenant`` is the
# project that made it; ``stack_user_project_id`` the project of the stack's users.
# ``shown_input_values``, ``shown_output_values``: the values as users see them, what a
# hidden parameter produced masked (NULL: shown as stored, they have none; an output
# that echoes an input, a script's stdout).
software_deployments = sa.Table(
    "software_deployments",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("config_id", sa.String(36), nullable=False, index=True),
    sa.Column("server_id", sa.String(255), nullable=False, index=True),
    sa.Column("input_values", SealedJSON("software deployment inputs"), nullable=True),
    sa.Column("shown_input_values", SealedJSON("software deployment inputs"), nullable=True),
    sa.Column("output_values", SealedJSON("software deployment outputs"), nullable=True),
    sa.Column("shown_output_values", SealedJSON("software deployment outputs"), nullable=True),
    sa.Column("action", sa.String(255), nullable=True),
    sa.Column("status", sa.String(255), nullable=True),
    sa.Column("status_reason", sa.Text, nullable=True),
    sa.Column("tenant", sa.String(64), nullable=False),
    sa.Column("stack_user_project_id", sa.String(64), nullable=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=True),
)

# The credential stoker acts for a top-level stack's user with, in keystone mode
# (clouds/trusts.py): ``kind`` "trust", ``credential`` the trust's id, its
# trustor and project, always sealed. Nested stacks act with their root's. Deleted with
# the stack (its trust with it, where Keystone lets stoker).
stack_credentials = sa.Table(
    "stack_credentials",
    metadata,
    sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("credential", SealedJSON("stack credentials", always=True), nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
)

# The last drift detection of a stack (``stoker stack drift``, docs/drift.md): when it ran,
# its counts by status and every resource's result, hidden values already masked. One row
# per stack, replaced by the next detection.
stack_drift = sa.Table(
    "stack_drift",
    metadata,
    sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("detected_at", sa.DateTime, nullable=False),
    sa.Column("summary", JSON, nullable=False),
    sa.Column("resources", JSON, nullable=False),
)

# Heat's service table (``heat/db/models.py`` Service): one row per engine serving the
# API (``stoker serve``), written when it starts and reported (``updated_at``) every
# ``report_interval`` seconds; soft-deleted when it stops. A row not reported for two
# intervals is an engine that is down; another engine on the host prunes it after three.
services = sa.Table(
    "services",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("engine_id", sa.String(36), nullable=False),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("hostname", sa.String(255), nullable=False),
    sa.Column("binary", sa.String(255), nullable=False),
    sa.Column("topic", sa.String(255), nullable=False),
    sa.Column("report_interval", sa.Integer, nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=True),
    sa.Column("deleted_at", sa.DateTime, nullable=True),
)


def schema() -> sa.MetaData:
    """``metadata`` whole, as the migrations build it (for comparing or creating a schema).

    It adds the partial unique index of live top-level stack names: a name belongs to one
    live top-level stack of a project, and the database decides between two creates racing
    for it (nested stacks' names carry a random suffix). It is declared here, on first need,
    because its PostgreSQL form loads SQLAlchemy's PostgreSQL dialect with all its drivers
    (~25 ms), which the embedded command's reads on SQLite do not otherwise need; the
    schema itself is made by the migrations only.
    """
    if not any(index.name == "uq_stacks_live_name" for index in stacks.indexes):
        live = sa.text("deleted_at IS NULL AND owner_id IS NULL")
        sa.Index(
            "uq_stacks_live_name",
            stacks.c.project_id,
            stacks.c.name,
            unique=True,
            sqlite_where=live,
            postgresql_where=live,
        )
    return metadata


def inserted_id(result: sa.CursorResult[Any]) -> int:
    """The id of the row a single-row INSERT into one of these tables made."""
    key = result.inserted_primary_key
    assert key is not None  # SQLAlchemy reports it for a single-row INSERT
    return int(key[0])
