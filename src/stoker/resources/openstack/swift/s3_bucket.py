"""AWS::S3::Bucket: a Swift container in the S3 bucket's terms, as Heat makes it.

Owns the mapping of the bucket's ``AccessControl`` to the container's read and write
ACLs, its ``Tags`` to ``X-Container-Meta-S3-Tag-<key>`` headers and its
``WebsiteConfiguration`` to staticweb's index and error headers. Every property change
replaces the bucket (Heat updates none in place). Delete is OS::Swift::Container's
without purging: a bucket holding objects refuses, with Heat's message. The physical id
(the container's name) is recorded before the container is made, as the container's.
"""

from __future__ import annotations

from typing import Any

from stoker.resources.openstack.swift.container import NonEmptyContainerError, SwiftContainer
from stoker.sdk import attributes, constraints, properties
from stoker.sdk.resource import Resource

__all__ = ["S3Bucket", "resource_mapping"]

ACCESS_CONTROLS = (
    "Private",
    "PublicRead",
    "PublicReadWrite",
    "AuthenticatedRead",
    "BucketOwnerRead",
    "BucketOwnerFullControl",
)


class S3Bucket(SwiftContainer):
    """A Swift container made as an AWS S3 bucket.

    ``AccessControl`` decides who reads and writes (PublicRead: anyone reads;
    PublicReadWrite: anyone reads and writes; AuthenticatedRead: the project reads;
    otherwise only the stack's user), ``Tags`` become container metadata and
    ``WebsiteConfiguration`` the staticweb index and error documents.
    """

    PROPERTIES = (ACCESS_CONTROL, WEBSITE_CONFIGURATION, TAGS) = (
        "AccessControl",
        "WebsiteConfiguration",
        "Tags",
    )
    _WEBSITE_CONFIGURATION_KEYS = (
        WEBSITE_CONFIGURATION_INDEX_DOCUMENT,
        WEBSITE_CONFIGURATION_ERROR_DOCUMENT,
    ) = (
        "IndexDocument",
        "ErrorDocument",
    )
    _TAG_KEYS = (TAG_KEY, TAG_VALUE) = ("Key", "Value")
    ATTRIBUTES = (DOMAIN_NAME, WEBSITE_URL) = ("DomainName", "WebsiteURL")

    properties_schema = {
        ACCESS_CONTROL: properties.Schema(
            properties.Schema.STRING,
            "A predefined access control list (ACL) that grants permissions on the bucket.",
            constraints=[constraints.AllowedValues(list(ACCESS_CONTROLS))],
        ),
        WEBSITE_CONFIGURATION: properties.Schema(
            properties.Schema.MAP,
            "Information used to configure the bucket as a static website.",
            schema={
                WEBSITE_CONFIGURATION_INDEX_DOCUMENT: properties.Schema(
                    properties.Schema.STRING, "The name of the index document."
                ),
                WEBSITE_CONFIGURATION_ERROR_DOCUMENT: properties.Schema(
                    properties.Schema.STRING, "The name of the error document."
                ),
            },
        ),
        TAGS: properties.Schema(
            properties.Schema.LIST,
            "Tags to attach to the bucket.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    TAG_KEY: properties.Schema(
                        properties.Schema.STRING, "The tag key name.", required=True
                    ),
                    TAG_VALUE: properties.Schema(
                        properties.Schema.STRING, "The tag value.", required=True
                    ),
                },
            ),
        ),
    }

    attributes_schema = {
        DOMAIN_NAME: attributes.Schema(
            "The DNS name of the specified bucket.", type=attributes.Schema.STRING
        ),
        WEBSITE_URL: attributes.Schema(
            "The website endpoint for the specified bucket.", type=attributes.Schema.STRING
        ),
    }

    # No PurgeOnDelete: a bucket with objects is never emptied by its delete.
    PURGE_ON_DELETE = "PurgeOnDelete"

    def physical_resource_name(self) -> str:
        return Resource.physical_resource_name(self)

    def _identity(self) -> tuple[str, str]:
        """The project's and the user's names, for Heat's ``<project>:<user>`` ACL."""
        return self.client_plugin().identity_names()

    def bucket_headers(self) -> dict[str, str]:
        """The container's headers for this bucket, as Heat's handle_create sets them."""
        headers = {
            f"X-Container-Meta-S3-Tag-{tag[self.TAG_KEY]}": tag[self.TAG_VALUE]
            for tag in self.properties[self.TAGS] or []
        }
        website = self.properties[self.WEBSITE_CONFIGURATION]
        if website is not None:
            # Heat assumes Swift runs the staticweb middleware.
            for header, key in (
                ("X-Container-Meta-Web-Index", self.WEBSITE_CONFIGURATION_INDEX_DOCUMENT),
                ("X-Container-Meta-Web-Error", self.WEBSITE_CONFIGURATION_ERROR_DOCUMENT),
            ):
                if website.get(key) is not None:
                    headers[header] = website[key]
        access = self.properties[self.ACCESS_CONTROL]
        project, user = self._identity()
        owner = f"{project}:{user}"
        if access in ("PublicRead", "PublicReadWrite"):
            headers["X-Container-Read"] = ".r:*"
        elif access == "AuthenticatedRead":
            headers["X-Container-Read"] = project
        else:
            headers["X-Container-Read"] = owner
        headers["X-Container-Write"] = ".r:*" if access == "PublicReadWrite" else owner
        return headers

    def handle_create(self) -> None:
        name = self.physical_resource_name()
        headers = self.bucket_headers()
        self.resource_id_set(name)
        self.client_plugin().put_container(name, headers)

    def handle_delete(self) -> int | None:
        if self.resource_id is None:
            return None
        objects = self._objects()
        if objects is None:
            return None
        if objects:
            raise NonEmptyContainerError(
                f"The bucket you tried to delete is not empty ({self.resource_id}).",
                hint=f"delete the bucket's objects first (resource {self.name})",
            )
        return 0

    def _resolve_attribute(self, name: str) -> Any:
        if name in (self.DOMAIN_NAME, self.WEBSITE_URL):
            return super()._resolve_attribute(name)
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"AWS::S3::Bucket": S3Bucket}
