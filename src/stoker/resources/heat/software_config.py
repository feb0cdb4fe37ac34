"""OS::Heat::SoftwareConfig, and the base its kin (StructuredConfig, CloudConfig,
MultipartMime, SoftwareComponent) extend: a config stored through the engine's
software config store (``sdk.software_config``), the same one the software_configs
API serves. A stored config never changes, so every property change replaces it."""

from __future__ import annotations

import uuid
from typing import Any

from stoker.sdk import attributes, properties, support
from stoker.sdk.resource import Resource
from stoker.sdk.software_config import (
    INPUT_SCHEMA,
    OUTPUT_SCHEMA,
    SoftwareConfigNotFoundError,
    SoftwareConfigs,
    software_configs,
)


def is_uuid_like(value: Any) -> bool:
    """oslo's ``is_uuid_like``: a UUID in any of its spellings (hyphens, braces, a
    ``urn:uuid:`` prefix, any case)."""
    if not isinstance(value, str):
        return False
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        return False
    bare = value.replace("urn:", "").replace("uuid:", "").strip("{}").replace("-", "").lower()
    return parsed.hex == bare


def config_by_reference(resource: Resource, value: Any) -> Any:
    """Heat's config-aware properties (a server's ``user_data`` in the RAW and
    SOFTWARE_CONFIG formats, say): a value that is a stored config's id stands for that
    config's ``config``; any other value, or an id no config has, stands for itself."""
    if not is_uuid_like(value):
        return value
    store = software_configs(resource, required=False)
    if store is None:
        return value
    try:
        return store.show(value)["config"]
    except SoftwareConfigNotFoundError:
        return value


class SoftwareConfig(Resource):
    """A stored software configuration: a script or manifest, the group (the tool meant
    to apply it), the inputs it reads, the outputs it writes and the tool's options.

    The physical resource is a config of the software_configs API, and a config never
    changes once stored: changing any property stores a new config and deletes the old
    one. A config made here can be used in the same template (a server's user_data, a
    deployment's config, a MultipartMime part) or handed to another stack by its id.
    """

    support_status = support.SupportStatus(version="2014.1")

    PROPERTIES: tuple[str, ...]  # a config type of its own may name more
    PROPERTIES = (GROUP, CONFIG, OPTIONS, INPUTS, OUTPUTS) = ("group", "config", "options", "inputs", "outputs")
    ATTRIBUTES = (CONFIG_ATTR,) = ("config",)

    properties_schema = {
        GROUP: properties.Schema(
            properties.Schema.STRING,
            "The group the config is delivered under to a server, usually naming the tool that applies it.",
            default="Heat::Ungrouped",
        ),
        CONFIG: properties.Schema(
            properties.Schema.STRING,
            "The script or manifest that does the configuration.",
        ),
        OPTIONS: properties.Schema(
            properties.Schema.MAP,
            "Options for the configuration tool, as it understands them.",
        ),
        INPUTS: properties.Schema(
            properties.Schema.LIST,
            "The inputs the config expects, each with its name and type.",
            schema=properties.Schema(properties.Schema.MAP, schema=INPUT_SCHEMA),
        ),
        OUTPUTS: properties.Schema(
            properties.Schema.LIST,
            "The outputs the config produces, each with its name and type.",
            schema=properties.Schema(properties.Schema.MAP, schema=OUTPUT_SCHEMA),
        ),
    }

    attributes_schema = {
        CONFIG_ATTR: attributes.Schema("The stored config (its config value).", type=attributes.Schema.STRING),
    }

    # -- what is stored ----------------------------------------------------------------

    def given(self, key: str) -> Any:
        """A property's value as Heat passes it on: None when neither given nor
        defaulted (not the empty value of its type)."""
        return self.properties.resolved().get(key)

    def config_fields(self) -> dict[str, Any]:
        """The group, config, inputs, outputs and options to store; subclasses change them."""
        return {key: self.given(key) for key in self.PROPERTIES if key in self.properties_schema}

    def configs(self) -> SoftwareConfigs:
        store = software_configs(self)
        assert store is not None
        return store

    def stored(self) -> dict[str, Any] | None:
        """This resource's config as stored (Heat's shape), or None when there is none."""
        if self.resource_id is None:
            return None
        store = software_configs(self, required=False)
        if store is None:
            return None
        try:
            return store.show(self.resource_id)
        except SoftwareConfigNotFoundError:
            return None

    # -- lifecycle ---------------------------------------------------------------------

    def handle_create(self) -> None:
        created = self.configs().create(name=self.physical_resource_name(), **self.config_fields())
        self.resource_id_set(created["id"])

    def find_created(self) -> str | None:
        """The config an interrupted create stored before its id was recorded: the one
        named with this resource's physical name."""
        return self.configs().find_by_name(self.physical_resource_name())

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return None
        try:
            self.configs().delete(self.resource_id)
        except SoftwareConfigNotFoundError:
            pass
        return None

    def _show_resource(self) -> dict[str, Any] | None:
        """The ``show`` attribute: the config as the software_configs API shows it."""
        return self.stored()

    def _resolve_attribute(self, name: str) -> Any:
        if name == self.CONFIG_ATTR:
            stored = self.stored()
            return None if stored is None else stored["config"]
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::SoftwareConfig": SoftwareConfig}
