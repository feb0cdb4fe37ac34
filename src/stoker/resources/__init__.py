"""Built-in resource plugins, written against the same SDK as third-party plugins."""

from __future__ import annotations

from stoker.sdk.resource import Resource


def builtin_mapping() -> dict[str, type[Resource]]:
    from stoker.resources.heat import (
        none,
        random_string,
        resource_group,
        stack,
        test_resource,
        value,
    )

    mapping: dict[str, type[Resource]] = {}
    for module in (none, random_string, resource_group, stack, test_resource, value):
        mapping.update(module.resource_mapping())
    return mapping
