"""What the engine offers, over the Orchestration API v1: template validation, resource
types (list, schema, a generated template), template versions and their functions,
build info, the engines serving (``/services``); and the resource type reference's
pages (``typedocs``), made from the same reads.
Bodies follow ``heat/api/openstack/v1/stacks.py``, ``build_info.py`` and ``services.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from starlette.responses import HTMLResponse

import stoker
from stoker.api import schemas
from stoker.api.call import Call
from stoker.api.errors import BadRequestError, NotFoundError, error_response
from stoker.api.openapi_components import (
    ANY,
    BOOLEAN,
    OBJECT,
    STRING,
    array,
    flag,
    nullable,
    obj,
    ok,
    operation,
    query,
    ref,
)
from stoker.api.operations import PUBLIC, Operation
from stoker.api.policy import ForbiddenError
from stoker.sdk import patterns
from stoker.sdk.exceptions import StokerError
from stoker.typedocs import routes as typedocs


def validate(call: Call) -> Any:
    """``POST /validate`` (``?show_nested=true`` adds NestedParameters). A deprecated
    thing in use is a warning, not an error: the result then carries ``Warnings``.
    stoker's ``?with_notes=true`` adds ``Notes`` (docs/api.md): what a create of the
    template would still need, which Heat's validate does not judge; Heat's body is
    left as it is without it."""
    data = schemas.instantiation(call.body)
    show_nested, with_notes = call.bool_param("show_nested"), call.bool_param("with_notes")
    notes: list[str] = []
    template = schemas.template_of(data)
    result, warnings = call.service.validate_template(
        template, data.environments, data.parameters, files=data.files, show_nested=show_nested, notes=notes
    )
    warnings = list(dict.fromkeys([*warnings, *_typos(call.service, template, data.files)]))
    if warnings:
        result["Warnings"] = warnings
    if with_notes:
        result["Notes"] = notes
    return result


def _typos(service: Any, template: Any, files: Any) -> list[str]:
    """A function name one edit away from the version's (``template.typos``), in the
    template and in every template of its files: a warning of validate only, as Heat
    stores such a map as data."""
    from stoker.environment.registry import UnknownResourceTypeError
    from stoker.template.typos import file_templates, function_typos

    def schema_of(type_name: str) -> Any:
        try:
            return service.resource_type_schema(type_name)
        except (UnknownResourceTypeError, StokerError):  # not a registered type (a template resource, a typo)
            return None

    templates = [service.parse_template(template, files), *file_templates(files)]
    return [str(warning) for parsed in templates for warning in function_typos(parsed, schema_of)]


def listed_types(
    service: Any, name: str | None = None, support_status: str | None = None, version: str | None = None, allowed: Callable[[str], bool] = lambda _: True
) -> list[str]:
    """The types ``GET /resource_types`` lists (and ``stoker resource type list``):
    ``name`` (a regular expression, as Heat), ``support_status`` (SUPPORTED,
    DEPRECATED, ...) and ``version`` (the support status's) filter; ``allowed`` is the
    caller's policy."""
    names = [type_name for type_name in service.resource_types(support_status=support_status, version=version) if allowed(type_name)]
    if name:
        # RE2, not re: a pattern from the query must not backtrack for ever (``(a*)*b``).
        try:
            compiled = patterns.compile(name)
        except patterns.PatternError as error:
            raise BadRequestError(f"Invalid name filter {name}: {error}")
        names = [type_name for type_name in names if compiled.search(type_name)]
    return names


def described_types(service: Any, names: list[str]) -> list[dict[str, str]]:
    """``with_description``: each type with the first paragraph of its documentation
    (the class the type's schema is read from: a plugin, or the template resource of a
    template the global environment maps a type to, as ``AWS::CloudWatch::Alarm``)."""
    return [{"resource_type": name, "description": (service.registry.get_class(name).__doc__ or "").strip().split("\n\n")[0]} for name in names]


def resource_types(call: Call) -> dict[str, Any]:
    """``GET /resource_types``: names, or with ``with_description`` objects with the
    description too, filtered as ``listed_types`` says."""
    filters = {key: call.params[key] for key in ("name", "support_status", "version") if call.params.get(key)}
    return {"resource_types": CallTypes(call).resource_types(filters, with_description=call.bool_param("with_description"))}


def _allowed(call: Call, type_name: str) -> bool:
    """Whether the caller may use ``type_name`` (Heat lists only those, and shows the
    schema of no other)."""
    enforcer = getattr(call.request.app.state, "policy", None)
    if enforcer is None or not call.context.authenticated:
        return True
    return bool(enforcer.allows_resource_type(call.context, type_name, call.context.tenant_id))


def _check_allowed(call: Call, type_name: str) -> None:
    enforcer = getattr(call.request.app.state, "policy", None)
    if enforcer is not None and call.context.authenticated:
        enforcer.check_resource_type(call.context, type_name, call.context.tenant_id)


def resource_type(call: Call) -> Any:
    schema = CallTypes(call).resource_type(call.path("type_name"))
    if not call.bool_param("with_description", True):
        schema.pop("description", None)
    return schema


# A property's schema type -> a template parameter type (Heat's generate_template).
_PARAMETER_TYPES = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean", "list": "comma_delimited_list", "map": "json"}


def generate_template(call: Call) -> Any:
    """``GET /resource_types/{type}/template?template_type=hot|cfn``."""
    return CallTypes(call).resource_type_template(call.path("type_name"), call.params.get("template_type", "cfn"))


class CallTypes:
    """The resource type API's three reads for one call, with the caller's policy: what
    the routes above answer, and what the reference pages of ``/dashboard/types/`` are
    made from (``typedocs.sources.TypeSource``), so the two cannot differ."""

    def __init__(self, call: Call):
        self.call = call

    def resource_types(self, filters: Mapping[str, str] | None = None, with_description: bool = False) -> list[Any]:
        wanted = filters or {}
        names = listed_types(self.call.service, wanted.get("name"), wanted.get("support_status"), wanted.get("version"), lambda name: _allowed(self.call, name))
        return described_types(self.call.service, names) if with_description else names

    def resource_type(self, type_name: str) -> dict[str, Any]:
        _check_allowed(self.call, type_name)
        return self.call.service.resource_type_schema(type_name)

    def resource_type_template(self, type_name: str, template_type: str) -> dict[str, Any]:
        _check_allowed(self.call, type_name)
        return type_template(self.call.service, type_name, template_type)


class PageTypes(CallTypes):
    """The reads of a reference page: the API's, except that a type's generated
    template (the page's example) is None where the caller may not have it
    (``stacks:generate_template``), rather than the API's 403."""

    def resource_type_template(self, type_name: str, template_type: str) -> dict[str, Any] | None:  # type: ignore[override]
        enforcer = getattr(self.call.request.app.state, "policy", None)
        if enforcer is not None and self.call.context.authenticated:
            try:
                enforcer.check(self.call.context, ["stacks:generate_template"], self.call.context.tenant_id)
            except ForbiddenError:
                return None
        return super().resource_type_template(type_name, template_type)


def page_handler(page: Callable[[PageTypes, Mapping[str, str]], str]) -> Callable[[Call], HTMLResponse]:
    """The handler of a reference page (``typedocs.routes``): an endpoint authenticated
    and authorised as any route (``api.call.endpoint``), its HTML made from the caller's
    ``PageTypes``. A refusal is a page with the status and message the type routes
    answer it with (``api.errors.error_response``, the one place they are decided)."""
    from stoker.typedocs.pages import SERVED_LINKS, error_page

    def handler(call: Call) -> HTMLResponse:
        try:
            return HTMLResponse(page(PageTypes(call), call.request.path_params))
        except Exception as error:  # noqa: BLE001 - every error gets the API's status, as a page
            answer = error_response(error)
            fault = json.loads(bytes(answer.body))
            headers = {name: value for name, value in answer.headers.items() if name == "retry-after"}
            text = error_page(answer.status_code, fault["title"], fault["error"]["message"], SERVED_LINKS)
            return HTMLResponse(text, status_code=answer.status_code, headers=headers)

    handler.__name__ = page.__name__
    handler.__doc__ = page.__doc__
    return handler


def type_template(service: Any, type_name: str, template_type: str) -> dict[str, Any]:
    """Heat's generate_template: a template with one resource of the type, a parameter
    per property and an output per attribute (``template_type`` hot or cfn)."""
    kind = template_type.lower()
    if kind not in ("hot", "cfn"):
        raise BadRequestError(f"Template type is not supported: Invalid template type \"{kind}\", valid types are: cfn, hot.")
    schema = service.resource_type_schema(type_name)
    # Heat names the resource (and the description) after the plugin class, whose name
    # is the type's last part: OS::Heat::TestResource -> TestResource.
    resource_name = type_name.rsplit("::", 1)[-1]
    parameters, properties, outputs = {}, {}, {}
    for name, prop in schema["properties"].items():
        parameter: dict[str, Any] = {"type": _PARAMETER_TYPES.get(prop.get("type"), "string"), "description": prop.get("description") or ""}
        if "default" in prop:
            parameter["default"] = prop["default"]
        if kind == "cfn":
            parameter = {key.capitalize(): value for key, value in parameter.items()}
            parameter["Type"] = {"number": "Number", "comma_delimited_list": "CommaDelimitedList", "json": "Json", "boolean": "Boolean"}.get(parameter["Type"], "String")
        parameters[name] = parameter
        properties[name] = {"get_param": name} if kind == "hot" else {"Ref": name}
    for name, attribute in schema["attributes"].items():
        value = {"get_attr": [resource_name, name]} if kind == "hot" else {"Fn::GetAtt": [resource_name, name]}
        description = attribute.get("description") or ""
        outputs[name] = {"description": description, "value": value} if kind == "hot" else {"Description": description, "Value": value}
    # Heat's as_outputs adds the stack id of a provider template made from it.
    outputs["OS::stack_id"] = {"value": {"get_resource": resource_name}} if kind == "hot" else {"Value": {"Ref": resource_name}}
    if kind == "hot":
        return {
            "heat_template_version": "2016-10-14",
            "description": f"Initial template of {resource_name}",
            "parameters": parameters,
            "resources": {resource_name: {"type": type_name, "properties": properties}},
            "outputs": outputs,
        }
    return {
        # Heat's build_template_dict writes the cfn template's alternate version key.
        "HeatTemplateFormatVersion": "2012-12-12",
        "Description": f"Initial template of {resource_name}",
        "Parameters": parameters,
        "Resources": {resource_name: {"Type": type_name, "Properties": properties}},
        "Outputs": outputs,
    }


def template_versions(call: Call) -> dict[str, Any]:
    from stoker.template.versions import template_versions as versions

    return {"template_versions": versions()}


def template_functions(call: Call) -> dict[str, Any]:
    from stoker.template.versions import template_functions as functions

    version = call.path("template_version")
    try:
        found = functions(version, with_condition_functions=call.bool_param("with_condition_func"))
    except KeyError:
        raise NotFoundError(f"Template with version {version} not found", hint="see GET /template_versions")
    return {"template_functions": found}


def services(call: Call) -> dict[str, Any]:
    """``GET /services``: the engines serving the API, as Heat's service list."""
    return {"services": call.service.list_services()}


def constraint_values(call: Call) -> dict[str, Any]:
    """stoker's ``GET .../custom_constraints/{constraint_name}/values``: what a custom constraint
    (``nova.flavor``, ``glance.image``...) accepts in the caller's cloud, for a launch
    form's list (docs/api.md)."""
    return call.service.constraint_values(call.path("constraint_name"))


def build_info(call: Call) -> dict[str, Any]:
    revision = getattr(stoker, "__version__", None) or _package_version()
    return {"api": {"revision": revision}, "engine": {"revision": revision}}


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("stoker")
    except PackageNotFoundError:
        return "unknown"


TENANT = "/v1/{tenant_id}"
_SERVICE = obj({"id": STRING, "binary": STRING, "engine_id": STRING, "host": STRING, "hostname": STRING, "topic": STRING, "report_interval": {"type": "integer"},
                "created_at": STRING, "updated_at": nullable(STRING), "deleted_at": nullable(STRING), "status": {"enum": ["up", "down"]}})

OPERATIONS = [
    Operation("POST", TENANT + "/validate", validate, "stacks:validate_template", operation(
        "Validate a template",
        ok(obj(optional={"Description": STRING, "Parameters": OBJECT, "ParameterGroups": array(ANY), "Environment": OBJECT, "NestedParameters": OBJECT, "Warnings": array(ANY), "Notes": array(STRING)})),
        tag="templates", body=ref("StackInput"),
        parameters=[
            flag("show_nested", "the nested templates' parameters too (NestedParameters)"),
            flag("with_notes", "stoker's: what a create would still need (Notes)"),
        ],
    )),
    Operation("GET", TENANT + "/resource_types", resource_types, "stacks:list_resource_types", operation(
        "List the resource types", ok(obj({"resource_types": {"anyOf": [array(STRING), array(obj({"resource_type": STRING, "description": STRING}))]}})),
        tag="resource_types",
        parameters=[
            query("name", STRING, "a regular expression (RE2) the name matches"),
            query("support_status", {"enum": ["UNKNOWN", "SUPPORTED", "DEPRECATED", "UNSUPPORTED", "HIDDEN"]}, "only types of this support status"),
            query("version", STRING, "only types whose support status names this version (e.g. 2014.1)"),
            flag("with_description", "objects with each type's description"),
        ],
    )),
    Operation("GET", TENANT + "/resource_types/{type_name}", resource_type, "stacks:resource_schema", operation(
        "A resource type's schema", ok(obj({"resource_type": STRING, "properties": OBJECT, "attributes": OBJECT}, {"description": STRING, "support_status": OBJECT})),
        tag="resource_types", parameters=[flag("with_description", "the description too (default true)")],
    )),
    Operation("GET", TENANT + "/resource_types/{type_name}/template", generate_template, "stacks:generate_template", operation(
        "A template with one resource of the type", ok(OBJECT, "A HOT or CFN template"), tag="resource_types",
        parameters=[query("template_type", {"enum": ["hot", "cfn"]}, "cfn (default) or hot")],
    )),
    Operation("GET", TENANT + "/template_versions", template_versions, "stacks:list_template_versions", operation(
        "List the template versions", ok(obj({"template_versions": array(obj({"version": STRING, "type": {"enum": ["hot", "cfn"]}}, {"aliases": array(STRING)}))})),
        tag="templates",
    )),
    Operation("GET", TENANT + "/template_versions/{template_version}/functions", template_functions, "stacks:list_template_functions", operation(
        "List a template version's functions", ok(obj({"template_functions": array(obj({"functions": STRING, "description": STRING}))})),
        tag="templates", parameters=[flag("with_condition_func", "the condition functions too")],
    )),
    Operation("GET", TENANT + "/custom_constraints/{constraint_name}/values", constraint_values, "custom_constraints:values", operation(
        "The values a custom constraint accepts in the caller's cloud, for a form's list (stoker's)",
        ok(obj({"constraint": STRING, "values": array(obj({"value": STRING, "id": STRING, "label": STRING}, extra=False)), "truncated": BOOLEAN})),
        tag="resource_types",
        description="At most 500 values, sorted by label; a value is the object's name, or its id where the name is not unique. 404 for a constraint not registered; 400 for one that does not list its values, or a cloud that did not answer.",
    )),
    Operation("GET", TENANT + "/build_info", build_info, "build_info:build_info", operation(
        "The build's revision", ok(obj({"api": obj({"revision": STRING}), "engine": obj({"revision": STRING})})), tag="build_info",
    )),
    Operation("GET", TENANT + "/services", services, "service:index", operation("List the engines", ok(obj({"services": array(_SERVICE)})), tag="services")),
    # stoker's resource type reference (typedocs): HTML pages of what the type routes
    # answer, under their rules (a type's page shows its generated template too); not
    # API, so not in the OpenAPI document. Its assets (CSS and script) need no token.
    Operation("GET", typedocs.INDEX_PATH, page_handler(typedocs.index), "stacks:list_resource_types", None),
    Operation("GET", typedocs.ASSET_PATH, typedocs.asset, PUBLIC, None, plain=True),
    Operation("GET", typedocs.TYPE_PATH, page_handler(typedocs.type_page), "stacks:resource_schema", None),
]
