"""The stored software configs: ``sdk.software_config.SoftwareConfigs`` over the store.

One implementation serves both sides: the engine hands it to plugins (the hooks'
``software_configs``, for OS::Heat::SoftwareConfig and its kin) and the API's
``/software_configs`` uses it, so a config is checked and answered the same way
whichever made it. A config is immutable: there is create, show, list and delete.

Each row records the project that made it, and a project reads only its own configs
(Heat's software_config_get and _get_all): another project's config is not found, for
the API's caller as for a stack's resources; an admin reads every project's.

A config a stack's resource makes may carry what the stack's hidden parameters produced
(a deployment's derived config holds its input values). The row keeps, beside the body
(sealed at rest), the body as users see it, those values masked (``shown``); the API
answers with it (``masked``), while the engine and the server's agent get the body.
"""

from __future__ import annotations

from typing import Any

from stoker.identifiers import new_id
from stoker.masking import HiddenValues
from stoker.sdk.software_config import SoftwareConfigNotFoundError, config_body, format_config
from stoker.store import Store
from stoker.store.records import SoftwareConfigRecord

# Heat's software_config name and group columns.
MAX_NAME_LENGTH = 255


class StoredSoftwareConfigs:
    """Software configs in ``store`` of project ``tenant``, or of the project of stack
    ``stack_id`` (looked up when first needed): new ones are recorded as made by it, and
    only its own are found (``admin``: every project's). ``hidden``: the stack's hidden
    values, masked in what new configs show users; ``masked``: answers are for users
    (the API), with those values masked."""

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
        return self._tenant

    def create(
        self,
        *,
        name: str | None,
        group: str | None,
        config: Any,
        inputs: Any = None,
        outputs: Any = None,
        options: Any = None,
    ) -> dict[str, Any]:
        body = config_body(config, inputs, outputs, options)
        record = SoftwareConfigRecord(
            id=new_id(), name=_bounded(name), group=_bounded(group), config=body, tenant=self._project(), shown=self._hidden.shown(body)
        )
        self.store.software_configs.create_software_config(record)
        return present(record, masked=self._masked)

    def _record(self, config_id: str) -> SoftwareConfigRecord:
        record = self.store.software_configs.get_software_config(config_id)
        if record is None or not (self._admin or record.tenant == self._project()):
            raise SoftwareConfigNotFoundError(config_id)  # another project's, as a missing one
        return record

    def show(self, config_id: str) -> dict[str, Any]:
        return present(self._record(config_id), masked=self._masked)

    def list(self, limit: int | None = None, marker: str | None = None) -> list[dict[str, Any]]:
        """Summaries (id, name, group, creation_time), newest first."""
        tenant = None if self._admin else self._project()
        return [present(record, detail=False) for record in self.store.software_configs.list_software_configs(limit=limit, marker=marker, tenant=tenant)]

    def find_by_name(self, name: str) -> str | None:
        found = self.store.software_configs.list_software_configs(limit=1, name=_bounded(name), tenant=self._project())
        return found[0].id if found else None

    def delete(self, config_id: str) -> None:
        self._record(config_id)
        if not self.store.software_configs.delete_software_config(config_id):
            raise SoftwareConfigNotFoundError(config_id)


def present(record: SoftwareConfigRecord, detail: bool = True, masked: bool = False) -> dict[str, Any]:
    """A config in Heat's shape; ``masked``: as users see it (what a hidden parameter
    produced masked), else as stored (for the engine and the server's agent)."""
    body = record.shown if masked and record.shown is not None else record.config
    return format_config(record.id, record.name, record.group, body, record.created_at, detail)


def _bounded(text: str | None) -> str | None:
    # A resource's physical name is at most 255 characters already; Heat's columns
    # would refuse a longer one, so the end is cut off rather than the row refused.
    return text if text is None or len(text) <= MAX_NAME_LENGTH else text[:MAX_NAME_LENGTH]
