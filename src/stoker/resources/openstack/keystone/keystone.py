"""``KeystoneResource``: what Heat's Keystone resource types share.

Owns: the default name (the physical resource name, also when an update empties the
``name`` property, as Heat does), reading the live object as Keystone shows it (``show``,
attributes, ``check``), delete that tolerates "already gone", and finding what an
interrupted create made by the physical resource name (``find_created``).

Keystone's default policy lets administrators only manage these objects; Heat's
``resource_types:OS::Keystone::*`` rule (``api/policy.py``) refuses the types to anyone
else before anything is asked of Keystone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar
from urllib import parse

from stoker.sdk import support
from stoker.sdk.resource import Resource

__all__ = ["KeystoneResource", "keystone_v3"]

def keystone_v3(version: str) -> support.SupportStatus:
    """Heat's support status of a Keystone type: since ``version``, on Keystone v3."""
    return support.SupportStatus(version=version, message="Supported versions: keystone v3")


class KeystoneResource(Resource):
    """Base of the Keystone types: ``entity`` is openstacksdk's name for the object
    (``project``), ``collection`` the API's path (``projects``)."""

    default_client_name = "keystone"
    collection: ClassVar[str] = ""
    # The property that names the object (None: the object has no name).
    name_property: ClassVar[str | None] = "name"

    def given(self, key: str) -> Any:
        return self.properties.resolved().get(key)

    def object_name(self, name: Any = None) -> str:
        """The name to send: ``name`` (or the property's value), else the physical name."""
        if name is None and self.name_property is not None:
            name = self.given(self.name_property)
        return name or self.physical_resource_name()

    def changed_name(self, prop_diff: Any) -> dict[str, str]:
        """``{"name": ...}`` when the update changes the name (emptied: the physical one)."""
        if self.name_property is None or self.name_property not in prop_diff:
            return {}
        return {"name": prop_diff[self.name_property] or self.physical_resource_name()}

    # -- the live object ---------------------------------------------------------------

    def path(self) -> str:
        """The object's path in Keystone's API (its id quoted: a region's may hold "%")."""
        return f"/{self.collection}/{parse.quote(str(self.resource_id), safe='')}"

    def live(self) -> dict[str, Any]:
        """The object as Keystone shows it (its extra fields too)."""
        answer = self.client_plugin().send("GET", self.path())
        return dict(answer.get(self.entity) or {})

    def handle_check(self) -> None:
        self.live()

    def create_object(self, create: Callable[[], str]) -> str:
        """``create()`` (a POST, answering the new id) for an object whose name Keystone
        does not keep unique: when no answer came, the object the physical resource name
        finds (it was made) or, if none, ``create()`` again."""
        return self.client_plugin().create_or_find(create, self.find_created)

    def keystone(self, call: Callable[[], Any]) -> Any:
        """``call`` (a request safe to send twice: ``KeystoneClientPlugin.repeatable``)."""
        return self.client_plugin().repeatable(call)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        shown = self.live()
        shown.pop("links", None)
        return shown

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        return self.live().get(name)

    # -- delete and crash safety -----------------------------------------------------------

    def handle_delete(self) -> Any:
        if self.resource_id is None:
            return None
        try:
            self.client_plugin().repeatable(self.delete_object)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return None
        return self.resource_id

    def delete_object(self) -> None:
        getattr(self.client(), f"delete_{self.entity}")(self.resource_id, ignore_missing=False)

    def find_created(self) -> str | None:
        """The object an interrupted create made, by the physical resource name (never
        by a name the template gave: that object may be someone else's)."""
        if self.name_property is None or self.entity is None or self.given(self.name_property):
            return None
        name = self.physical_resource_name()
        listing = getattr(self.client(), self.entity + "s")(name=name)
        found = [item for item in listing if item.name == name]
        return str(found[0].id) if len(found) == 1 else None
