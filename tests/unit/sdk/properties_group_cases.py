"""What the properties-group tests share: property names and schemas of the seed's
examples, a server-like schema, and a fake identity client plugin with a lookup that
records which plugins were asked for."""

from __future__ import annotations

from typing import Any

from stoker.sdk.clients import ClientPlugin
from stoker.sdk.exceptions import UnknownClientPluginError
from stoker.sdk.properties import Schema
from stoker.sdk.properties_group import XOR

PropertyA, PropertyB, PropertyC = "PropertyA", "PropertyB", "PropertyC"
PropertySubA, PropertySubB = "PropertySubA", "PropertySubB"

FLAT_SCHEMA = {
    PropertyA: Schema(Schema.STRING),
    PropertyB: Schema(Schema.STRING),
    PropertyC: Schema(Schema.STRING, default="from default"),
}

NESTED_SCHEMA = {
    PropertyA: Schema(
        Schema.MAP,
        schema={
            PropertySubA: Schema(Schema.STRING),
            PropertySubB: Schema(Schema.STRING, default="from default"),
        },
    ),
}

SERVER_SCHEMA = {
    "name": Schema(Schema.STRING),
    "network": Schema(Schema.STRING),
    "port": Schema(Schema.STRING),
    "subnet": Schema(Schema.STRING),
    "tags": Schema(Schema.LIST, schema=Schema(Schema.STRING)),
    "metadata": Schema(Schema.MAP),
    "networks": Schema(
        Schema.LIST,
        schema=Schema(
            Schema.MAP,
            schema={
                "network": Schema(Schema.STRING),
                "port": Schema(Schema.STRING),
                "fixed_ip": Schema(Schema.STRING),
            },
        ),
    ),
}


class FakeKeystonePlugin(ClientPlugin):
    """Speaks identity API versions 1.0, 1.2 and 2.0; the "cloud" offers up to service_max."""

    name = "keystone"
    supported_versions = ("1.0", "1.2", "2.0")

    def __init__(self, service_max: str | None = None):
        super().__init__(environ={})
        self.service_max = service_max

    def create_client(self, version: str | None) -> Any:
        return {"version": version}

    def get_max_microversion(self) -> str | None:
        return self.service_max


class Lookup:
    """Resource.client_plugin stand-in: hands out plugins by name and records the asking."""

    def __init__(self, *plugins: ClientPlugin):
        self.plugins = {plugin.name: plugin for plugin in plugins}
        self.asked: list[str] = []

    def __call__(self, name: str) -> ClientPlugin:
        self.asked.append(name)
        if name not in self.plugins:
            raise UnknownClientPluginError(name, sorted(self.plugins))
        return self.plugins[name]


# Exactly one of network and port in each item of the list of maps ``networks``.
ITEM_XOR = [{XOR: [["networks", "network"], ["networks", "port"]]}]
