"""Which candidate template implements each resource of a stack whose environment maps
its type to a list (seed 003), for showing: stack show, previews, update dry runs.

The choice needs no record of its own: it is a function of what the stack stores (its
template, environment with ``requires``, and files), so reading those again gives the
choice the engine made, and an update's new ones give the choice it will make. The
per-resource entries of the registry come before the type's own, as the registry ranks
them; a list the global environment holds, or a mapping that leads to a list through
another type name, is not shown here (the engine still resolves both).

This module reads; it changes nothing and never raises for a list that does not
resolve (validation reports that): such a resource shows no template.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.environment import capabilities
from stoker.environment.capabilities import Resolution
from stoker.environment.environment import Environment


def _uses(template_data: Mapping[str, Any]) -> list[tuple[str, str]]:
    section = template_data.get("resources", template_data.get("Resources"))
    uses = []
    for name, body in (section.items() if isinstance(section, Mapping) else ()):
        kind = body.get("type", body.get("Type")) if isinstance(body, Mapping) else None
        if isinstance(kind, str):
            uses.append((str(name), kind))
    return uses


def resolutions(template_data: Mapping[str, Any], environment: Environment, files: Mapping[str, str]) -> list[Resolution]:
    """How each resource of the template whose type the environment maps to a list resolves."""
    return capabilities.resolutions(environment.resource_registry, environment.requires, files, _uses(template_data))


def view(found: list[Resolution]) -> list[dict[str, Any]]:
    """One row per resource: its name, type, the template chosen (None when not exactly
    one candidate matches) and the requirements that chose it."""
    return [
        {
            "resource_name": resolution.resource_name,
            "resource_type": resolution.type_name,
            "template": resolution.chosen,
            "requires": capabilities.describe_requirements(resolution.requirements),
        }
        for resolution in found
    ]


def of_stack(store: Any, stack: Any) -> list[dict[str, Any]]:
    """The implementations of a stored stack (its current template), as ``view`` shows them."""
    stored = store.get_template(stack.raw_template_id) if getattr(stack, "raw_template_id", 0) else None
    if stored is None:
        return []
    return view(resolutions(stored.template or {}, Environment.from_dict(stored.environment), stored.files or {}))


def changes(
    old_template: Mapping[str, Any],
    old_environment: Environment,
    old_files: Mapping[str, str],
    new_template: Mapping[str, Any],
    new_environment: Environment,
    new_files: Mapping[str, str],
) -> list[dict[str, Any]]:
    """The resources an update would implement by another template: ``resource_name``,
    ``resource_type``, ``from`` and ``to`` (None where no list, or no single match)."""
    return capabilities.changes(resolutions(old_template, old_environment, old_files), resolutions(new_template, new_environment, new_files))


def with_preview(result: dict[str, Any], template: Any, environment: Environment) -> dict[str, Any]:
    """A create preview with ``implementations`` added where the environment lists
    candidates (``template``: a parsed ``Template``); others are left as they were."""
    found = view(resolutions(template.data, environment, template.files))
    if found:
        result["implementations"] = found
    return result


def with_update_preview(result: dict[str, Any], old_template: Any, old_environment: Environment, new_template: Any, new_environment: Environment) -> dict[str, Any]:
    """An update preview with ``implementations`` (after the update) and
    ``implementation_changes`` added where the environments list candidates."""
    with_preview(result, new_template, new_environment)
    changed = changes(old_template.data, old_environment, old_template.files, new_template.data, new_environment, new_template.files)
    if changed:
        result["implementation_changes"] = changed
    return result


async def announce(context: Any, action: Any) -> None:
    """As a create or update starts, one stack event per resource implemented by a
    candidate template: which one, and the requirements that chose it (the record a
    user reads in ``stoker stack event list``)."""
    from stoker.engine.states import Status

    runtime = context.runtime
    for row in view(resolutions(runtime.template.data, runtime.environment, runtime.template.files)):
        if row["template"] is not None:
            await context.recorder.stack_event(
                action, Status.IN_PROGRESS, f"Resource {row['resource_name']} ({row['resource_type']}) is implemented by {row['template']} (requires {row['requires']})"
            )


def shown(store: Any, stack: Any) -> dict[str, Any]:
    """What stack show adds: ``{"implementations": {resource name: template}}`` for a
    stack with chosen candidates, else nothing (Heat's body is unchanged)."""
    chosen = of_stack(store, stack) if getattr(stack, "deleted_at", None) is None else []
    return {"implementations": {row["resource_name"]: row["template"] for row in chosen}} if chosen else {}
