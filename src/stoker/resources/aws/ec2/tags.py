"""The ``Tags`` property the EC2 types share: a list of ``{Key, Value}`` maps, as Heat
declares it on each type (most of them do not implement it).

Owns: the schema and turning tags into a metadata map.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stoker.sdk import properties

__all__ = ["TAG_KEY", "TAG_VALUE", "tags_schema", "tags_to_metadata"]

TAG_KEY, TAG_VALUE = "Key", "Value"


def tags_schema(
    description: str | None, *, implemented: bool = True, on_list: bool = False, **keywords: Any
) -> properties.Schema:
    """Heat's Tags schema. Heat puts the description on the list or on its map entries,
    type by type (``on_list`` says which); the list always carries it here, since every
    property of a stoker type is documented."""
    entry = properties.Schema(
        properties.Schema.MAP,
        None if on_list else description,
        schema={
            TAG_KEY: properties.Schema(properties.Schema.STRING, "The tag's key.", required=True),
            TAG_VALUE: properties.Schema(
                properties.Schema.STRING, "The tag's value.", required=True
            ),
        },
        implemented=implemented,
    )
    return properties.Schema(properties.Schema.LIST, description, schema=entry, **keywords)


def tags_to_metadata(tags: Sequence[Any] | None) -> dict[str, str] | None:
    if not tags:
        return None
    return {str(tag[TAG_KEY]): str(tag[TAG_VALUE]) for tag in tags}
