"""What Heat's quota types (OS::Nova::Quota, OS::Cinder::Quota, OS::Neutron::Quota) share:
a property per limit, at least one of them given, ``-1`` meaning no limit, the project
resolved from a name or id, the physical id being the resource's physical name.

Owns: the schema of one limit, the "at least one limit" check with Heat's message, and
the limits a resource's properties give.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import constraints, properties
from stoker.sdk.exceptions import ValidationError

__all__ = ["given_limits", "limit_schema", "project_schema", "require_a_limit"]


def limit_schema(description: str, **keywords: Any) -> properties.Schema:
    """An integer limit: ``-1`` removes it (Heat's wording in each description)."""
    return properties.Schema(
        properties.Schema.INTEGER,
        f"{description} Setting the value to -1 removes the limit.",
        constraints=[constraints.Range(min=-1)],
        update_allowed=True,
        **keywords,
    )


def project_schema(description: str) -> properties.Schema:
    return properties.Schema(
        properties.Schema.STRING,
        description,
        required=True,
        constraints=[constraints.CustomConstraint("keystone.project")],
    )


def given_limits(values: Mapping[str, Any], project_key: str) -> dict[str, int]:
    """The limits set in ``values`` (every property but the project, not None)."""
    return {
        key: int(value) for key, value in values.items() if key != project_key and value is not None
    }


def require_a_limit(
    resource_name: str, values: Mapping[str, Any], project_key: str, limits: list[str]
) -> None:
    """Heat's PropertyUnspecifiedError when no limit is given, placed at the resource."""
    if not given_limits(values, project_key):
        raise ValidationError(
            f"At least one of the following properties must be specified: {', '.join(limits)}.",
            path=f"resources.{resource_name}.properties",
            hint="give at least one limit (-1 for no limit)",
        )
