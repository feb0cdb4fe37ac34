"""``heat.engine.clients.os.openstacksdk`` for Heat-style plugins: the base of a client
plugin for a service openstacksdk speaks (Heat's ``OpenStackSDKPlugin``).

A plugin for another service subclasses it, names the service (``service_types``, as
Heat's plugins do, or ``service_type``) and the openstacksdk proxy (``proxy_name``:
``connection.load_balancer`` is "load_balancer"), and gets the connection of the stack's
cloud, the not-found and conflict classification, the finders and the microversion rules
of the built-in plugins.
"""

from __future__ import annotations

from typing import Any, ClassVar

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin

__all__ = ["OpenStackSDKPlugin"]


class OpenStackSDKPlugin(OpenStackClientPlugin):
    """Heat's name for the openstacksdk-backed client plugin base."""

    service_types: ClassVar[list[str]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.service_types and not getattr(cls, "service_type", None):
            cls.service_type = cls.service_types[0]
        if not cls.proxy_name and getattr(cls, "service_type", None):
            cls.proxy_name = cls.service_type.replace("-", "_")
