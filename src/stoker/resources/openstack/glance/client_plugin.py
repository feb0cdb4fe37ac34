"""The ``glance`` client plugin (openstacksdk's image proxy) and Heat's ``glance.image``
constraint."""

from __future__ import annotations

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin
from stoker.resources.openstack.constraints import LookupConstraint

__all__ = ["GlanceClientPlugin", "client_mapping", "constraint_mapping"]


class GlanceClientPlugin(OpenStackClientPlugin):
    """Glance through openstacksdk's ``connection.image``."""

    name = "glance"
    service_type = "image"
    proxy_name = "image"

    def find_image_by_name_or_id(self, image: str) -> str:
        return self.find_id("image", image)

    def allows_image_urls(self) -> bool:
        """The operator's ``allow_image_urls`` setting: from the settings this plugin was
        given, else the environment (``STOKER_ALLOW_IMAGE_URLS``); off unless set."""
        value = self.settings.get("allow_image_urls")
        if value is None:
            value = self.environ.get("STOKER_ALLOW_IMAGE_URLS", "")
        if isinstance(value, str):
            return value.strip().lower() in ("1", "true", "yes", "on")
        return bool(value)


class ImageConstraint(LookupConstraint):
    name, client_plugin_name, entity = "glance.image", "glance", "image"


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"glance": GlanceClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {ImageConstraint.name: ImageConstraint}
