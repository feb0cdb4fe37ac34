"""The ``zaqar`` client plugin (openstacksdk's message proxy, Zaqar's v2 API) and Heat's
``zaqar.queue`` constraint (``mistral.workflow``, which OS::Zaqar::MistralTrigger uses, is
the mistral client plugin's).

openstacksdk's proxy creates, reads and deletes queues and subscriptions; what it lacks
(queue metadata updates, subscription updates, signed URLs, reading messages without its
listing, which never ends on Zaqar's message markers) goes through the same proxy as a
keystoneauth adapter (its endpoint discovery, its token), with the ``Client-ID`` header
Zaqar asks every request for. Zaqar has no microversions.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import quote

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin, http_status
from stoker.resources.openstack.constraints import LookupConstraint
from stoker.sdk.exceptions import ClientPluginError, ValidationError

__all__ = [
    "QueueConstraint",
    "ZaqarClientPlugin",
    "client_mapping",
    "constraint_mapping",
]

# Zaqar's JSON-patch media type for queue metadata updates (API v2).
JSON_PATCH = "application/openstack-messaging-v2.0-json-patch"
# Items per page of Zaqar's listings (its maximum).
LISTING_PAGE = 20
# Heat's longest queue name (Zaqar's own limit).
QUEUE_NAME_MAX = 64


class ZaqarRequestError(ClientPluginError):
    """Zaqar refused a request; the message carries its status and answer."""

    def __init__(self, method: str, path: str, status: int, answer: str):
        super().__init__(f"Zaqar refused {method} {path}: {status} {answer}")
        self.status_code = status


class ZaqarClientPlugin(OpenStackClientPlugin):
    """Zaqar through openstacksdk's ``connection.message``."""

    name = "zaqar"
    service_type = "messaging"
    proxy_name = "message"
    # Heat's default TTL (seconds) of the messages it posts itself.
    DEFAULT_TTL = 3600

    def __init__(self, *arguments: Any, **keywords: Any) -> None:
        super().__init__(*arguments, **keywords)
        # One client id per plugin, as zaqarclient has one per client.
        self.client_id = str(uuid.uuid4())

    # -- requests the proxy has no method for -------------------------------------------

    def headers(self) -> dict[str, str]:
        return {"Client-ID": self.client_id, "X-PROJECT-ID": self.project_id()}

    def project_id(self) -> str:
        return str(self.client().get_project_id() or "")

    def request(
        self, method: str, path: str, json: Any = None, content_type: str | None = None
    ) -> Any:
        """One request on Zaqar's v2 endpoint; the decoded answer (None when empty).
        A refusal raises ZaqarRequestError with the HTTP status (``is_not_found`` knows 404)."""
        headers = self.headers()
        if content_type:
            headers["Content-Type"] = content_type
        response = self.client().request(
            path, method.upper(), json=json, headers=headers, raise_exc=False
        )
        if response.status_code >= 400:
            raise ZaqarRequestError(method.upper(), path, response.status_code, response.text[:500])
        return response.json() if response.content else None

    @staticmethod
    def queue_path(queue: str) -> str:
        return f"/queues/{quote(queue, safe='')}"

    def queue_href(self, queue: str) -> str:
        """Heat's ``href``: the queue's URL on the catalog's endpoint."""
        endpoint = str(self.client().get_endpoint()).rstrip("/")
        if not endpoint.endswith("/v2"):
            endpoint += "/v2"
        return endpoint + self.queue_path(queue)

    def create_queue(self, queue: str, metadata: dict[str, Any] | None = None) -> None:
        """Create (or keep) the queue, with ``metadata`` as its whole metadata. Zaqar's PUT
        is idempotent: 201 made, 204 there already."""
        self.request("PUT", self.queue_path(queue), json=dict(metadata or {}))

    def queue_metadata(self, queue: str) -> dict[str, Any]:
        """The queue's metadata, Zaqar's reserved ``_`` keys included (404 when gone)."""
        return dict(self.request("GET", self.queue_path(queue)) or {})

    def listing(self, path: str, key: str) -> list[dict[str, Any]]:
        """Every item of a Zaqar listing, following its ``next`` links (Zaqar pages by 20
        at most; openstacksdk's own listings ask for more, or never end)."""
        found: list[dict[str, Any]] = []
        separator = "&" if "?" in path else "?"
        next_path: str | None = f"{path}{separator}limit={LISTING_PAGE}"
        while next_path:
            page = self.request("GET", next_path) or {}
            items = page.get(key, [])
            found += items
            following = [
                link["href"] for link in page.get("links", []) if link.get("rel") == "next"
            ]
            next_path = following[0].removeprefix("/v2") if following and items else None
        return found

    def queue_exists(self, queue: str) -> bool:
        """Whether the queue is listed: Zaqar answers a GET of any queue name (queues
        are made lazily), so existence is read from the listing."""
        return any(item.get("name") == queue for item in self.listing("/queues", "queues"))

    def subscriptions(self, queue: str) -> list[dict[str, Any]]:
        return self.listing(f"{self.queue_path(queue)}/subscriptions", "subscriptions")

    def set_queue_metadata(self, queue: str, metadata: dict[str, Any]) -> None:
        """Make ``metadata`` the queue's user metadata: keys left out are removed (the
        reserved ``_`` keys stay Zaqar's)."""
        current = {
            key: value
            for key, value in self.queue_metadata(queue).items()
            if not key.startswith("_")
        }
        operations: list[dict[str, Any]] = [
            {"op": "remove", "path": f"/metadata/{key}"}
            for key in sorted(current)
            if key not in metadata
        ]
        operations += [
            {
                "op": "replace" if key in current else "add",
                "path": f"/metadata/{key}",
                "value": value,
            }
            for key, value in metadata.items()
        ]
        if operations:
            self.request("PATCH", self.queue_path(queue), json=operations, content_type=JSON_PATCH)

    def sign_queue_url(
        self,
        queue: str,
        paths: list[str] | None,
        methods: list[str] | None,
        ttl_seconds: int | None,
    ) -> dict[str, Any]:
        """A pre-signed URL of the queue (Zaqar's ``/share``): signature, expires, paths,
        methods, project."""
        body: dict[str, Any] = {}
        if paths:
            body["paths"] = list(paths)
        if methods:
            body["methods"] = list(methods)
        if ttl_seconds is not None:
            body["expires"] = _expiry(ttl_seconds)
        return dict(self.request("POST", self.queue_path(queue) + "/share", json=body) or {})

    def update_subscription(
        self, queue: str, subscription_id: str, changes: dict[str, Any]
    ) -> None:
        self.request(
            "PATCH", f"{self.queue_path(queue)}/subscriptions/{subscription_id}", json=changes
        )

    def get_subscription(self, queue: str, subscription_id: str) -> dict[str, Any]:
        return dict(
            self.request("GET", f"{self.queue_path(queue)}/subscriptions/{subscription_id}") or {}
        )

    def post_messages(self, queue: str, messages: list[dict[str, Any]]) -> list[str]:
        answer = (
            self.request("POST", self.queue_path(queue) + "/messages", json={"messages": messages})
            or {}
        )
        return [str(resource).rsplit("/", 1)[-1] for resource in answer.get("resources", [])]

    def read_messages(self, queue: str, limit: int = 20) -> list[dict[str, Any]]:
        """Up to ``limit`` messages of the queue, oldest first, without claiming them."""
        answer = (
            self.request("GET", f"{self.queue_path(queue)}/messages?echo=true&limit={limit}") or {}
        )
        return list(answer.get("messages", []))

    def pop_messages(self, queue: str, count: int = 1) -> list[dict[str, Any]]:
        """Take up to ``count`` messages off the queue, oldest first (Zaqar's pop: each is
        claimed and deleted in one call, so no two readers take the same one)."""
        answer = self.request("DELETE", f"{self.queue_path(queue)}/messages?pop={count}") or {}
        return list(answer.get("messages", []))

    def delete_queue(self, queue: str) -> None:
        """Delete the queue and its messages, tolerating one already gone."""
        try:
            self.client().delete_queue(queue, ignore_missing=True)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.ignore_not_found(error)

    # -- errors and finders ---------------------------------------------------------------

    def is_not_found(self, error: BaseException) -> bool:
        return super().is_not_found(error) or http_status(error) == 404

    def get_queue(self, queue_name: Any) -> str:
        """Heat's ``zaqar.queue`` check: a name of 1 to 64 characters. Zaqar makes queues
        on first use, so any such name names a queue."""
        if not isinstance(queue_name, str):
            raise ValidationError("Queue name must be a string")
        if not 0 < len(queue_name) <= QUEUE_NAME_MAX:
            raise ValidationError("Queue name length must be 1-64")
        return queue_name


def _expiry(ttl_seconds: int) -> str:
    """Zaqar's ``expires`` (ISO 8601, UTC, no zone suffix) ``ttl_seconds`` from now."""
    import datetime

    moment = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=int(ttl_seconds))
    return moment.replace(tzinfo=None).isoformat(timespec="seconds")


class QueueConstraint(LookupConstraint):
    name, client_plugin_name, finder = "zaqar.queue", "zaqar", "get_queue"


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"zaqar": ZaqarClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {constraint.name: constraint for constraint in (QueueConstraint,)}
