"""Stack outputs, resolved when asked for; one failing output reports its error and
does not fail the request."""

from __future__ import annotations

from typing import Any

from stoker.engine.stack import StackRuntime
from stoker.sdk.exceptions import StokerError
from stoker.sdk.properties import contains_unresolved
from stoker.template import budget


def resolve_outputs(runtime: StackRuntime, names: list[str] | None = None) -> list[dict[str, Any]]:
    results = []
    for name, output in runtime.template.outputs.items():
        if names is not None and name not in names:
            continue
        entry: dict[str, Any] = {"output_key": name, "description": output.description or "No description given"}
        try:
            value = runtime.resolve(output.value)
            if contains_unresolved(value):
                entry["output_value"] = None
                entry["output_error"] = "The output depends on resources that are not created"
            else:
                entry["output_value"] = budget.check(value, f"The output {name!r}", f"outputs.{name}.value")
        except StokerError as error:
            entry["output_value"] = None
            entry["output_error"] = str(error)
        except Exception as error:  # noqa: BLE001 - a plugin's attribute code may raise anything
            entry["output_value"] = None
            entry["output_error"] = f"{type(error).__name__}: {error}"
        results.append(entry)
    return results
