"""The ``swift`` client plugin (openstacksdk's object-store proxy): the container and
object calls Heat's Swift types make, with Swift's own headers, and the temp URLs
signals are PUT to.

Owns: the account, container and object requests (through the proxy, so openstacksdk
finds the endpoint and authenticates), their answers as lower-cased header maps, the
account's temp-URL key (set once, when missing, as Heat does), temp URLs, signal URLs
(an object in a versioned container, so every PUT is kept) and checking a temp URL's
path. Heat 27 registers no custom constraint for Swift, so neither does stoker.

Must not: put a temp URL (its signature is a credential) into a message.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any
from urllib import parse

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin

__all__ = ["IN_PROGRESS", "SwiftClientPlugin", "client_mapping", "constraint_mapping"]

# The body of a signal object before anything was PUT to it (Heat's swift.IN_PROGRESS).
IN_PROGRESS = "in progress"
# Temp URLs Heat makes never expire before this (seconds since the epoch, 2038).
MAX_EPOCH = 2147483647
TEMP_URL_KEY_HEADER = "x-account-meta-temp-url-key"
# Objects one container listing returns at most (Swift's container_listing_limit).
LISTING_LIMIT = 10000


class SwiftClientPlugin(OpenStackClientPlugin):
    """Swift through openstacksdk's ``connection.object_store``."""

    name = "swift"
    service_type = "object-store"
    proxy_name = "object_store"

    # -- requests ---------------------------------------------------------------------

    def _request(self, method: str, path: str, **arguments: Any) -> Any:
        from openstack import exceptions

        response = self.client().request(path, method, **arguments)
        exceptions.raise_from_response(response)
        return response

    @staticmethod
    def _quoted(*names: str) -> str:
        return "/" + "/".join(parse.quote(name, safe="") for name in names)

    @staticmethod
    def _headers(response: Any) -> dict[str, str]:
        return {key.lower(): value for key, value in response.headers.items()}

    @property
    def url(self) -> str:
        """The account's URL (the catalog's object-store endpoint for this project)."""
        return str(self.client().get_endpoint()).rstrip("/")

    @property
    def project_id(self) -> str:
        return str(self.connection.current_project_id)

    def identity_names(self) -> tuple[str, str]:
        """The names of the project and the user this connection acts as (Keystone's
        token says them), for ACLs of the form ``<project>:<user>``."""
        session = self.connection.session
        access = session.auth.get_access(session)
        return str(access.project_name or ""), str(access.username or "")

    def head_account(self) -> dict[str, str]:
        return self._headers(self._request("HEAD", ""))

    def post_account(self, headers: Mapping[str, str]) -> None:
        self._request("POST", "", headers=dict(headers))

    def put_container(self, container: str, headers: Mapping[str, str] | None = None) -> None:
        self._request("PUT", self._quoted(container), headers=dict(headers or {}))

    def head_container(self, container: str) -> dict[str, str]:
        return self._headers(self._request("HEAD", self._quoted(container)))

    def get_container(self, container: str) -> tuple[dict[str, str], list[dict[str, Any]]]:
        """The container's headers and every object in it (listed page by page)."""
        objects: list[dict[str, Any]] = []
        marker = ""
        while True:
            response = self._request(
                "GET",
                self._quoted(container),
                params={"format": "json", "marker": marker, "limit": LISTING_LIMIT},
            )
            page = response.json() if response.content else []
            objects.extend(page)
            if len(page) < LISTING_LIMIT:
                return self._headers(response), objects
            marker = page[-1]["name"]

    def delete_container(self, container: str) -> None:
        self._request("DELETE", self._quoted(container))

    def put_object(self, container: str, name: str, contents: str | bytes) -> None:
        self._request("PUT", self._quoted(container, name), data=contents)

    def head_object(self, container: str, name: str) -> dict[str, str]:
        return self._headers(self._request("HEAD", self._quoted(container, name)))

    def get_object(self, container: str, name: str) -> tuple[dict[str, str], bytes]:
        response = self._request("GET", self._quoted(container, name))
        return self._headers(response), response.content

    def delete_object(self, container: str, name: str) -> None:
        self._request("DELETE", self._quoted(container, name))

    # -- temp URLs ----------------------------------------------------------------------

    def is_valid_temp_url_path(self, path: str) -> bool:
        """Whether ``path`` is a Swift temp URL's path for this project: ``/v1/<account
        ending in the project's id>/<container>/<object>``, the object more than slashes."""
        parts = path.split("/", 4)
        return bool(
            len(parts) == 5
            and not parts[0]
            and parts[1] == "v1"
            and parts[2].endswith(self.project_id)
            and parts[3]
            and parts[4].strip("/")
        )

    def temp_url_key(self) -> str:
        """The account's temp-URL key, set to a random one first when it has none."""
        key = self.head_account().get(TEMP_URL_KEY_HEADER)
        if not key:
            self.post_account({TEMP_URL_KEY_HEADER: secrets.token_hex(16)})
            key = self.head_account()[TEMP_URL_KEY_HEADER]
        return key

    def get_temp_url(self, container: str, name: str, method: str = "PUT") -> str:
        """A temp URL for ``method`` on the object, valid until 2038 as Heat's are."""
        account = parse.urlparse(self.url)
        path = f"{account.path}/{container}/{name}"
        signed = self.client().generate_temp_url(
            path, MAX_EPOCH - 60, method, absolute=True, temp_url_key=self.temp_url_key()
        )
        return f"{account.scheme}://{account.netloc}{signed}"

    def get_signal_url(self, container: str, name: str) -> str:
        """A temp URL many signals can be PUT to: the container keeps every version of
        the object (legacy versioning into itself, as Heat sets it up)."""
        self.put_container(container, {"x-versions-location": container})
        self.put_object(container, name, IN_PROGRESS)
        return self.get_temp_url(container, name)


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"swift": SwiftClientPlugin}


def constraint_mapping() -> dict[str, Any]:
    return {}
