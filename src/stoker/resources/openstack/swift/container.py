"""OS::Swift::Container, as Heat has it.

Owns: creating a container with its ACLs and metadata (and the account's metadata Heat
sets beside it), delete (objects first with ``PurgeOnDelete``; a non-empty container
otherwise refuses, as Heat's does), check, and the URL and usage attributes. Every
property change replaces the container: Heat updates none in place. A named container
replaced under the same name stays (it is the replacement's), where Heat deletes it.

The physical id is the container's name, recorded before the container is made: a
crash between the two leaves an id whose container is missing (its delete finds
nothing to do), never a container the stack does not know.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib import parse

from stoker.sdk import attributes, properties, support
from stoker.sdk.exceptions import StokerError
from stoker.sdk.resource import Resource

__all__ = ["SwiftContainer", "resource_mapping"]

# Objects one poll of a purging delete removes at most (each is one request).
PURGE_BATCH = 50


class NonEmptyContainerError(StokerError):
    """The container holds objects and ``PurgeOnDelete`` is false (Heat's
    ResourceActionNotSupported)."""


class SwiftContainer(Resource):
    """A resource for managing Swift containers.

    A container defines a namespace for objects. An object with the same name in two
    different containers represents two different objects.
    """

    default_client_name = "swift"

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (
        NAME,
        X_CONTAINER_READ,
        X_CONTAINER_WRITE,
        X_CONTAINER_META,
        X_ACCOUNT_META,
        PURGE_ON_DELETE,
    ) = (
        "name",
        "X-Container-Read",
        "X-Container-Write",
        "X-Container-Meta",
        "X-Account-Meta",
        "PurgeOnDelete",
    )

    ATTRIBUTES: tuple[str, ...]
    ATTRIBUTES = (DOMAIN_NAME, WEBSITE_URL, ROOT_URL, OBJECT_COUNT, BYTES_USED, HEAD_CONTAINER) = (
        "DomainName",
        "WebsiteURL",
        "RootURL",
        "ObjectCount",
        "BytesUsed",
        "HeadContainer",
    )

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING,
            "Name for the container. If not specified, a unique name will be generated.",
        ),
        X_CONTAINER_READ: properties.Schema(
            properties.Schema.STRING,
            "Specify the ACL permissions on who can read objects in the container.",
        ),
        X_CONTAINER_WRITE: properties.Schema(
            properties.Schema.STRING,
            "Specify the ACL permissions on who can write objects to the container.",
        ),
        X_CONTAINER_META: properties.Schema(
            properties.Schema.MAP,
            "A map of user-defined meta data to associate with the container. Each key in the map "
            "will set the header X-Container-Meta-{key} with the corresponding value.",
            default={},
        ),
        X_ACCOUNT_META: properties.Schema(
            properties.Schema.MAP,
            "A map of user-defined meta data to associate with the account. Each key in the map "
            "will set the header X-Account-Meta-{key} with the corresponding value.",
            default={},
        ),
        PURGE_ON_DELETE: properties.Schema(
            properties.Schema.BOOLEAN,
            "If True, delete any objects in the container when the container is deleted. "
            "Otherwise, deleting a non-empty container will result in an error.",
            default=False,
            support_status=support.SupportStatus(version="2015.1"),
        ),
    }

    attributes_schema = {
        DOMAIN_NAME: attributes.Schema(
            "The host from the container URL.", type=attributes.Schema.STRING
        ),
        WEBSITE_URL: attributes.Schema("The URL of the container.", type=attributes.Schema.STRING),
        ROOT_URL: attributes.Schema(
            "The parent URL of the container.", type=attributes.Schema.STRING
        ),
        OBJECT_COUNT: attributes.Schema(
            "The number of objects stored in the container.", type=attributes.Schema.INTEGER
        ),
        BYTES_USED: attributes.Schema(
            "The number of bytes stored in the container.", type=attributes.Schema.INTEGER
        ),
        HEAD_CONTAINER: attributes.Schema(
            "A map containing all headers for the container.", type=attributes.Schema.MAP
        ),
    }

    def physical_resource_name(self) -> str:
        return self.properties[self.NAME] or super().physical_resource_name()

    @staticmethod
    def _meta_headers(kind: str, meta: Mapping[str, Any] | None) -> dict[str, str]:
        """``X-<Kind>-Meta-<key>`` for each key of ``meta``, as Heat builds them."""
        return {f"X-{kind.title()}-Meta-{key}": str(value) for key, value in (meta or {}).items()}

    def handle_create(self) -> None:
        name = self.physical_resource_name()
        container_headers = self._meta_headers("container", self.properties[self.X_CONTAINER_META])
        account_headers = self._meta_headers("account", self.properties[self.X_ACCOUNT_META])
        for key in (self.X_CONTAINER_READ, self.X_CONTAINER_WRITE):
            if self.properties[key] is not None:
                container_headers[key] = self.properties[key]
        self.resource_id_set(name)
        self.client_plugin().put_container(name, container_headers)
        if account_headers:
            self.client_plugin().post_account(account_headers)

    # -- delete ------------------------------------------------------------------------

    def _objects(self) -> list[dict[str, Any]] | None:
        """The container's objects, or None when the container is gone."""
        try:
            return self.client_plugin().get_container(self.resource_id)[1]
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return None

    def _delete(self, object_name: str | None = None) -> None:
        plugin = self.client_plugin()
        with plugin.ignore_not_found:
            if object_name is None:
                plugin.delete_container(self.resource_id)
            else:
                plugin.delete_object(self.resource_id, object_name)

    def _taken_by_replacement(self) -> bool:
        """Whether this (replaced) resource's container is its replacement's too: a named
        container replaced under the same name is the same container in Swift, which the
        replacement now holds (Heat would delete it from under the replacement)."""
        signals = self.signals()
        found = signals.find(self.resource_id) if signals is not None else None
        return found is not None and found.name == self.name

    def handle_delete(self) -> int | None:
        if self.resource_id is None or self._taken_by_replacement():
            return None
        objects = self._objects()
        if objects is None:
            return None
        if objects and not self.properties[self.PURGE_ON_DELETE]:
            raise NonEmptyContainerError(
                f"Deleting non-empty container ({self.resource_id}) when {self.PURGE_ON_DELETE} is False",
                hint=f"empty the container first, or set {self.PURGE_ON_DELETE}: true on resource {self.name}",
            )
        return len(objects)

    def check_delete_complete(self, token: int | None) -> bool:
        if token is None:
            return True
        if token:
            objects = self._objects()
            if objects is None:
                return True
            for found in objects[:PURGE_BATCH]:
                self._delete(found["name"])
            if len(objects) > PURGE_BATCH:
                return False
        self._delete()
        return True

    # -- check, attributes ---------------------------------------------------------------

    def handle_check(self) -> None:
        self.client_plugin().head_container(self.resource_id)

    def get_reference_id(self) -> str:
        return str(self.resource_id)

    def _resolve_attribute(self, name: str) -> Any:
        url = parse.urlparse(self.client_plugin().url)
        if name == self.DOMAIN_NAME:
            return url.netloc.split(":")[0]
        if name == self.WEBSITE_URL:
            return f"{url.scheme}://{url.netloc}{url.path}/{self.resource_id}"
        if name == self.ROOT_URL:
            return f"{url.scheme}://{url.netloc}{url.path}"
        if self.resource_id is None or name not in (
            self.OBJECT_COUNT,
            self.BYTES_USED,
            self.HEAD_CONTAINER,
        ):
            return None
        try:
            headers = self.client_plugin().head_container(self.resource_id)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            # Heat: a container Swift cannot show has no values (a warning, not a failure).
            if self.client_plugin().is_not_found(error) or self.client_plugin().is_conflict(error):
                self.warn(f"Head container {self.resource_id} failed: {error}")
                return None
            raise
        if name == self.OBJECT_COUNT:
            return int(headers["x-container-object-count"])
        if name == self.BYTES_USED:
            return int(headers["x-container-bytes-used"])
        return headers

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return self.client_plugin().head_container(self.resource_id)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Swift::Container": SwiftContainer}
