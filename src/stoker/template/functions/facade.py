"""resource_facade: what the parent resource says, inside a template that implements it.

A template used as a resource type (a provider template, run as a nested stack) reads its
facade resource's metadata, deletion_policy or update_policy through the context's
optional ``resource_facade(attribute)``; a top-level stack has none.
"""

from __future__ import annotations

from typing import Any

from stoker.template.functions.base import Function, ResolutionContext

ATTRIBUTES = ("metadata", "deletion_policy", "update_policy")


class ResourceFacade(Function):
    """``{resource_facade: metadata | deletion_policy | update_policy}``."""

    __slots__ = ()
    description = "A function for retrieving data in a parent provider template."
    attributes: tuple[str, ...] = ATTRIBUTES

    def check(self) -> None:
        if self.args not in self.attributes:
            raise self.error(f'Incorrect arguments to "{self.fn_name}" should be one of: {", ".join(self.attributes)}')

    def result(self, context: ResolutionContext) -> Any:
        facade = getattr(context, "resource_facade", None)
        if facade is None:
            raise self.error(
                f"{self.fn_name} is only available in a template that implements a resource type (a nested stack)",
                hint="this stack has no parent resource",
            )
        # The context speaks HOT: the CFN spellings (Metadata, ...) map onto it.
        return facade(ATTRIBUTES[self.attributes.index(self.args)])
