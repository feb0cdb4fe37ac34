"""Template capabilities routes (seed 003): introspection over templates a client sends,
so that any client (a UI, heatclient, the stoker command) can discover the choices a tree
of templates offers. Templates and environments come as a stack create sends them:
``files`` (name -> text) and ``environment_files`` (names in ``files``, merged in order)
or ``environment``::

    POST /v1/{tenant_id}/capabilities/find      200 {"templates": [name...], "skipped": [...]}
    POST /v1/{tenant_id}/template_capabilities  200 {"capabilities": {...}, "resource_types": {...},
                                                     "requires": {...}, "resolutions": [...]}

Heat has no such routes (its blueprint left them to be written); these are stoker's,
documented in docs/api.md. The request's shape is checked here; the work is
``stoker.environment.capabilities``'.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.api import schemas
from stoker.api.call import Call
from stoker.api.errors import BadRequestError
from stoker.api.openapi_components import OBJECT, obj, ok, operation, ref
from stoker.api.operations import Operation
from stoker.environment import capabilities


def _requirements(body: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = body.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise BadRequestError(f"'{key}' must be a JSON object of capability names to values, not {type(value).__name__}", hint='e.g. {"resource_type": "OS::TripleO::Controller"}')
    for name, wanted in value.items():
        items = wanted if isinstance(wanted, list) else [wanted]
        if not items or any(isinstance(item, Mapping | list) or item is None for item in items):
            raise BadRequestError(f"'{key}.{name}' must be a value or a list of values (any of which will do)")
    return dict(value)


def _template_names(body: Mapping[str, Any], files: Mapping[str, str], exclude: set[str]) -> list[str]:
    names = body.get("templates")
    if names is None:
        return [name for name in files if name not in exclude]
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise BadRequestError("'templates' must be a list of names in 'files'")
    missing = [name for name in names if name not in files]
    if missing:
        raise BadRequestError(f"Template {missing[0]} is not in 'files'", hint="send each template's text in 'files' under its name")
    return names


def _body(call: Call) -> Mapping[str, Any]:
    if not isinstance(call.body, Mapping):
        raise BadRequestError("The request body must be a JSON object with 'files'", hint='e.g. {"files": {"puppet/controller.yaml": "heat_template_version: ..."}}')
    return call.body


def find(call: Call) -> dict[str, Any]:
    """``POST /capabilities/find``: the templates of ``files`` (or of ``templates``) whose
    capabilities satisfy every entry of ``capabilities``, sorted by name."""
    body = _body(call)
    data = schemas.instantiation(body, need_template=False)
    requirements = _requirements(body, "capabilities")
    names = _template_names(body, data.files, set())
    matched, skipped = capabilities.find(data.files, requirements, names)
    return {"templates": matched, "skipped": skipped}


def summary(call: Call) -> dict[str, Any]:
    """``POST /template_capabilities``: every capability value the templates offer and,
    per resource type, the templates that may implement it; with environments, their
    merged ``requires`` and how each list entry of their registry resolves by it."""
    body = _body(call)
    data = schemas.instantiation(body, need_template=False)
    environment_names = {source.name for source in data.environments if isinstance(body.get("environment_files"), list)}
    names = _template_names(body, data.files, {name for name in environment_names if name})
    environment = call.service.parse_environments(data.environments, None, data.files)
    return capabilities.describe_templates(data.files, names, environment)


OPERATIONS = [
    Operation("POST", "/v1/{tenant_id}/capabilities/find", find, "capabilities:find", operation(
        "The templates whose capabilities satisfy every requirement (stoker's)", ok(ref("CapabilitiesFound")),
        tag="capabilities", body={"allOf": [ref("CapabilitiesInput"), obj(optional={"capabilities": OBJECT})]},
    )),
    Operation("POST", "/v1/{tenant_id}/template_capabilities", summary, "capabilities:template_capabilities", operation(
        "What a set of templates offers, and how registry lists resolve (stoker's)", ok(ref("TemplateCapabilities")),
        tag="capabilities", body=ref("CapabilitiesInput"),
    )),
]
