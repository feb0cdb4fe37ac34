"""The ``glance`` client plugin (openstacksdk's image proxy) and Heat's ``glance.image``
constraint."""

from __future__ import annotations

import uuid
from typing import Any

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin
from stoker.resources.openstack.constraints import LookupConstraint
from stoker.sdk.exceptions import EntityNotFound

__all__ = ["GlanceClientPlugin", "client_mapping", "constraint_mapping"]


class GlanceClientPlugin(OpenStackClientPlugin):
    """Glance through openstacksdk's ``connection.image``."""

    name = "glance"
    service_type = "image"
    proxy_name = "image"

    def find_image_by_name_or_id(self, image: str) -> str:
        return self.find_id("image", image)

    def _find(self, entity: str, name_or_id: str, find: Any) -> Any:
        if entity == "image" and find is None:
            find = self._find_image
        return super()._find(entity, name_or_id, find)

    def _find_image(self, name_or_id: str, ignore_missing: bool = False) -> Any:
        """openstacksdk's find_image asks for the value as an id, then lists by name.
        Glance's ids are UUIDs: a value that is not one is only listed by name, one
        request instead of two."""
        image = self.client()
        if _is_uuid(name_or_id):
            return image.find_image(name_or_id, ignore_missing=ignore_missing)
        found = self.one_match("image", name_or_id, image.images(name=name_or_id))
        if found is None:
            raise EntityNotFound("image", name_or_id)
        return found

    def allows_image_urls(self) -> bool:
        """The operator's ``allow_image_urls`` setting: from the settings this plugin was
        given, else the environment (``STOKER_ALLOW_IMAGE_URLS``); off unless set."""
        value = self.settings.get("allow_image_urls")
        if value is None:
            value = self.environ.get("STOKER_ALLOW_IMAGE_URLS", "")
        if isinstance(value, str):
            return value.strip().lower() in ("1", "true", "yes", "on")
        return bool(value)


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


class ImageConstraint(LookupConstraint):
    name, client_plugin_name, entity, listing = "glance.image", "glance", "image", "images"


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"glance": GlanceClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {ImageConstraint.name: ImageConstraint}
