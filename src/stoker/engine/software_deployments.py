"""The stored software deployments: ``sdk.software_config.SoftwareDeployments`` over
the store.

One implementation serves both sides, as for configs (``engine.software_configs``): the
engine hands it to plugins (the hooks' ``software_deployments``, for
OS::Heat::SoftwareDeployment and its kin) and the API's ``/software_deployments`` uses
it. Heat's rules are the SDK's pure functions (``new_deployment``,
``deployment_changes``, ``signal_outcome``, ``deployment_metadata``), shared with
``MemorySoftwareDeployments``; what is here is only how they meet the store.

Each row records the project that made it, and a project finds only the deployments it
made or whose stack users it holds (Heat's tenant and stack_user_project_id), and
deploys only its own configs; another project's deployment is not found, as a missing
one is not; an admin finds every project's. A project deploys to no server of another
project's stacks (the server is not found, as a deployment for it must never reach that
server's agent) and names no stack user project but its own (issue 26): a deployment's
``stack_user_project_id`` makes it another project's too, so a caller who could name
any project would write into that project's lists and servers' metadata. A cloud admin
keeps Heat's powers: any server, any stack user project. What it must not do: push
metadata to servers or record events (its callers do).

Input values a stack's deployment resource gives may carry what the stack's hidden
parameters produced, and the outputs the server signals may echo them (a script's
stdout). The row keeps, beside them (sealed at rest), the values as users see them
(``shown_input_values``, ``shown_output_values``); the API answers with those
(``masked``), and with the derived configs as users see them, while the engine and the
server's agent (its metadata URL) get the values themselves.
"""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Any

from stoker.engine.software_configs import present as present_config
from stoker.masking import HiddenValues
from stoker.sdk.exceptions import EntityNotFound, StokerError, ValidationError
from stoker.sdk.software_config import (
    IN_PROGRESS,
    DeploymentConfigNotFoundError,
    SoftwareDeploymentNotFoundError,
    deployment_changes,
    deployment_metadata,
    deployment_view,
    new_deployment,
    signal_outcome,
)
from stoker.store import Store
from stoker.store.records import SoftwareDeploymentRecord

# Heat's software_deployment.tenant column.
MAX_TENANT_LENGTH = 64


class DeploymentServerNotFoundError(EntityNotFound):
    """A deployment names a server of another project's stack: not found (404), as a
    stack of another project is not."""

    def __init__(self, server_id: str):
        super().__init__("Server", server_id)


class StackUserProjectError(StokerError):
    """A deployment names a stack user project that is not the caller's own project
    (403: only a cloud admin may make a deployment another project's)."""

    def __init__(self, project_id: str):
        super().__init__(
            f'The software deployment\'s "stack_user_project_id" ({project_id}) is not your project: '
            "only a cloud admin may make a deployment for another project's stack users"
        )
        self.project_id = project_id


class StoredSoftwareDeployments:
    """Software deployments in ``store`` of project ``tenant``, or of the project of
    stack ``stack_id`` (looked up when first needed): new ones are recorded as made by
    it, and only its own are found (``admin``: every project's). ``hidden``: the stack's
    hidden values, masked in the input values shown to users; ``masked``: answers are
    for users (the API), with those values masked."""

    def __init__(
        self,
        store: Store,
        tenant: str | None = None,
        stack_id: str | None = None,
        admin: bool = False,
        hidden: HiddenValues | None = None,
        masked: bool = False,
    ):
        self.store = store
        self._tenant = tenant
        self._stack_id = stack_id
        self._admin = admin
        self._hidden = hidden if hidden is not None else HiddenValues()
        self._masked = masked

    def _project(self) -> str:
        if self._tenant is None:
            stack = self.store.get_stack(self._stack_id) if self._stack_id is not None else None
            self._tenant = stack.project_id if stack is not None else ""
        return self._tenant[:MAX_TENANT_LENGTH]

    def _stack_users(self) -> str | None:
        """The stack user project of the stack these deployments are made for (a stack's
        own deployment is its users' too, as Heat's SoftwareDeployment makes it)."""
        stack = self.store.get_stack(self._stack_id) if self._stack_id is not None else None
        return stack.stack_user_project_id if stack is not None else None

    def _config(self, config_id: str, masked: bool = False) -> dict[str, Any] | None:
        """A deployment's config (as Heat joins it: the deployment was allowed it);
        ``masked``: as users see it."""
        record = self.store.software_configs.get_software_config(config_id)
        return present_config(record, masked=masked) if record is not None else None

    def _view(self, record: SoftwareDeploymentRecord) -> dict[str, Any]:
        view = deployment_view(record)
        if self._masked:
            for field in ("input_values", "output_values"):
                shown = getattr(record, f"shown_{field}")
                if shown is not None:
                    view[field] = shown
        return view

    def _with_shown(self, changes: dict[str, Any]) -> dict[str, Any]:
        """``changes`` with what users see of the values they set made again (an
        update through the API, which knows no stack, shows them as given)."""
        for field in ("input_values", "output_values"):
            if field in changes:
                changes[f"shown_{field}"] = self._hidden.shown(changes[field])
        return changes

    def _deployable(self, config_id: str) -> bool:
        """Whether the project may deploy the config: it exists and is its own."""
        record = self.store.software_configs.get_software_config(config_id)
        return record is not None and (self._admin or record.tenant == self._project())

    def _check_server(self, server_id: str) -> None:
        """A server of another project's stack is not found; a server stoker holds for
        no stack (one made outside it) may be deployed to, as in Heat."""
        if self._admin:
            return
        owner = self.store.software_configs.physical_id_owner(server_id)
        if owner is not None and owner != self._project():
            raise DeploymentServerNotFoundError(server_id)

    def _scope(self) -> str | None:
        return None if self._admin else self._project()

    def _record(self, deployment_id: str) -> SoftwareDeploymentRecord:
        record = self.store.software_configs.get_software_deployment(deployment_id)
        if record is None or not (self._admin or self._project() in (record.tenant, record.stack_user_project_id)):
            raise SoftwareDeploymentNotFoundError(deployment_id)  # another project's, as a missing one
        return record

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
        fields = new_deployment(
            server_id=server_id, config_id=config_id, input_values=input_values, action=action, status=status,
            status_reason=status_reason, deployment_id=deployment_id, stack_user_project_id=stack_user_project_id,
        )  # fmt: skip
        stack_users = fields["stack_user_project_id"]
        if stack_users is not None and not self._admin and stack_users not in (self._project(), self._stack_users()):
            raise StackUserProjectError(stack_users)
        self._check_server(fields["server_id"])
        if not self._deployable(fields["config_id"]):
            raise DeploymentConfigNotFoundError(fields["config_id"])
        record = SoftwareDeploymentRecord(**fields, tenant=self._project(), shown_input_values=self._hidden.shown(fields["input_values"]))
        if not self.store.software_configs.create_software_deployment(record):
            raise ValidationError(f'"id": a software deployment with id {record.id} exists already')
        # Answered as stored: PostgreSQL's JSON gives a number back as it keeps it
        # (1e300 is an integer there), and a create must show what a show will.
        return self._view(self.store.software_configs.get_software_deployment(record.id) or record)

    def show(self, deployment_id: str) -> dict[str, Any]:
        return self._view(self._record(deployment_id))

    def list(self, server_id: str | None = None) -> list[dict[str, Any]]:
        # Heat filters only by a server id that is given and not empty.
        return [self._view(record) for record in self.store.software_configs.list_software_deployments(server_id=server_id or None, project=self._scope())]

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
        changes = deployment_changes(
            config_id=config_id, input_values=input_values, output_values=output_values, action=action, status=status,
            status_reason=status_reason, updated_at=updated_at,
        )  # fmt: skip
        self._record(deployment_id)  # a missing deployment is a 404 before a bad config is a 400
        if "config_id" in changes and not self._deployable(changes["config_id"]):
            raise DeploymentConfigNotFoundError(changes["config_id"])
        record = self.store.software_configs.update_software_deployment(deployment_id, **self._with_shown(changes))
        if record is None:
            raise SoftwareDeploymentNotFoundError(deployment_id)
        return self._view(record)

    def delete(self, deployment_id: str) -> None:
        self._record(deployment_id)
        if not self.store.software_configs.delete_software_deployment(deployment_id):
            raise SoftwareDeploymentNotFoundError(deployment_id)

    def signal(self, deployment_id: str, details: Any, updated_at: datetime | str | None = None) -> str | None:
        record = self._record(deployment_id)
        outcome = signal_outcome(deployment_id, record.status, record.output_values, self._config(record.config_id), details)
        if outcome is None:
            return None
        changes = deployment_changes(output_values=outcome.output_values, status=outcome.status, status_reason=outcome.status_reason, updated_at=updated_at)
        # Only while still IN_PROGRESS: of two signals racing, the second finds it done.
        if self.store.software_configs.update_software_deployment(deployment_id, when_status=IN_PROGRESS, **self._with_shown(changes)) is None:
            return None
        return outcome.event_reason

    def metadata(self, server_id: str) -> builtins.list[dict[str, Any]]:  # ``list`` here is the method above
        if not server_id:
            raise ValidationError("server_id must be specified")
        self._check_server(server_id)
        records = self.store.software_configs.list_software_deployments(server_id=server_id, project=self._scope())
        return deployment_metadata([self._config(record.config_id, masked=self._masked) for record in records])
