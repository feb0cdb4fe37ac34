"""OS::Heat::None."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from stoker.sdk import support
from stoker.sdk.resource import Resource


class NoneResource(Resource):
    """Enables easily disabling certain resources via the resource_registry.

    It does nothing, but can effectively stub out any other resource because it will
    accept any properties and return any attribute (as None). It never needs an update.
    """

    support_status = support.SupportStatus(version="5.0.0")
    accepts_any_property = True

    def handle_create(self) -> None:
        self.resource_id_set(str(uuid.uuid4()))
        self.data_set("is_placeholder", "True")

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> None:
        return None

    def validate(self) -> None:
        return None

    def get_attribute(self, key: str) -> Any:
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::None": NoneResource}
