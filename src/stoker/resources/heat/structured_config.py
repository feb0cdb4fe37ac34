"""OS::Heat::StructuredConfig and the deployments that substitute its inputs:
OS::Heat::StructuredDeployment and OS::Heat::StructuredDeploymentGroup (kept together,
as Heat keeps them: one idea, one module)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.heat.software_config import SoftwareConfig
from stoker.resources.heat.software_deployment import SoftwareDeployment
from stoker.resources.heat.software_deployment_group import SoftwareDeploymentGroup
from stoker.sdk import constraints, properties, support
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource


class StructuredConfig(SoftwareConfig):
    """A software config whose config is a map rather than text.

    For tools configured in YAML or JSON: the map is stored, and the software_configs
    API returns it, as structured data. Otherwise as OS::Heat::SoftwareConfig.
    """

    support_status = support.SupportStatus(version="2014.1")

    properties_schema = {
        **SoftwareConfig.properties_schema,
        SoftwareConfig.CONFIG: properties.Schema(
            properties.Schema.MAP,
            "The configuration as a map, stored and delivered as JSON.",
        ),
    }


_INPUT_KEY, _INPUT_VALUES_VALIDATE = "input_key", "input_values_validate"

_STRUCTURED_SCHEMA = {
    _INPUT_KEY: properties.Schema(
        properties.Schema.STRING,
        "Name of key to use for substituting inputs during deployment.",
        default="get_input",
    ),
    _INPUT_VALUES_VALIDATE: properties.Schema(
        properties.Schema.STRING,
        "Perform a check on the input values passed to verify that each required input has a "
        "corresponding value. When the property is set to STRICT and no value is passed, an "
        "exception is raised.",
        default="LAX",
        constraints=[constraints.AllowedValues(["LAX", "STRICT"])],
    ),
}


def substitute_inputs(snippet: Any, inputs: Mapping[str, Any], input_key: str, strict: bool = False) -> Any:
    """The config with each ``{<input_key>: name}`` replaced by that input's value
    (Heat's StructuredDeployment.parse); with ``strict`` a name without a value is an
    error, else it becomes null."""
    if isinstance(snippet, Mapping):
        if len(snippet) == 1:
            name, argument = next(iter(snippet.items()))
            if name == input_key and isinstance(argument, str):
                if strict and argument not in inputs:
                    raise ValidationError(f"The Parameter ({argument}) was not provided.")
                return inputs.get(argument)
        return {key: substitute_inputs(value, inputs, input_key, strict) for key, value in snippet.items()}
    if isinstance(snippet, list | tuple):
        return [substitute_inputs(value, inputs, input_key, strict) for value in snippet]
    return snippet


class StructuredDeployment(SoftwareDeployment):
    """A resource which has same logic with OS::Heat::SoftwareDeployment.

    A deployment resource like OS::Heat::SoftwareDeployment, but which performs input
    value substitution on the config defined by a OS::Heat::StructuredConfig resource.

    Some configuration tools have no concept of inputs, so the input value substitution
    needs to occur in the deployment resource. An example of this is the JSON metadata
    consumed by the cfn-init tool.

    Where the config contains {get_input: input_name} this will be substituted with the
    value of input_name in this resource's input_values. If get_input needs to be passed
    through to the substituted configuration then a different input_key property value
    can be specified.
    """

    support_status = support.SupportStatus(version="2014.1")

    PROPERTIES = (*SoftwareDeployment.PROPERTIES, _INPUT_KEY, _INPUT_VALUES_VALIDATE)
    INPUT_KEY, INPUT_VALUES_VALIDATE = _INPUT_KEY, _INPUT_VALUES_VALIDATE

    properties_schema = {**SoftwareDeployment.properties_schema, **_STRUCTURED_SCHEMA}

    def empty_config(self) -> Any:
        return {}

    def _build_derived_config(self, action: str, source: Mapping[str, Any], inputs: list[dict[str, Any]]) -> Any:
        values = {entry["name"]: entry.get("value") for entry in inputs}
        strict = self.properties[self.INPUT_VALUES_VALIDATE] == "STRICT"
        return substitute_inputs(source.get("config"), values, self.properties[self.INPUT_KEY], strict)


class StructuredDeploymentGroup(SoftwareDeploymentGroup):
    """This resource associates a group of servers with some configuration.

    This resource works similar as OS::Heat::SoftwareDeploymentGroup, but for structured
    resources.
    """

    support_status = support.SupportStatus(version="5.0.0")

    member_type = "OS::Heat::StructuredDeployment"
    member_class = StructuredDeployment

    PROPERTIES = (*SoftwareDeploymentGroup.PROPERTIES, _INPUT_KEY, _INPUT_VALUES_VALIDATE)
    INPUT_KEY, INPUT_VALUES_VALIDATE = _INPUT_KEY, _INPUT_VALUES_VALIDATE

    properties_schema = {**SoftwareDeploymentGroup.properties_schema, **_STRUCTURED_SCHEMA}


class StructuredDeployments(StructuredDeploymentGroup):
    """Deprecated alias of OS::Heat::StructuredDeploymentGroup (hidden since 7.0.0)."""

    support_status = support.SupportStatus(
        status=support.HIDDEN,
        message="Please use OS::Heat::StructuredDeploymentGroup instead.",
        version="7.0.0",
        previous_status=support.SupportStatus(status=support.DEPRECATED, version="2014.2"),
        substitute_class=StructuredDeploymentGroup,
    )


def resource_mapping() -> dict[str, type[Resource]]:
    return {
        "OS::Heat::StructuredConfig": StructuredConfig,
        "OS::Heat::StructuredDeployment": StructuredDeployment,
        "OS::Heat::StructuredDeploymentGroup": StructuredDeploymentGroup,
        "OS::Heat::StructuredDeployments": StructuredDeployments,
    }
