"""``OctaviaBase``: what Heat's load-balancing types with a provisioning status share
(LoadBalancer, Listener, Pool, PoolMember, HealthMonitor, L7Policy, L7Rule).

Owns, as Heat does them: the request made from the properties (``None`` left out, the
physical resource name as the default name, Heat's property names turned into Octavia's
fields), the provisioning-status waits (PENDING_* until ACTIVE; ERROR is a failure), the
retries while the load balancer is immutable (Octavia answers 409 to any change of a load
balancer or its children while one is PENDING_*: the request is sent again at the next
poll), update in place of the changed properties, delete that tolerates "already gone"
and waits for the object to go, ``check`` (reads the live object), ``show`` and the
attributes read from the live object.

Crash safety: the create is sent from the first poll, and each poll before the physical
id is known first looks for what an interrupted create made (``find_created``): a
restarted engine polling on adopts it instead of sending the create again, so nothing is
orphaned (and a member or monitor, which Octavia allows once, is not refused for ever).

Must not: wait itself (the engine polls), or choose Octavia's API version (openstacksdk).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from stoker.sdk import support
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource

__all__ = ["OctaviaBase"]

ACTIVE, DELETED, ERROR = "ACTIVE", "DELETED", "ERROR"


class OctaviaBase(Resource):
    """Base of the Octavia types whose objects have a ``provisioning_status``."""

    support_status = support.SupportStatus(version="10.0.0")
    default_client_name = "octavia"
    # openstacksdk's noun: create_<sdk_name>, get_<sdk_name>, ... on the load-balancer proxy.
    sdk_name: ClassVar[str] = ""
    # The proxy's listing of them, where it is not ``<sdk_name>s``.
    sdk_plural: ClassVar[str] = ""
    # What Octavia calls the object in messages.
    noun: ClassVar[str] = ""
    # Property -> Octavia's field, where they differ.
    FIELDS: ClassVar[Mapping[str, str]] = {}
    # Properties that are not fields of the request (the parent of a member or rule).
    NOT_SENT: ClassVar[tuple[str, ...]] = ()
    # Whether an unnamed object gets the physical resource name (Heat's types with a name).
    named: ClassVar[bool] = True

    def given(self, key: str) -> Any:
        return self.properties.resolved().get(key)

    def place(self, key: str) -> str:
        """Where a property of this resource is, for an error message."""
        return f"resources.{self.name}.properties.{key}"

    # -- the request --------------------------------------------------------------------

    def fields(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Octavia's fields for these property values (``None`` left out)."""
        return {
            self.FIELDS.get(key, key): value
            for key, value in values.items()
            if value is not None and key not in self.NOT_SENT
        }

    def create_arguments(self) -> dict[str, Any]:
        arguments = self.fields(self.properties.resolved())
        if self.named and not arguments.get("name"):
            arguments["name"] = self.physical_resource_name()
        return arguments

    def update_arguments(self, prop_diff: Mapping[str, Any]) -> dict[str, Any]:
        changes = {self.FIELDS.get(key, key): value for key, value in prop_diff.items()}
        if self.named and "name" in changes and changes["name"] is None:
            changes["name"] = self.physical_resource_name()
        return changes

    # -- the object (subclasses whose objects live under a parent pass it here) ----------

    def parent(self) -> tuple[Any, ...]:
        return ()

    def _call(self, operation: str, *arguments: Any, **fields: Any) -> Any:
        method = getattr(self.client(), f"{operation}_{self.sdk_name}")
        return method(*arguments, **fields)

    def live(self) -> Any:
        return self._call("get", self.resource_id, *self.parent())

    def _create(self, arguments: Mapping[str, Any]) -> Any:
        return self._call("create", *self.parent(), **arguments)

    def _update(self, changes: Mapping[str, Any]) -> Any:
        return self._call("update", self.resource_id, *self.parent(), **changes)

    def _delete(self) -> None:
        self._call("delete", self.resource_id, *self.parent(), ignore_missing=False)

    def candidates(self) -> Iterable[Any]:
        """The objects an interrupted create may have made (named types: by name)."""
        lister = getattr(self.client(), self.sdk_plural or f"{self.sdk_name}s")
        return lister(name=self.physical_resource_name())

    def is_mine(self, candidate: Any) -> bool:
        """A named type's object bears the physical resource name; an unnamed one's has
        every field this resource cannot update in place as asked (so the object a
        replacement replaces, which differs in one of them, is never taken for it)."""
        if self.named:
            return getattr(candidate, "name", None) == self.physical_resource_name()
        live = candidate.to_dict(original_names=True, headers=False, computed=False)
        fixed = {
            key: value
            for key, value in self.properties.resolved().items()
            if not self.properties_schema[key].update_allowed
        }
        return all(live.get(key) == value for key, value in self.fields(fixed).items())

    def find_created(self) -> str | None:
        """The object an interrupted create made: for a named type, the one named with
        the physical resource name (only when the template names none: a user's name
        need not be unique); subclasses without names match their fields."""
        if self.named and self.given("name"):
            return None
        found = [candidate for candidate in self.candidates() if self.is_mine(candidate)]
        return str(found[0].id) if len(found) == 1 else None

    # -- status -------------------------------------------------------------------------

    def _status_is(self, expected: str) -> bool:
        live = self.client_plugin().read(self.live)
        status = getattr(live, "provisioning_status", None)
        if status == ERROR:
            operating = getattr(live, "operating_status", None)
            raise ResourceFailure(
                f'Went to status ERROR due to "Octavia set the {self.noun} {self.resource_id} '
                f'to provisioning_status ERROR (operating_status {operating})"'
            )
        return status == expected

    def _gone(self) -> bool:
        try:
            return self._status_is(DELETED)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return True

    # -- create -------------------------------------------------------------------------

    def handle_create(self) -> dict[str, Any]:
        # The request is sent from the first poll, which retries it while the load
        # balancer is immutable (409), as Heat does.
        return self.create_arguments()

    def check_create_complete(self, token: Any) -> bool:
        if self.resource_id is None:
            found = self.find_created()
            if found is None:
                try:
                    found = self._create(token).id
                except Exception as error:  # noqa: BLE001 - openstacksdk's types
                    if self.client_plugin().is_conflict(error):
                        return False
                    raise
            self.resource_id_set(found)
        return self._status_is(ACTIVE)

    # -- update -------------------------------------------------------------------------

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> dict[str, Any]:
        self._update_sent = False
        return self.update_arguments(prop_diff) if prop_diff else {}

    def check_update_complete(self, token: Any) -> bool:
        if not token:
            return True
        if not getattr(self, "_update_sent", False):
            try:
                self._update(token)
            except Exception as error:  # noqa: BLE001 - openstacksdk's types
                if self.client_plugin().is_conflict(error):
                    return False
                raise
            self._update_sent = True
        return self._status_is(ACTIVE)

    # -- delete -------------------------------------------------------------------------

    def handle_delete(self) -> bool:
        self._delete_sent = False
        return self.resource_id is not None

    def check_delete_complete(self, token: Any) -> bool:
        if self.resource_id is None:
            return True
        if not getattr(self, "_delete_sent", False):
            try:
                self._delete()
            except Exception as error:  # noqa: BLE001 - openstacksdk's types
                plugin = self.client_plugin()
                if plugin.is_conflict(error):
                    return self._gone()
                if plugin.is_not_found(error):
                    return True
                raise
            self._delete_sent = True
        return self._gone()

    # -- check, show, attributes ----------------------------------------------------------

    def handle_check(self) -> None:
        """The live object must exist and not be in ERROR."""
        if self.resource_id is not None:
            self._status_is(ACTIVE)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return self.live().to_dict(original_names=True, headers=False, computed=False)

    def _resolve_attribute(self, name: str) -> Any:
        shown = self._show_resource()
        return None if shown is None else shown.get(name)
