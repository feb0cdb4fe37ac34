"""stoker's resource types against Heat 27.0.1's: the list ``GET /resource_types`` gives
and each type's ``GET /resource_types/{type}`` schema (property names, types, required,
update_allowed, immutable, defaults and constraints, nested schemas included; attribute
names and types; support status), and the HIDDEN types Heat registers, compared with
``heat_27_resource_types.json``, which ``heat_schemas.py`` dumps from Heat's own code.

Every difference left is in the reviewed tables below with its reason. The tests fail on
a difference not in them, and on one listed that has gone: when a type lands or a schema
is fixed, its line is removed here, so the tables only shrink.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stoker.api import catalog

FIXTURE = Path(__file__).with_name("heat_27_resource_types.json")
HEAT = json.loads(FIXTURE.read_text())
HEAT_TYPES: dict[str, dict[str, Any]] = HEAT["resource_types"]

_AWS_EC2 = "being added on branch awsec2 (issue 29)"

# Types Heat 27 lists that stoker does not (or lists as HIDDEN), and why.
MISSING_TYPES: dict[str, str] = {}

# Types stoker lists that Heat 27 does not, and why.
EXTRA_TYPES: dict[str, str] = {
    "OS::Glance::Image": (
        "Heat 22 made it HIDDEN (a NoneResource kept for old stacks); stoker keeps a working "
        "DEPRECATED implementation (location or source_image, through Glance v2)"
    ),
    **{
        name: (
            "not in Heat 27's tree: the Heat plugin networking-bgpvpn ships "
            "(networking_bgpvpn_heat), registered as that plugin registers it"
        )
        for name in (
            "OS::Neutron::BGPVPN",
            "OS::Neutron::BGPVPN-NET-ASSOCIATION",
            "OS::Neutron::BGPVPN-PORT-ASSOCIATION",
            "OS::Neutron::BGPVPN-ROUTER-ASSOCIATION",
        )
    },
}

# Types Heat 27 keeps HIDDEN (registered, refused for new stacks, never listed) that
# stoker does not register at all, and why.
MISSING_HIDDEN_TYPES: dict[str, str] = {
    "OS::Glance::Image": "stoker lists it, DEPRECATED (see EXTRA_TYPES)",
}

_SERVED_SIGNALS = "stoker refuses at validation the signal transports it cannot serve (ServedValues: a second allowed_values)"
_SERVED_CONFIG = "stoker serves POLL_TEMP_URL itself and refuses the transports that need Heat's CFN/Heat API polling or Zaqar"

# Per type: each schema difference left (as ``_differences`` names it) -> why.
SCHEMA_DIFFERENCES: dict[str, dict[str, str]] = {
    "OS::Neutron::NetworkGateway": {
        "property connections: default": (
            "Heat declares {} as the default of a list (and reads it as []); stoker refuses a "
            "default that is not a list, so it says []"
        )
    },
    "OS::Nova::Server": {"property software_config_transport: default": _SERVED_CONFIG},
    "OS::Heat::DeployedServer": {
        "property software_config_transport: default": _SERVED_CONFIG,
        "property software_config_transport: constraints": _SERVED_CONFIG,
    },
    "OS::Heat::SoftwareDeployment": {"property signal_transport: constraints": _SERVED_SIGNALS},
    "OS::Heat::SoftwareDeploymentGroup": {
        "property signal_transport: constraints": _SERVED_SIGNALS
    },
    "OS::Heat::StructuredDeployment": {"property signal_transport: constraints": _SERVED_SIGNALS},
    "OS::Heat::StructuredDeploymentGroup": {
        "property signal_transport: constraints": _SERVED_SIGNALS
    },
    "OS::Heat::Stack": {
        "property timeout: constraints": (
            "stoker refuses a timeout under one minute at validation (Range min 1); Heat refuses "
            "a negative one only at its API (400) and takes 0 as a zero-second timeout"
        ),
    },
    "OS::Heat::TestResource": {
        "property action_wait_secs.suspend: not in Heat": "stoker's test resource also waits on suspend (the engine's tests use it)",
        "property action_wait_secs.resume: not in Heat": "stoker's test resource also waits on resume (the engine's tests use it)",
    },
}


def _constraints(schema: dict[str, Any]) -> list[str]:
    """A property's constraints without their descriptions (free text, stoker's own)."""
    return [
        json.dumps(
            {key: value for key, value in constraint.items() if key != "description"},
            sort_keys=True,
        )
        for constraint in schema.get("constraints", [])
    ]


def _property_differences(path: str, heat: dict[str, Any], ours: dict[str, Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    for aspect in ("type", "required", "update_allowed", "immutable", "default"):
        if heat.get(aspect) != ours.get(aspect):
            found[f"{path}: {aspect}"] = f"{heat.get(aspect)!r} in Heat, {ours.get(aspect)!r} here"
    if _constraints(heat) != _constraints(ours):
        found[f"{path}: constraints"] = f"{_constraints(heat)} in Heat, {_constraints(ours)} here"
    heat_nested, our_nested = heat.get("schema") or {}, ours.get("schema") or {}
    for name in sorted(set(heat_nested) | set(our_nested)):
        if name not in our_nested:
            found[f"{path}.{name}: missing here"] = repr(heat_nested[name])
        elif name not in heat_nested:
            found[f"{path}.{name}: not in Heat"] = repr(our_nested[name])
        else:
            found.update(
                _property_differences(f"{path}.{name}", heat_nested[name], our_nested[name])
            )
    return found


def _support(status: dict[str, Any]) -> tuple[Any, Any]:
    return status.get("status"), status.get("version")


def _differences(heat: dict[str, Any], ours: dict[str, Any]) -> dict[str, str]:
    """Each difference between Heat's schema of a type and stoker's -> what differs."""
    found: dict[str, str] = {}
    for name in sorted(set(heat["properties"]) | set(ours["properties"])):
        if name not in ours["properties"]:
            found[f"property {name}: missing here"] = repr(heat["properties"][name])
        elif name not in heat["properties"]:
            found[f"property {name}: not in Heat"] = repr(ours["properties"][name])
        else:
            found.update(
                _property_differences(
                    f"property {name}", heat["properties"][name], ours["properties"][name]
                )
            )
    for name in sorted(set(heat["attributes"]) | set(ours["attributes"])):
        if name not in ours["attributes"]:
            found[f"attribute {name}: missing here"] = repr(heat["attributes"][name])
        elif name not in heat["attributes"]:
            found[f"attribute {name}: not in Heat"] = repr(ours["attributes"][name])
        elif heat["attributes"][name].get("type") != ours["attributes"][name].get("type"):
            found[f"attribute {name}: type"] = (
                f"{heat['attributes'][name].get('type')!r} in Heat, {ours['attributes'][name].get('type')!r} here"
            )
    if _support(heat["support_status"]) != _support(ours["support_status"]):
        found["support status"] = (
            f"{_support(heat['support_status'])} in Heat, {_support(ours['support_status'])} here"
        )
    return found


def test_fixture_is_heat_27s_listing():
    assert HEAT["heat_version"] == "27.0.1"
    supported = [
        name
        for name, schema in HEAT_TYPES.items()
        if schema["support_status"]["status"] == "SUPPORTED"
    ]
    # Heat's 157 supported plugin types, its two template-backed ones (SUPPORTED too), one
    # DEPRECATED (OS::Aodh::Alarm) and five UNSUPPORTED (ExtraRoute and the four SFC types).
    assert (len(HEAT_TYPES), len(supported)) == (165, 159)
    assert "OS::Glance::Image" in HEAT["hidden_types"]


def test_listed_types_are_heats_less_the_reviewed_ones(service):
    listed = set(catalog.listed_types(service))
    missing = {
        name: MISSING_TYPES.get(name, "NEW: not in MISSING_TYPES")
        for name in sorted(set(HEAT_TYPES) - listed)
    }
    extra = {
        name: EXTRA_TYPES.get(name, "NEW: not in EXTRA_TYPES")
        for name in sorted(listed - set(HEAT_TYPES))
    }
    assert missing == MISSING_TYPES, (
        "types Heat 27 lists and stoker does not; landed ones: remove their line from MISSING_TYPES"
    )
    assert extra == EXTRA_TYPES, "types stoker lists and Heat 27 does not"


def test_each_types_schema_is_heats_less_the_reviewed_differences(service):
    listed = set(catalog.listed_types(service))
    unexpected: dict[str, dict[str, str]] = {}
    gone: dict[str, list[str]] = {}
    for name in sorted(set(HEAT_TYPES) & listed):
        found = _differences(HEAT_TYPES[name], service.resource_type_schema(name))
        reviewed = SCHEMA_DIFFERENCES.get(name, {})
        new = {key: detail for key, detail in found.items() if key not in reviewed}
        if new:
            unexpected[name] = new
        fixed = [key for key in reviewed if key not in found]
        if fixed:
            gone[name] = fixed
    assert unexpected == {}, "schema differences from Heat 27 not in SCHEMA_DIFFERENCES"
    assert gone == {}, "differences listed in SCHEMA_DIFFERENCES that are gone: remove them"
    assert set(SCHEMA_DIFFERENCES) <= listed


def test_the_comparison_sees_a_difference():
    """The comparison itself: a changed default, a lost constraint, a nested key and an
    attribute each count."""
    heat = HEAT_TYPES["OS::Heat::RandomString"]
    ours = json.loads(json.dumps(heat))
    assert _differences(heat, ours) == {}
    ours["properties"]["length"]["default"] = 33
    ours["properties"]["salt"]["update_allowed"] = not heat["properties"]["salt"]["update_allowed"]
    ours["properties"]["character_classes"]["schema"]["*"]["schema"]["min"]["constraints"] = []
    del ours["attributes"]["value"]
    assert sorted(_differences(heat, ours)) == [
        "attribute value: missing here",
        "property character_classes.*.min: constraints",
        "property length: default",
        "property salt: update_allowed",
    ]


def test_hidden_types_are_heats_less_the_reviewed_ones(service):
    """Heat's HIDDEN types, registered here as HIDDEN too; and no type hidden here that
    Heat does not hide."""
    every = set(service.resource_types(include_hidden=True))
    hidden = every - set(service.resource_types())
    missing = {
        name: MISSING_HIDDEN_TYPES.get(name, "NEW: not in MISSING_HIDDEN_TYPES")
        for name in sorted(set(HEAT["hidden_types"]) - hidden)
    }
    assert missing == MISSING_HIDDEN_TYPES
    assert sorted(hidden - set(HEAT["hidden_types"])) == []
