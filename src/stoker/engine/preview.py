"""Previews of create and update: what the action would do to each resource, and why.

An update preview runs the very decision the update itself makes (``plan_update``), in
the update's own order, against a runtime where resources that the update would create
or replace have no values yet (their references and attributes are UNRESOLVED) and
resources updated in place have attributes that may change. So a property that depends
on a replaced resource is reported as changing, exactly when the update would change it.
Nothing is stored and no plugin handler runs.

A create's preview is Heat's preview_stack: the stack a create would make, each resource
INIT_COMPLETE with its properties resolved (``preview_resources``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from stoker.engine.hooks import hooks_for
from stoker.engine.lifecycle import ActionContext, plan_update, restricted, updatable
from stoker.engine.outputs import shown
from stoker.engine.stack import StackRuntime, dependency_graph
from stoker.engine.validation import ValidationContext, ValidationResult
from stoker.environment.registry import ResourceRegistry
from stoker.plans import diff
from stoker.sdk.exceptions import StokerError
from stoker.sdk.properties import UNRESOLVED, contains_unresolved
from stoker.sdk.resource import Resource
from stoker.store import ResourceRecord
from stoker.template.definitions import ResourceDefinition
from stoker.template.errors import TemplateErrors
from stoker.template.functions.base import resolve
from stoker.template.hot import Template

KINDS = ("added", "deleted", "replaced", "updated", "unchanged")


@dataclass
class Change:
    name: str
    type: str
    kind: str
    reason: str = ""
    # Each changed property's old and new value (``{"old": ..., "new": ...}``); a new
    # value known only during the update is None with ``"known_after": true``.
    properties: dict[str, dict[str, Any]] | None = None
    # In a nested stack (a show_nested preview): the dotted path of the resources whose
    # nested stacks hold it, from the stack previewed (engine.nested_preview).
    nested_in: str | None = None
    # The plan's key-level view (plans.diff): each leaf that differs, old -> new, with
    # its path; for a resource added, each of its properties' values.
    values: list[dict[str, Any]] | None = None
    # The update hooks its apply stops at (``mark_hooks``), for a plan.
    hooks: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"resource_name": self.name, "resource_type": self.type, "reason": self.reason}
        if self.properties:
            shown["property_changes"] = self.properties
        if self.values:
            shown["values"] = self.values
        if self.nested_in:
            shown["parent_resource"] = self.nested_in.rsplit(".", 1)[-1]  # Heat's key
            shown["nested_in"] = self.nested_in
        return shown


def _property_changes(record: ResourceRecord, prop_diff: Mapping[str, Any] | None) -> dict[str, dict[str, Any]] | None:
    """Old -> new for each property ``prop_diff`` changes (what a plan shows)."""
    if not prop_diff:
        return None
    old = record.properties or {}
    found = {}
    for key in sorted(prop_diff):
        new = prop_diff[key]
        entry: dict[str, Any] = {"old": old.get(key), "new": shown(new)}
        if contains_unresolved(new):
            entry["known_after"] = True
        found[key] = entry
    return found


def _leaves(record: ResourceRecord, prop_diff: Mapping[str, Any] | None) -> list[dict[str, Any]] | None:
    """The key-level differences of the properties ``prop_diff`` changes."""
    if not prop_diff:
        return None
    old = record.properties or {}
    return [leaf for key in sorted(prop_diff) for leaf in diff.changes(f"properties.{key}", old.get(key), prop_diff[key])] or None


def new_values(runtime: StackRuntime, definition: ResourceDefinition) -> list[dict[str, Any]] | None:
    """The properties of a resource the action would make, as far as they are known."""
    try:
        instance = runtime.instance(runtime.new_record(definition), definition, fresh=True)
        resolved = instance.properties.resolved()
        # The values the template gives (defaults would bury them).
        return diff.additions("properties", {key: resolved[key] for key in definition.properties_data if key in resolved}) or None
    except (StokerError, TemplateErrors):
        return None


def as_result(changes: list[Change]) -> dict[str, Any]:
    """Heat's preview-update shape: {"resource_changes": {kind: [resource, ...]}}."""
    return {"resource_changes": {kind: [c.to_dict() for c in changes if c.kind == kind] for kind in KINDS}}


def preview_create(template: Template, implicit: Mapping[str, set[str]] | None = None) -> list[Change]:
    """Every resource added, in the order the create makes them: the template's
    dependencies and the ``implicit`` ones its types infer (``ValidationResult.implicit``),
    as the create's graph has them."""
    order = dependency_graph(template.resources, implicit).topological_order()
    return [Change(name, template.resources[name].resource_type, "added", "new resource") for name in order]


class PreviewRuntime(StackRuntime):
    """A runtime in which pending resources have no values yet."""

    pending: set[str]
    changing: set[str]
    # record id -> the record as a drift detection found it, for a converging update's
    # preview (``engine.drift.found``); its resources are in ``records`` already.
    found: Mapping[int, ResourceRecord] = MappingProxyType({})

    def resource_reference(self, name: str) -> Any:
        if name in self.pending:
            return UNRESOLVED
        return super().resource_reference(name)

    def resource_attribute(self, name: str, attribute: str, path: tuple[Any, ...]) -> Any:
        if name in self.pending or name in self.changing:
            return UNRESOLVED
        return super().resource_attribute(name, attribute, path)

    def resource_attributes(self, name: str) -> Any:
        if name in self.pending or name in self.changing:
            return UNRESOLVED
        return super().resource_attributes(name)


def preview_update(runtime: PreviewRuntime, old_template: Template) -> list[Change]:
    runtime.pending, runtime.changing = set(), set()
    definitions = runtime.template.resources
    context = ActionContext(runtime, None, None, None)  # type: ignore[arg-type]  # plan_update reads only the runtime
    changes: list[Change] = []
    for name in runtime.graph(definitions, update=True).topological_order():
        definition = definitions[name]
        record: ResourceRecord | None = runtime.current.get(name)
        if record is None or record.action == "INIT":
            runtime.pending.add(name)
            changes.append(Change(name, definition.resource_type, "added", "new resource", values=new_values(runtime, definition)))
            continue
        try:
            plan = plan_update(context, record, definition)
        except StokerError as error:
            changes.append(Change(name, definition.resource_type, "updated", f"the update would fail: {error}"))
            continue
        waiting_on = sorted(dep for dep in definition.required_resource_names() if dep in runtime.pending or dep in runtime.changing)
        # When every changed value is one only the update will know, the change may not
        # happen at all (the new value can equal the old): say so.
        prop_diff = plan.prop_diff or {}
        uncertain = bool(prop_diff) and all(contains_unresolved(v) for v in prop_diff.values())
        if waiting_on and uncertain:
            because = f" (may change: values from {', '.join(waiting_on)} are known only during the update)"
        elif waiting_on:
            because = f" (values from {', '.join(waiting_on)} are known only during the update)"
        else:
            because = ""
        if plan.kind != "none" and restricted(context, name, "replace" if plan.kind == "replace" else "update"):
            changes.append(Change(name, definition.resource_type, "updated", f"the update would fail: {'replace' if plan.kind == 'replace' else 'update'} is restricted for this resource"))
            continue
        if record.id in runtime.found and record.action != "CHECK" and prop_diff:
            because += " (drifted: the old values are the live object's)"
        if plan.kind == "replace":
            runtime.pending.add(name)
            reason = plan.reason
            if record.action == "CHECK" and record.status == "FAILED":
                reason = f"marked unhealthy: {record.status_reason}"
            changes.append(
                Change(name, definition.resource_type, "replaced", reason + because, _property_changes(record, plan.prop_diff), values=_leaves(record, plan.prop_diff))
            )
        elif plan.kind == "update":
            runtime.changing.add(name)
            changed = ", ".join(sorted(plan.prop_diff or {}))
            # No property of its own changed: what its nested stack is given did.
            if changed:
                what = f"{changed} changed"
            elif "nested_digest" not in (record.data or {}):
                # engine.drift took live values into its nested stack (converge, refresh).
                what = "its nested stack's resources drifted"
            else:
                what = "its nested stack's template changed"
            changes.append(
                Change(name, definition.resource_type, "updated", f"in place: {what}{because}", _property_changes(record, plan.prop_diff), values=_leaves(record, plan.prop_diff))
            )
        elif plan.kind == "metadata":
            changes.append(Change(name, definition.resource_type, "updated", "metadata or policies changed"))
        else:
            changes.append(Change(name, definition.resource_type, "unchanged"))
    for record in runtime.records:
        if record.current and record.name not in definitions:
            changes.append(Change(record.name, record.type, "deleted", "not in the new template" + _kept(record)))
    mark_hooks(runtime, changes)
    return changes


def mark_hooks(runtime: StackRuntime, changes: list[Change]) -> None:
    """Name on each change the update hooks its apply stops at, as the runtime's
    environment sets them (engine.hooks; a nested stack's runtime has its own):
    ``pre-update`` on every resource the update visits, changed or not, unless a type
    change replaces it at once; ``post-update`` after an update in place."""
    registry = runtime.environment.resource_registry
    definitions = runtime.template.resources
    for change in changes:
        if change.kind in ("added", "deleted"):
            continue
        record, definition = runtime.current.get(change.name), definitions.get(change.name)
        if record is None or definition is None:
            continue
        found = hooks_for(registry, change.name)
        stops = []
        if "pre-update" in found and updatable(runtime, record, definition):
            stops.append("pre-update")
        if "post-update" in found and change.kind == "updated":
            stops.append("post-update")
        change.hooks = stops or None


def _kept(record: ResourceRecord) -> str:
    """What a delete keeps, by the resource's deletion_policy (lifecycle's delete)."""
    policy = (record.definition or {}).get("deletion_policy")
    if policy == "Retain":
        return " (deletion_policy Retain: it leaves the stack, its physical resource is kept)"
    if policy == "Snapshot":
        return " (deletion_policy Snapshot: a snapshot is taken before it is deleted)"
    return ""


def preview_runtime(base: StackRuntime, template: Template, params: Mapping[str, Any]) -> PreviewRuntime:
    runtime = PreviewRuntime(base.stack, template, base.environment, params, base.registry, None, base.clock, base.records)
    runtime.sealer = base.sealer
    # Nested stacks are only read (a group's members for its removal policies).
    runtime.nested = base.nested
    return runtime


# -- the stack a create would make (Heat's preview_stack) ------------------------------


class _PreviewContext(ValidationContext):
    """Values as Heat's preview shows them: a reference to a resource not created yet is
    its name (Heat's ``get_reference_id`` without a physical id); its attributes are not
    known (None once shown)."""

    def resource_reference(self, name: str) -> Any:
        return name


def preview_context(result: ValidationResult, registry: ResourceRegistry) -> ValidationContext:
    """What resolves a validated template's values as Heat's preview shows them."""
    return _PreviewContext(result.template, result.params, result.classes, [], registry)


def preview_resources(result: ValidationResult, registry: ResourceRegistry, stack_name: str, tenant: str, parent_resource: str | None = None) -> list[Any]:
    """Heat's ``Stack.preview_resources`` formatted (``format_stack_resource`` with its
    properties): every resource of a validated template in template order, with its
    properties resolved and their defaults applied. A nested stack's resource is the
    list of its child's resources instead (stack name ``<stack>-<resource>``)."""
    context = preview_context(result, registry)
    definitions = result.template.resources
    required_by: dict[str, list[str]] = {name: [] for name in definitions}
    for name, definition in definitions.items():
        for needed in sorted(definition.required_resource_names()):
            if needed in required_by:
                required_by[needed].append(name)
    stack_identity = {"stack_name": stack_name, "stack_id": "None", "tenant": tenant, "path": ""}
    entries: list[Any] = []
    for name, definition in definitions.items():
        if name in result.nested:
            entries.append(preview_resources(result.nested[name], registry, f"{stack_name}-{name}", tenant, parent_resource=name))
            continue
        cls = result.classes.get(name)
        bound = definition.bind(lambda value: resolve(value, context))
        entry: dict[str, Any] = {
            "resource_name": name,
            "resource_type": definition.resource_type,
            "resource_action": "INIT",
            "resource_status": "COMPLETE",
            "resource_status_reason": "",
            "physical_resource_id": "",
            "resource_identity": {**stack_identity, "path": f"/resources/{name}"},
            "stack_identity": dict(stack_identity),
            "stack_name": stack_name,
            "required_by": required_by[name],
            "description": definition.description or "",
            "metadata": _shown_or_none(bound.resolved_metadata) or {},
            "attributes": {key: None for key in (cls.all_attributes_schema() if cls else {}) if key != "show"},
            "properties": _preview_properties(bound, cls) if cls else {},
            "creation_time": None,
            "updated_time": None,
        }
        if parent_resource is not None:
            entry["parent_resource"] = parent_resource
        entries.append(entry)
    return entries


def _preview_properties(definition: ResourceDefinition, cls: type[Resource]) -> dict[str, Any]:
    """Every property of the type (Heat's ``format_resource_properties``): its value, or
    its default; None where it cannot be read. No custom constraint is checked (no
    validation context): these values were validated already, as far as they are known."""
    properties = definition.properties(cls.properties_schema, None, accept_any=cls.accepts_any_property)
    values: dict[str, Any] = {}
    for key in properties:
        schema = cls.properties_schema.get(key)
        if definition.properties_data.get(key) is None and schema is not None and schema.default is None:
            values[key] = None  # neither given nor defaulted: Heat's None, not an empty value
        else:
            values[key] = _shown_or_none(lambda key=key: properties[key])
    return values


def _shown_or_none(read: Any) -> Any:
    try:
        return shown(read())
    except StokerError:
        return None
