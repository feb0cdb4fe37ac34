"""OS::Zaqar::Queue, as Heat has it.

Owns: creating a queue (its name: the ``name`` property, else the physical resource name)
with its metadata, replacing the metadata in place, delete tolerating a queue already gone,
check, ``href`` and ``show``. The physical id is the queue's name, recorded before the queue
is made: Zaqar's create is an idempotent PUT, so a create cut short is finished by running
it again and a delete of a queue never made is a 404, tolerated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource

__all__ = ["ZaqarQueue", "resource_mapping"]


class ZaqarQueue(Resource):
    """A resource for managing Zaqar queues.

    Queue is a logical entity that groups messages. Ideally a queue is created per work
    type. For example, if you want to compress files, you would create a queue dedicated
    for this job. Any application that reads from this queue would only compress files.
    """

    support_status = support.SupportStatus(version="2014.2")
    default_client_name = "zaqar"
    physical_resource_name_limit = 64

    PROPERTIES = (NAME, METADATA) = ("name", "metadata")
    ATTRIBUTES = (QUEUE_ID, HREF) = ("queue_id", "href")

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING,
            "Name of the queue instance to create.",
            constraints=[constraints.Length(max=physical_resource_name_limit)],
        ),
        METADATA: properties.Schema(
            properties.Schema.MAP,
            "Arbitrary key/value metadata to store contextual information about this queue.",
            update_allowed=True,
        ),
    }

    attributes_schema = {
        QUEUE_ID: attributes.Schema(
            "ID of the queue.",
            cache_mode=attributes.Schema.CACHE_NONE,
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                version="6.0.0",
                previous_status=support.SupportStatus(
                    status=support.DEPRECATED,
                    message="Use get_resource|Ref command instead. For example: { get_resource : <resource_name> }",
                    version="2015.1",
                    previous_status=support.SupportStatus(version="2014.1"),
                ),
            ),
        ),
        HREF: attributes.Schema("The resource href of the queue."),
    }

    def physical_resource_name(self) -> str:
        name = self.properties.resolved().get(self.NAME)
        if name:
            return str(name)
        generated = super().physical_resource_name()
        limit = self.physical_resource_name_limit
        if len(generated) <= limit:
            return generated
        # As Heat shortens it: the stack and resource part is cut, the unique tail kept.
        head, _, tail = generated.rpartition("-")
        return f"{head[: limit - len(tail) - 1]}-{tail}"

    def handle_create(self) -> None:
        queue = self.physical_resource_name()
        # Recorded first: the PUT is idempotent, so a create cut short after it is done
        # again, and a delete of a queue that was never made is a tolerated 404.
        self.resource_id_set(queue)
        self.client_plugin().create_queue(queue, self.properties[self.METADATA] or {})

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if self.METADATA in prop_diff:
            self.client_plugin().set_queue_metadata(
                self.resource_id, dict(prop_diff[self.METADATA] or {})
            )

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client().delete_queue(self.resource_id, ignore_missing=True)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        # Zaqar answers a read of any queue name (it makes queues lazily): the listing says
        # whether this one is still there.
        if not self.client_plugin().queue_exists(self.resource_id):
            raise ResourceFailure(f"The queue {self.resource_id} does not exist in Zaqar")

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return {self.METADATA: self.client_plugin().queue_metadata(self.resource_id)}

    def parse_live_resource_data(
        self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]
    ) -> dict[str, Any]:
        name = self.resource_id
        if name == super().physical_resource_name():
            name = None
        return {self.NAME: name, self.METADATA: resource_data[self.METADATA]}

    def _resolve_attribute(self, name: str) -> Any:
        if name == self.QUEUE_ID:
            return self.resource_id
        if name == self.HREF:
            return self.client_plugin().queue_href(self.physical_resource_name())
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Zaqar::Queue": ZaqarQueue}
