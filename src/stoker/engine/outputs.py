"""Stack outputs, resolved when asked for (Heat's ``format_stack_output``): one failing
output reports its error as ``output_error`` and fails neither the request, the stack
nor the other outputs. An output that reads a resource not created yet is None, with no
error, as Heat's ``get_attr`` of a resource that is not ready."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from stoker.engine.stack import StackRuntime
from stoker.sdk.exceptions import StokerError
from stoker.sdk.properties import UNRESOLVED, contains_unresolved
from stoker.template import budget
from stoker.template.definitions import OutputDefinition


def resolve_outputs(runtime: StackRuntime, names: list[str] | None = None) -> list[dict[str, Any]]:
    return output_entries(runtime.template.outputs.values(), runtime.resolve, names)


def output_entries(
    outputs: Iterable[OutputDefinition], resolve: Callable[[Any], Any], names: list[str] | None = None
) -> list[dict[str, Any]]:
    """Each output (of ``names``, or all) as Heat formats it, resolved by ``resolve``."""
    results = []
    for output in outputs:
        if names is not None and output.name not in names:
            continue
        entry: dict[str, Any] = {"output_key": output.name, "description": output.description or "No description given"}
        value, error = output_value(output, resolve)
        if error is not None:
            entry["output_error"] = error
        entry["output_value"] = value
        results.append(entry)
    return results


def output_value(output: OutputDefinition, resolve: Callable[[Any], Any]) -> tuple[Any, str | None]:
    """The output's value and None, or None and why it cannot be computed (the error's
    own text, as Heat's ``str(ex)``: no template path before it)."""
    try:
        value = resolve(output.value)
        if contains_unresolved(value):
            return shown(value), None
        return budget.check(value, f"The output {output.name!r}", f"outputs.{output.name}.value"), None
    except StokerError as error:
        return None, f"{error.message} ({error.hint})" if error.hint else error.message
    except Exception as error:  # noqa: BLE001 - a plugin's attribute code may raise anything
        return None, f"{type(error).__name__}: {error}"


def shown(value: Any) -> Any:
    """A value with what is not known yet (``UNRESOLVED``) as None, as Heat shows it."""
    if value is UNRESOLVED:
        return None
    if isinstance(value, dict):
        return {key: shown(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shown(item) for item in value]
    return value
