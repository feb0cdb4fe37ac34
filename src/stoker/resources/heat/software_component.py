"""OS::Heat::SoftwareComponent: one config per lifecycle action of a software
component, stored as one software config of group ``component``."""

from __future__ import annotations

from typing import Any

from stoker.resources.heat.software_config import SoftwareConfig
from stoker.sdk import constraints, properties, support
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource


class SoftwareComponent(SoftwareConfig):
    """A software component: one config for each lifecycle action it handles.

    Where OS::Heat::SoftwareConfig holds one script, a component holds a config per
    action (CREATE, UPDATE, SUSPEND, RESUME, DELETE, or an action of the in-instance
    hook's own), each with the tool that applies it. They are stored as one software
    config of group ``component``, whose config is ``{"configs": [...]}``.
    """

    support_status = support.SupportStatus(version="2014.2")

    PROPERTIES = (CONFIGS, INPUTS, OUTPUTS, OPTIONS) = ("configs", "inputs", "outputs", "options")
    CONFIG_PROPERTIES = (CONFIG_ACTIONS, CONFIG_CONFIG, CONFIG_TOOL) = ("actions", "config", "tool")

    # One entry of ``configs``. Actions other than Heat's own may be named; only the
    # in-instance hooks give them a meaning.
    config_schema = properties.Schema(
        properties.Schema.MAP,
        schema={
            CONFIG_ACTIONS: properties.Schema(
                properties.Schema.LIST,
                "The lifecycle actions this config is for: CREATE, UPDATE, SUSPEND, RESUME, "
                "DELETE, or actions the in-instance hooks know.",
                default=[Resource.CREATE, Resource.UPDATE],
                schema=properties.Schema(properties.Schema.STRING),
                constraints=[constraints.Length(min=1)],
            ),
            CONFIG_CONFIG: SoftwareConfig.properties_schema[SoftwareConfig.CONFIG],
            CONFIG_TOOL: properties.Schema(
                properties.Schema.STRING,
                "The tool that applies the config on the server (a name the in-instance hooks know).",
                required=True,
            ),
        },
    )

    properties_schema = {
        CONFIGS: properties.Schema(
            properties.Schema.LIST,
            "The component's configs, one per lifecycle action.",
            schema=config_schema,
            constraints=[constraints.Length(min=1)],
            required=True,
        ),
        INPUTS: SoftwareConfig.properties_schema[SoftwareConfig.INPUTS],
        OUTPUTS: SoftwareConfig.properties_schema[SoftwareConfig.OUTPUTS],
        OPTIONS: SoftwareConfig.properties_schema[SoftwareConfig.OPTIONS],
    }

    def config_fields(self) -> dict[str, Any]:
        # The configs list is stored as the config, and group ``component`` tells the
        # in-instance hook to handle it.
        return {
            "group": "component",
            "config": {self.CONFIGS: self.properties[self.CONFIGS]},
            "inputs": self.given(self.INPUTS),
            "outputs": self.given(self.OUTPUTS),
            "options": self.given(self.OPTIONS),
        }

    def validate(self) -> None:
        """One lifecycle action may have one config only (else their order is unknown)."""
        super().validate()
        seen: set[str] = set()
        for entry in self.properties[self.CONFIGS]:
            actions = entry.get(self.CONFIG_ACTIONS) if isinstance(entry, dict) else None
            if not isinstance(actions, list):
                continue  # not known until the stack runs
            if any(action in seen for action in actions):
                raise ValidationError(
                    f'Defining more than one configuration for the same action in SoftwareComponent "{self.name}" is not allowed.',
                    path=f"resources.{self.name}.properties.{self.CONFIGS}",
                )
            seen.update(actions)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::SoftwareComponent": SoftwareComponent}
