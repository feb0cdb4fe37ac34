"""OS::Zaqar::SignedQueueURL, as Heat has it.

Owns: asking Zaqar to sign a URL of a queue (its ``/share`` call) and keeping what it
answered (signature, expiry, paths, methods, project) as the resource's data, the
attributes built from it (``query_str`` for Aodh's ``zaqar://?`` actions). Zaqar keeps
nothing for a signed URL: there is nothing to delete or to orphan, and every property
change makes a new one (a replacement). The signature is a capability: kept encrypted at
rest, shown only as the attributes Heat shows.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.resource import Resource

__all__ = ["ZaqarSignedQueueURL", "resource_mapping"]


class ZaqarSignedQueueURL(Resource):
    """A resource for managing signed URLs of Zaqar queues.

    Signed URLs allow to give specific access to queues, for example to be used as alarm
    notifications. To supply a signed queue URL to Aodh as an action URL, pass "zaqar://?"
    followed by the query_str attribute of the signed queue URL resource.
    """

    support_status = support.SupportStatus(version="8.0.0")
    default_client_name = "zaqar"

    PROPERTIES = (QUEUE, PATHS, TTL, METHODS) = ("queue", "paths", "ttl", "methods")
    ATTRIBUTES = (SIGNATURE, EXPIRES, PATHS_ATTR, METHODS_ATTR, PROJECT, QUERY_STR) = (
        "signature",
        "expires",
        "paths",
        "methods",
        "project",
        "query_str",
    )

    properties_schema = {
        QUEUE: properties.Schema(
            properties.Schema.STRING,
            "Name of the queue instance to create a URL for.",
            required=True,
        ),
        PATHS: properties.Schema(
            properties.Schema.LIST,
            description="List of allowed paths to be accessed. Default to allow queue messages URL.",
        ),
        TTL: properties.Schema(
            properties.Schema.INTEGER,
            description="Time validity of the URL, in seconds. Default to one day.",
        ),
        METHODS: properties.Schema(
            properties.Schema.LIST,
            description="List of allowed HTTP methods to be used. Default to allow GET.",
            schema=properties.Schema(
                properties.Schema.STRING,
                constraints=[constraints.AllowedValues(["GET", "DELETE", "PATCH", "POST", "PUT"])],
            ),
        ),
    }

    attributes_schema = {
        SIGNATURE: attributes.Schema("Signature of the URL built by Zaqar."),
        EXPIRES: attributes.Schema("Expiration date of the URL."),
        PATHS_ATTR: attributes.Schema("Comma-delimited list of paths for convenience."),
        METHODS_ATTR: attributes.Schema("Comma-delimited list of methods for convenience."),
        PROJECT: attributes.Schema("The ID of the Keystone project containing the queue."),
        QUERY_STR: attributes.Schema("An HTTP URI query fragment."),
    }

    def handle_create(self) -> None:
        # Zaqar's defaults (the messages path, GET, a day) for what the template leaves out.
        given = self.properties.resolved()
        signed = self.client_plugin().sign_queue_url(
            self.properties[self.QUEUE],
            given.get(self.PATHS),
            given.get(self.METHODS),
            given.get(self.TTL),
        )
        self.data_set(self.SIGNATURE, signed["signature"], redact=True)
        self.data_set(self.EXPIRES, signed["expires"])
        self.data_set(self.PATHS_ATTR, json.dumps(signed["paths"]))
        self.data_set(self.METHODS_ATTR, json.dumps(signed["methods"]))
        self.data_set(self.PROJECT, signed["project"])
        self.resource_id_set(self.physical_resource_name())

    def handle_delete(self) -> None:
        """Zaqar cannot revoke a signed URL; it lapses at its expiry."""
        return None

    def handle_check(self) -> None:
        # Nothing lives in Zaqar for a signed URL: the queue it signs must still answer.
        self.client_plugin().queue_metadata(self.properties[self.QUEUE])

    def _query_str(self, data: dict[str, Any]) -> str:
        return urlencode(
            {
                "signature": data[self.SIGNATURE],
                "expires": data[self.EXPIRES],
                "paths": ",".join(json.loads(data[self.PATHS_ATTR])),
                "methods": ",".join(json.loads(data[self.METHODS_ATTR])),
                "project_id": data[self.PROJECT],
                "queue_name": self.properties[self.QUEUE],
            }
        )

    def _resolve_attribute(self, name: str) -> Any:
        if not self.resource_id:
            return None
        data = self.data()
        if name in (self.SIGNATURE, self.EXPIRES, self.PROJECT):
            return data[name]
        if name in (self.PATHS_ATTR, self.METHODS_ATTR):
            return json.loads(data[name])
        if name == self.QUERY_STR:
            return self._query_str(data)
        return None

    def _show_resource(self) -> dict[str, Any] | None:
        if not self.resource_id:
            return None
        return {name: self._resolve_attribute(name) for name in self.ATTRIBUTES}

    @classmethod
    def reads_live_state(cls) -> bool:
        # The ``show`` attribute is the signature the stack keeps; nothing of it lives in
        # Zaqar to compare (drift: NOT_CHECKED) or to take over (an import is refused).
        return False


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Zaqar::SignedQueueURL": ZaqarSignedQueueURL}
