"""Template resources (provider templates): a resource type that is a template.

A type named like a template file (``type: server.yaml``), or mapped to one in the
environment (``resource_registry: {"My::Server": server.yaml}``), is a nested stack of
that template. Its properties are the template's parameters, its attributes the
template's outputs; ``get_resource`` gives the ``OS::stack_id`` output when the template
has one, else the nested stack's id (as in Heat). The template text comes only from the
request's ``files`` map, never from the server's filesystem.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, ClassVar

from stoker.sdk import attributes, properties, support
from stoker.sdk.exceptions import InvalidTemplateAttribute, ValidationError
from stoker.sdk.stack_resource import StackResource
from stoker.template import parameters as parameters_module
from stoker.template.errors import TemplateError, TemplateErrors
from stoker.template.hot import Template

TEMPLATE_SUFFIXES = (".yaml", ".yml", ".template", ".json")

# A template's output that, when present, is the resource's reference id.
STACK_ID_OUTPUT = "OS::stack_id"

_PROPERTY_TYPES = {
    parameters_module.STRING: properties.Schema.STRING,
    parameters_module.NUMBER: properties.Schema.NUMBER,
    parameters_module.COMMA_DELIMITED_LIST: properties.Schema.LIST,
    parameters_module.JSON: properties.Schema.MAP,
    parameters_module.BOOLEAN: properties.Schema.BOOLEAN,
}


def is_template_name(type_name: str) -> bool:
    return type_name.endswith(TEMPLATE_SUFFIXES) or "://" in type_name


class TemplateResource(StackResource):
    """A nested stack made from a provider template (built per template by ``template_class``)."""

    # Heat's TemplateResource names no version (Resource's SupportStatus()).
    support_status = support.SupportStatus()
    # Set on each generated class.
    template_name: ClassVar[str] = ""
    template_data: ClassVar[Mapping[str, Any]] = {}
    template_text: ClassVar[str] = ""

    def child_template(self) -> Mapping[str, Any]:
        return self.template_data

    def child_source(self) -> tuple[str, str] | None:
        return self.template_text, self.template_name

    def child_params(self) -> dict[str, Any]:
        # Only what the template author gave (Heat's get_user_value): the rest is left to
        # the environment's parameter_defaults and the nested template's own defaults.
        given = self.properties.data
        return {key: self.properties[key] for key in self.properties if given.get(key) is not None}

    def get_reference_id(self) -> str | None:
        if STACK_ID_OUTPUT in self.attributes_schema and self.resource_id is not None:
            view = self.nested_view()
            if view is not None:
                value = view.outputs().get(STACK_ID_OUTPUT)
                if value is not None:
                    return str(value)
        return super().get_reference_id()

    def _resolve_attribute(self, name: str) -> Any:
        view = self.nested_view()
        if view is None:
            return None
        try:
            return self.get_output(name)
        except InvalidTemplateAttribute:
            return None


def _property_schema(parameter: parameters_module.ParameterSchema) -> properties.Schema:
    # No default, as Heat's Schema.from_parameter: the parameter's default applies in
    # the nested stack (child_params passes only what the template author gave).
    return properties.Schema(
        _PROPERTY_TYPES.get(parameter.type, properties.Schema.ANY),
        parameter.description or parameter.label or "",
        required=parameter.default is None,
        constraints=list(parameter.constraints),
        update_allowed=True,
        immutable=parameter.immutable,
        # Heat's Schema.from_parameter: a json or comma_delimited_list parameter's
        # property also takes a string (and a json one a list), passed on to the parameter.
        allow_conversion=parameter.type in (parameters_module.JSON, parameters_module.COMMA_DELIMITED_LIST),
    )


_CLASSES: OrderedDict[tuple[str, str, str], type[TemplateResource]] = OrderedDict()


def template_class(
    type_name: str, template_name: str, text: str, files: Mapping[str, str]
) -> type[TemplateResource]:
    """The resource class for a provider template (cached by its text)."""
    key = (type_name, template_name, hashlib.sha256(text.encode()).hexdigest())
    cls = _CLASSES.get(key)
    if cls is not None:
        _CLASSES.move_to_end(key)
        return cls
    try:
        parsed = Template.load(text, template_name, files)
    except TemplateErrors as problems:
        # Each problem on a line of its own, with its place in the template's file.
        listed = problems.errors
        raise ValidationError(
            str(listed[0]) if len(listed) == 1 else f"{len(listed)} problems:" + "".join(f"\n    - {error}" for error in listed),
            hint=f"fix the template resource {template_name}",
        )
    except TemplateError as error:
        raise ValidationError(str(error), hint=f"fix the template resource {template_name}")
    schema = {name: _property_schema(parameter) for name, parameter in parsed.parameters.items()}
    outputs = {
        name: attributes.Schema(output.description or f"Output {name} of {template_name}.")
        for name, output in parsed.outputs.items()
    }
    cls = type(
        "TemplateResource",
        (TemplateResource,),
        {
            "__doc__": parsed.description or f"A nested stack of {template_name}.",
            "__module__": __name__,
            "template_name": template_name,
            "template_data": parsed.data,
            "template_text": text,
            "properties_schema": schema,
            "attributes_schema": outputs,
        },
    )
    _CLASSES[key] = cls
    while len(_CLASSES) > 256:
        _CLASSES.popitem(last=False)
    return cls
