"""OS::Heat::Stack: a nested stack from a template given inline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.stack_resource import StackResource
from stoker.template import loader
from stoker.template.errors import TemplateError


class NestedStack(StackResource):
    """A resource representing a stack of resources, from a template given inline.

    The ``template`` property holds the nested template (YAML or JSON text, or a map);
    ``parameters`` are its parameters. The nested stack's outputs are the ``outputs``
    attribute. A remote stack (``context`` with a region) is not supported: stoker runs
    one cloud's stacks.
    """

    support_status = support.SupportStatus(version="2014.2")

    PROPERTIES = (CONTEXT, TEMPLATE, TIMEOUT, PARAMETERS) = (
        "context",
        "template",
        "timeout",
        "parameters",
    )
    ATTRIBUTES = (STACK_NAME, OUTPUTS) = ("stack_name", "outputs")

    properties_schema = {
        CONTEXT: properties.Schema(
            properties.Schema.MAP,
            "Context for this stack (a region_name for a remote stack; not supported).",
            schema={
                "region_name": properties.Schema(
                    properties.Schema.STRING, "Region name in which this stack will be created."
                )
            },
        ),
        TEMPLATE: properties.Schema(
            properties.Schema.STRING,
            "Template that specifies the stack to be created as a resource.",
            required=True,
            update_allowed=True,
        ),
        TIMEOUT: properties.Schema(
            properties.Schema.INTEGER,
            "Number of minutes to wait for this stack creation.",
            constraints=[constraints.Range(min=1)],
            update_allowed=True,
        ),
        PARAMETERS: properties.Schema(
            properties.Schema.MAP,
            "Set of parameters passed to this nested stack.",
            update_allowed=True,
            default={},
        ),
    }

    attributes_schema = {
        STACK_NAME: attributes.Schema("Name of the stack.", type=attributes.Schema.STRING),
        OUTPUTS: attributes.Schema(
            "A dict of key-value pairs output from the stack.", type=attributes.Schema.MAP
        ),
    }

    def validate(self) -> None:
        super().validate()
        if (self.properties[self.CONTEXT] or {}).get("region_name"):
            raise ValidationError(
                "Remote stacks (context.region_name) are not supported",
                path=f"resources.{self.name}.properties.context",
                hint="remove context; stoker creates the nested stack in the same cloud",
            )
        self.child_template()

    def child_template(self) -> Mapping[str, Any]:
        text = self.properties[self.TEMPLATE]
        try:
            data = loader.parse(text, f"resources.{self.name}.properties.template").data
        except TemplateError as error:
            raise ValidationError(
                f"The nested template is not valid YAML or JSON: {error}",
                path=f"resources.{self.name}.properties.template",
            )
        if not isinstance(data, dict):
            raise ValidationError(
                "The nested template must be a map (a HOT template)",
                path=f"resources.{self.name}.properties.template",
            )
        return data

    def child_source(self) -> tuple[str, str] | None:
        return self.properties[self.TEMPLATE], f"resources.{self.name}.properties.template"

    def child_params(self) -> dict[str, Any]:
        return dict(self.properties[self.PARAMETERS] or {})

    def child_timeout_mins(self) -> int | None:
        return self.properties[self.TIMEOUT]

    def _resolve_attribute(self, name: str) -> Any:
        view = self.nested_view()
        if view is None:
            return None
        if name == self.OUTPUTS:
            return view.outputs()
        if name == self.STACK_NAME:
            return self.physical_resource_name()
        return None


def resource_mapping() -> dict[str, type[StackResource]]:
    return {"OS::Heat::Stack": NestedStack}
