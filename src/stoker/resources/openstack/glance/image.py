"""OS::Glance::WebImage and OS::Glance::Image: Glance images, as Heat has them, with their
data from a URL or from an image already in Glance, never from a file.

Owns: where image data may come from, the image record's create request (Glance v2),
waiting for the data to arrive, updates in place (Heat's updatable properties, as JSON
patches), (de)activation, members and tags, delete, check.

Where the data comes from, and why:
  * ``location``: an ``http``/``https`` URL that Glance itself fetches (the web-download
    import). Glance then reaches any address a template names, from inside the cloud, so
    this is refused unless the operator sets ``allow_image_urls`` (``Settings``, or
    ``STOKER_ALLOW_IMAGE_URLS``). Other schemes are refused: ``file:`` and bare paths
    would read files of a machine (stoker's or Glance's), and registering a store
    location (Heat's old v1 behaviour) lets a user point Glance at data it never checked.
  * ``source_image`` (OS::Glance::Image only, a stoker extension): an image in this
    Glance whose data is copied into the new one, streamed through stoker in chunks
    (nothing is written to disk; the handler thread is busy while it streams).
Nothing here ever opens a local file.

OS::Glance::Image keeps the schema Heat had before hiding the type (its v1 ``location``
registration is gone from Glance v2); OS::Glance::WebImage is Heat's current type.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

from stoker.sdk import constraints, properties, support
from stoker.sdk.exceptions import ResourceFailure, ValidationError
from stoker.sdk.resource import Resource

__all__ = ["GlanceImage", "GlanceWebImage", "resource_mapping"]

GLANCE_ID_PATTERN = (
    "^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$"
)
URL_SCHEMES = ("http", "https")
# Bytes per chunk when copying an image's data through stoker.
COPY_CHUNK_BYTES = 1024 * 1024
JSON_PATCH = "application/openstack-images-v2.1-json-patch"
GONE_STATUSES = ("killed", "deleted", "pending_delete")


def _schema(kind: str, description: str, **options: Any) -> properties.Schema:
    return properties.Schema(kind, description, **options)


STRING, INTEGER, BOOLEAN, LIST, MAP = (
    properties.Schema.STRING, properties.Schema.INTEGER, properties.Schema.BOOLEAN,
    properties.Schema.LIST, properties.Schema.MAP,
)

# Schemas both types share (declarations, never changed: shared).
_NAME = _schema(STRING, "Name for the image. The name of an image is not unique to a Image Service node.")
_ID = _schema(STRING, "The image ID. Glance will generate a UUID if not specified.")
_MIN_DISK = _schema(
    INTEGER,
    "Amount of disk space (in GB) required to boot image. Default value is 0 if not specified "
    "and means no limit on the disk size.",
    constraints=[constraints.Range(min=0)],
    default=0,
)
_MIN_RAM = _schema(
    INTEGER,
    "Amount of ram (in MB) required to boot image. Default value is 0 if not specified and "
    "means no limit on the ram size.",
    constraints=[constraints.Range(min=0)],
    default=0,
)
_LOCATION_DESCRIPTION = (
    "URL where the data for this image already resides. For example, if the image data is "
    'stored in swift, you could specify "swift://example.com/container/obj". In stoker: an '
    "http or https URL, which Glance downloads (web-download import), and only where the "
    "operator allows image URLs (setting allow_image_urls)."
)


def _updatable(description: str, version: str | None = None, **options: Any) -> properties.Schema:
    if version is not None:
        options["support_status"] = support.SupportStatus(version=version)
    return _schema(STRING, description, update_allowed=True, **options)


def _image_id_schema(description: str, version: str | None = None) -> properties.Schema:
    return _updatable(description, version, constraints=[constraints.AllowedPattern(GLANCE_ID_PATTERN)])


class _GlanceImageBase(Resource):
    """What both image types share (not a type itself)."""

    default_client_name = "glance"
    entity = "image"

    (NAME, IMAGE_ID, MIN_DISK, MIN_RAM, PROTECTED, DISK_FORMAT, CONTAINER_FORMAT, LOCATION, TAGS,
     ARCHITECTURE, KERNEL_ID, OS_DISTRO, OWNER, EXTRA_PROPERTIES, RAMDISK_ID) = (
        "name", "id", "min_disk", "min_ram", "protected", "disk_format", "container_format", "location", "tags",
        "architecture", "kernel_id", "os_distro", "owner", "extra_properties", "ramdisk_id",
    )
    VISIBILITY, ACTIVE, MEMBERS, OS_VERSION, IS_PUBLIC, SOURCE_IMAGE = (
        "visibility", "active", "members", "os_version", "is_public", "source_image",
    )
    # Glance image fields a property sets directly (the rest are handled by name).
    FIELDS: ClassVar[tuple[str, ...]] = ()

    def given(self, key: str) -> Any:
        return self.properties.resolved().get(key) if key in self.properties_schema else None

    # -- validation ----------------------------------------------------------------------

    def validate(self) -> None:
        super().validate()
        container_format = self.properties[self.CONTAINER_FORMAT]
        if container_format in ("ami", "ari", "aki") and self.properties[self.DISK_FORMAT] != container_format:
            raise ValidationError(
                "Invalid mix of disk and container formats. When setting a disk or container format "
                "to one of 'aki', 'ari', or 'ami', the container and disk formats must match.",
                path=f"resources.{self.name}.properties.container_format",
            )
        location = self.given(self.LOCATION)
        if location is not None:
            self.check_location(location)
            self.check_urls_allowed()

    def check_location(self, location: str) -> None:
        """Refuse any location that is not an http(s) URL (no local files, no store URLs)."""
        path = f"resources.{self.name}.properties.location"
        scheme = urlsplit(location).scheme.lower()
        if scheme in ("", "file"):
            raise ValidationError(
                f"Image location {location!r} names a local file; stoker never reads local files "
                "for an image, nor lets Glance read them.",
                path=path,
                hint="serve the image over http(s), or copy an existing image with source_image",
            )
        if scheme not in URL_SCHEMES or not urlsplit(location).hostname:
            raise ValidationError(
                f"Image location {location!r} is not an http or https URL; stoker imports image data "
                "from http(s) URLs only (Glance's web-download).",
                path=path,
            )

    def check_urls_allowed(self) -> None:
        if not self.client_plugin().allows_image_urls():
            raise ValidationError(
                "Creating an image from a URL is disabled: the operator setting allow_image_urls "
                "is off (Glance would fetch the URL from inside the cloud).",
                path=f"resources.{self.name}.properties.location",
                hint="an operator may set allow_image_urls (STOKER_ALLOW_IMAGE_URLS=true)",
            )

    # -- requests ------------------------------------------------------------------------

    def visibility(self) -> str | None:
        return self.given(self.VISIBILITY)

    def create_body(self) -> dict[str, Any]:
        """The Glance v2 ``POST /images`` body: the record, with no data."""
        body: dict[str, Any] = {}
        for key in self.FIELDS:
            value = self.given(key)
            if value is not None:
                body[key] = value
        visibility = self.visibility()
        if visibility is not None:
            body["visibility"] = visibility
        for key, value in (self.given(self.EXTRA_PROPERTIES) or {}).items():
            body.setdefault(str(key), str(value))
        return body

    def _rest(self, method: str, url: str, **arguments: Any) -> Any:
        return self.client_plugin().rest(method, url, **arguments)

    def _patch(self, operations: list[dict[str, Any]]) -> None:
        if operations:
            self._rest("PATCH", f"/images/{self.resource_id}", data=json.dumps(operations), headers={"Content-Type": JSON_PATCH})

    # -- create --------------------------------------------------------------------------

    def handle_create(self) -> dict[str, Any]:
        location = self.given(self.LOCATION)
        if location is not None:  # checked again: the setting may have changed since
            self.check_location(location)
            self.check_urls_allowed()
        source = self.given(self.SOURCE_IMAGE)
        source_id = self.client_plugin().find_image_by_name_or_id(source) if source else None
        created = self._rest("POST", "/images", json=self.create_body()).json()
        self.resource_id_set(created["id"])
        for member in self.given(self.MEMBERS) or []:
            self.client().add_member(created["id"], member=member)
        if location is not None:
            self._import(location)
        elif source_id is not None:
            self._copy_from(source_id)
        active = self.given(self.ACTIVE)
        return {"active": True if active is None else bool(active), "source": source_id}

    def _import(self, location: str) -> None:
        self._rest("POST", f"/images/{self.resource_id}/import", json={"method": {"name": "web-download", "uri": location}})

    def _copy_from(self, source_id: str) -> None:
        """Stream the source image's data into this one (memory only, chunk by chunk)."""
        download = self._rest("GET", f"/images/{source_id}/file", stream=True)
        try:
            chunks: Iterator[bytes] = download.iter_content(chunk_size=COPY_CHUNK_BYTES)
            self._rest("PUT", f"/images/{self.resource_id}/file", data=chunks, headers={"Content-Type": "application/octet-stream"})
        finally:
            download.close()

    def check_create_complete(self, token: Any) -> bool:
        token = token or {}
        image = self.client().get_image(self.resource_id)
        if image.status == "killed":
            raise ResourceFailure(f"Went to status {image.status} due to \"Unknown\"")
        failed = (image.properties or {}).get("os_glance_failed_import")
        if image.status == "queued" and failed:
            raise ResourceFailure(f"Image import failed: Glance could not fetch the data into store(s) {failed}")
        if image.status == "queued" and token.get("source") and not (image.properties or {}).get("os_glance_import_task"):
            # A restarted engine: the copy never finished; Glance keeps no partial data.
            self._copy_from(token["source"])
            return False
        if not token.get("active", True):
            if image.status == "active":
                self.client().deactivate_image(self.resource_id)
                return True
            return image.status == "deactivated"
        return bool(image.status == "active")

    # -- update --------------------------------------------------------------------------

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> dict[str, Any]:
        changes = dict(prop_diff)
        client = self.client()
        active = changes.pop(self.ACTIVE, None)
        if active is False:
            client.deactivate_image(self.resource_id)
        image = client.get_image(self.resource_id)
        if self.TAGS in changes:
            old, new = set(image.tags or []), set(changes.pop(self.TAGS) or [])
            for tag in sorted(new - old):
                client.add_tag(self.resource_id, tag)
            for tag in sorted(old - new):
                with self.client_plugin().ignore_not_found:
                    client.remove_tag(self.resource_id, tag)
        old_members = set(self.given(self.MEMBERS) or [])
        new_members = set(changes.pop(self.MEMBERS, None) or []) if self.MEMBERS in changes else old_members
        # Glance changes members only while the visibility is 'shared': members go before
        # the fields change (it may stop being shared), and come after (it may become so).
        for member in sorted(old_members - new_members):
            client.remove_member(member, self.resource_id, ignore_missing=True)
        self._patch(self.patch_operations(image, changes))
        for member in sorted(new_members - old_members):
            client.add_member(self.resource_id, member=member)
        return {"active": bool(active)}

    def patch_operations(self, image: Any, changes: Mapping[str, Any]) -> list[dict[str, Any]]:
        """JSON-patch operations making the image match ``changes`` (updatable fields and
        extra properties; a property dropped from extra_properties is removed)."""
        current = image.to_dict(original_names=True, headers=False, computed=False) if image is not None else {}
        current.update(image.properties or {} if image is not None else {})
        wanted: dict[str, Any] = {}
        removed: list[str] = []
        for key, value in changes.items():
            if key == self.EXTRA_PROPERTIES:
                new = {str(k): str(v) for k, v in (value or {}).items()}
                old = self.given(self.EXTRA_PROPERTIES) or {}
                removed.extend(k for k in old if k not in new)
                wanted.update(new)
            elif key == self.IS_PUBLIC:
                wanted["visibility"] = "public" if value else "private"
            elif value is None:
                removed.append(key)
            else:
                wanted[key] = value
        # Glance refuses "add" of a core field that has a value: replace what exists.
        operations = [
            {"op": "replace" if current.get(key) is not None else "add", "path": f"/{key}", "value": value}
            for key, value in wanted.items()
        ]
        operations += [{"op": "remove", "path": f"/{key}"} for key in removed if current.get(key) is not None]
        return operations

    def check_update_complete(self, token: Any) -> bool:
        if token and token.get("active"):
            image = self.client().get_image(self.resource_id)
            if image.status == "deactivated":
                self.client().reactivate_image(self.resource_id)
        return True

    # -- delete, check, show --------------------------------------------------------------

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client().delete_image(self.resource_id, ignore_missing=True)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        image = self.client().get_image(self.resource_id)
        if image.status in GONE_STATUSES:
            raise ResourceFailure(f"'status': expected '['active', 'deactivated', 'queued']', got '{image.status}'")

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        image = self.client().get_image(self.resource_id)
        shown = image.to_dict(original_names=True, headers=False, computed=False)
        shown.update(image.properties or {})
        shown.pop("properties", None)
        return shown


class GlanceWebImage(_GlanceImageBase):
    """A resource managing images in Glance using web-download import.

    This provides image support for recent Glance installation. In stoker the
    ``location`` URL is fetched only where the operator allows image URLs
    (``allow_image_urls``); it must be an http or https URL.
    """

    support_status = support.SupportStatus(version="12.0.0")
    PROPERTIES = (
        "name", "id", "min_disk", "min_ram", "protected", "disk_format", "container_format", "location", "tags",
        "architecture", "kernel_id", "os_distro", "os_version", "owner", "extra_properties", "visibility",
        "ramdisk_id", "active", "members",
    )
    FIELDS = (
        "name", "id", "min_disk", "min_ram", "protected", "disk_format", "container_format", "tags",
        "architecture", "kernel_id", "os_distro", "os_version", "owner", "ramdisk_id",
    )

    properties_schema = {
        "name": _NAME,
        "id": _ID,
        "min_disk": _MIN_DISK,
        "min_ram": _MIN_RAM,
        "protected": _schema(
            BOOLEAN,
            "Whether the image can be deleted. If the value is True, the image is protected and cannot be deleted.",
            update_allowed=True,
            default=False,
        ),
        "disk_format": _schema(
            STRING,
            "Disk format of image.",
            required=True,
            constraints=[constraints.AllowedValues(["ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso", "ploop"])],
        ),
        "container_format": _schema(
            STRING,
            "Container format of image.",
            required=True,
            constraints=[constraints.AllowedValues(["ami", "ari", "aki", "bare", "ovf", "ova", "docker"])],
        ),
        "location": _schema(STRING, _LOCATION_DESCRIPTION, required=True),
        "tags": _schema(LIST, "List of image tags.", update_allowed=True),
        "architecture": _updatable("Operating system architecture."),
        "kernel_id": _image_id_schema(
            "ID of image stored in Glance that should be used as the kernel when booting an AMI-style image."
        ),
        "os_distro": _updatable("The common name of the operating system distribution in lowercase."),
        "os_version": _updatable("Operating system version as specified by the distributor."),
        "owner": _updatable("Owner of the image."),
        "extra_properties": _schema(
            MAP,
            "Arbitrary properties to associate with the image.",
            update_allowed=True,
            default={},
            support_status=support.SupportStatus(version="17.0.0"),
        ),
        "visibility": _schema(
            STRING,
            "Scope of image accessibility.",
            update_allowed=True,
            default="private",
            constraints=[constraints.AllowedValues(["public", "private", "community", "shared"])],
        ),
        "ramdisk_id": _image_id_schema(
            "ID of image stored in Glance that should be used as the ramdisk when booting an AMI-style image."
        ),
        "active": _schema(
            BOOLEAN,
            "Activate or deactivate the image. Requires Admin Access.",
            default=True,
            update_allowed=True,
            support_status=support.SupportStatus(version="16.0.0"),
        ),
        "members": _schema(
            LIST,
            "List of additional members that are permitted to read the image. This may be a "
            "Keystone Project IDs or User IDs, depending on the Glance configuration in use.",
            schema=_schema(
                STRING,
                "A member ID. This may be a Keystone Project ID or User ID, depending on the Glance configuration in use.",
            ),
            update_allowed=True,
            support_status=support.SupportStatus(version="16.0.0"),
        ),
    }

    def validate(self) -> None:
        super().validate()
        if self.given(self.MEMBERS) and self.properties[self.VISIBILITY] != "shared":
            raise ValidationError(
                'members property requires visibility to be "shared".',
                path=f"resources.{self.name}.properties.members",
            )


class GlanceImage(_GlanceImageBase):
    """A resource managing images in Glance.

    A resource provides managing images that are meant to be used with other services. In
    stoker the data comes from ``location`` (an http or https URL Glance downloads, where
    the operator allows image URLs) or from ``source_image`` (an image already in Glance,
    copied); one of the two is required.
    """

    support_status = support.SupportStatus(
        status=support.DEPRECATED,
        version="8.0.0",
        message="Creating a Glance Image based on an existing URL location requires the Glance v1 API, which is deprecated.",
        previous_status=support.SupportStatus(version="2014.2"),
    )
    PROPERTIES = (
        "name", "id", "is_public", "min_disk", "min_ram", "protected", "disk_format", "container_format",
        "location", "tags", "extra_properties", "architecture", "kernel_id", "os_distro", "owner", "ramdisk_id",
        "source_image",
    )
    FIELDS = (
        "name", "id", "min_disk", "min_ram", "protected", "disk_format", "container_format", "tags",
        "architecture", "kernel_id", "os_distro", "owner", "ramdisk_id",
    )

    properties_schema = {
        "name": _NAME,
        "id": _ID,
        "is_public": _schema(
            BOOLEAN,
            "Scope of image accessibility. Public or private. Default value is False means private. "
            "Note: The policy setting of glance allows only users with admin roles to create public image by default.",
            default=False,
        ),
        "min_disk": _MIN_DISK,
        "min_ram": _MIN_RAM,
        "protected": _schema(
            BOOLEAN,
            "Whether the image can be deleted. If the value is True, the image is protected and cannot be deleted.",
            default=False,
        ),
        "disk_format": _schema(
            STRING,
            "Disk format of image.",
            required=True,
            constraints=[constraints.AllowedValues(["ami", "ari", "aki", "vhd", "vmdk", "raw", "qcow2", "vdi", "iso"])],
        ),
        "container_format": _schema(
            STRING,
            "Container format of image.",
            required=True,
            constraints=[constraints.AllowedValues(["ami", "ari", "aki", "bare", "ova", "ovf"])],
        ),
        # Heat requires it (Glance v1 registered the URL); stoker asks for it or source_image.
        "location": _schema(STRING, _LOCATION_DESCRIPTION),
        "tags": _schema(LIST, "List of image tags.", update_allowed=True, support_status=support.SupportStatus(version="7.0.0")),
        "extra_properties": _schema(
            MAP,
            "Arbitrary properties to associate with the image.",
            update_allowed=True,
            default={},
            support_status=support.SupportStatus(version="7.0.0"),
        ),
        "architecture": _updatable("Operating system architecture.", "7.0.0"),
        "kernel_id": _image_id_schema(
            "ID of image stored in Glance that should be used as the kernel when booting an AMI-style image.", "7.0.0"
        ),
        "os_distro": _updatable("The common name of the operating system distribution in lowercase.", "7.0.0"),
        "owner": _updatable("Owner of the image.", "7.0.0"),
        "ramdisk_id": _image_id_schema(
            "ID of image stored in Glance that should be used as the ramdisk when booting an AMI-style image.", "7.0.0"
        ),
        "source_image": _schema(
            STRING,
            "A stoker extension: the name or ID of an image in this Glance whose data the new image "
            "copies (streamed through stoker, never written to disk). Instead of location.",
            constraints=[constraints.CustomConstraint("glance.image")],
        ),
    }

    def visibility(self) -> str:
        return "public" if self.properties[self.IS_PUBLIC] else "private"

    def validate(self) -> None:
        super().validate()
        sources = [key for key in (self.LOCATION, self.SOURCE_IMAGE) if self.given(key)]
        if len(sources) != 1:
            raise ValidationError(
                f"Exactly one of location and source_image is required; given: {sources or 'neither'}.",
                path=f"resources.{self.name}.properties",
                hint="location is an http(s) URL Glance downloads; source_image an image to copy",
            )


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Glance::Image": GlanceImage, "OS::Glance::WebImage": GlanceWebImage}
