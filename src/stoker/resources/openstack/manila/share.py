"""OS::Manila::Share, as Heat has it.

Owns: the share's create request (its share network, snapshot and share type found by name
or id), the wait for Manila's share service (``creating`` -> ``available``, ``error`` a
failure) and then its access rules, updating name, description, visibility, metadata and
access rules in place (any other change replaces the share), the wait for a delete, check,
the attributes (``export_locations`` as the list of paths), and finding a share an
interrupted create made.

Crash safety: the share's id is recorded the moment Manila answers and is the create's
token, so an engine that restarts while the share is ``creating`` polls on; the access rules
are applied once the share is available, skipping the rules it has already (a restart
halfway through applies the rest, never one twice). A share the template does not name is
given the resource's physical name (Heat sends none) so that ``find_created`` can find the
share a create killed before its id was recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource

__all__ = ["ManilaShare", "resource_mapping"]

STATUSES = (CREATING, DELETING, ERROR, ERROR_DELETING, AVAILABLE) = (
    "creating",
    "deleting",
    "error",
    "error_deleting",
    "available",
)
# The states of a rule Manila is taking away.
DENYING = ("queued_to_deny", "denying")
# The level Manila gives a rule that names none.
DEFAULT_ACCESS_LEVEL = "rw"


class ManilaShare(Resource):
    """A resource that creates shared mountable file system.

    The resource creates a manila share - shared mountable filesystem that can be attached
    to any client(or clients) that has a network access and permission to mount
    filesystem. Share is a unit of storage with specific size that supports pre-defined
    share protocol and advanced security model (access lists, share networks and security
    services).
    """

    support_status = support.SupportStatus(version="5.0.0")
    default_client_name = "manila"
    entity = "shares"

    ACCESS_RULE_PROPERTIES = (ACCESS_TO, ACCESS_TYPE, ACCESS_LEVEL) = (
        "access_to",
        "access_type",
        "access_level",
    )
    PROPERTIES = (
        SHARE_PROTOCOL, SIZE, SHARE_SNAPSHOT, NAME, METADATA, SHARE_NETWORK, DESCRIPTION,
        SHARE_TYPE, IS_PUBLIC, ACCESS_RULES,
    ) = (
        "share_protocol", "size", "snapshot", "name", "metadata", "share_network",
        "description", "share_type", "is_public", "access_rules",
    )  # fmt: skip
    ATTRIBUTES = (
        AVAILABILITY_ZONE_ATTR, HOST_ATTR, EXPORT_LOCATIONS_ATTR, SHARE_SERVER_ID_ATTR,
        CREATED_AT_ATTR, SHARE_STATUS_ATTR, PROJECT_ID_ATTR,
    ) = (
        "availability_zone", "host", "export_locations", "share_server_id", "created_at",
        "status", "project_id",
    )  # fmt: skip

    properties_schema = {
        SHARE_PROTOCOL: properties.Schema(
            properties.Schema.STRING,
            "Share protocol supported by shared filesystem.",
            required=True,
            constraints=[constraints.AllowedValues(["NFS", "CIFS", "GlusterFS", "HDFS", "CEPHFS"])],
        ),
        SIZE: properties.Schema(
            properties.Schema.INTEGER, "Share storage size in GB.", required=True
        ),
        SHARE_SNAPSHOT: properties.Schema(
            properties.Schema.STRING,
            "Name or ID of shared file system snapshot that will be restored and created as a new share.",
            constraints=[constraints.CustomConstraint("manila.share_snapshot")],
        ),
        NAME: properties.Schema(properties.Schema.STRING, "Share name.", update_allowed=True),
        METADATA: properties.Schema(
            properties.Schema.MAP, "Metadata key-values defined for share.", update_allowed=True
        ),
        SHARE_NETWORK: properties.Schema(
            properties.Schema.STRING,
            "Name or ID of shared network defined for shared filesystem.",
            constraints=[constraints.CustomConstraint("manila.share_network")],
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Share description.", update_allowed=True
        ),
        SHARE_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Name or ID of shared filesystem type. Types defines some share filesystem profiles that will be used for share creation.",
            constraints=[constraints.CustomConstraint("manila.share_type")],
        ),
        IS_PUBLIC: properties.Schema(
            properties.Schema.BOOLEAN,
            "Defines if shared filesystem is public or private.",
            default=False,
            update_allowed=True,
        ),
        ACCESS_RULES: properties.Schema(
            properties.Schema.LIST,
            "A list of access rules that define access from IP to Share.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    ACCESS_TO: properties.Schema(
                        properties.Schema.STRING,
                        "IP or other address information about guest that allowed to access to Share.",
                        required=True,
                    ),
                    ACCESS_TYPE: properties.Schema(
                        properties.Schema.STRING,
                        "Type of access that should be provided to guest.",
                        constraints=[constraints.AllowedValues(["ip", "user", "cert", "cephx"])],
                        required=True,
                    ),
                    ACCESS_LEVEL: properties.Schema(
                        properties.Schema.STRING,
                        "Level of access that need to be provided for guest.",
                        constraints=[constraints.AllowedValues(["ro", "rw"])],
                    ),
                },
            ),
            update_allowed=True,
            default=[],
        ),
    }

    attributes_schema = {
        AVAILABILITY_ZONE_ATTR: attributes.Schema(
            "The availability zone of shared filesystem.", type=attributes.Schema.STRING
        ),
        HOST_ATTR: attributes.Schema("Share host.", type=attributes.Schema.STRING),
        EXPORT_LOCATIONS_ATTR: attributes.Schema(
            "Export locations of share.", type=attributes.Schema.LIST
        ),
        SHARE_SERVER_ID_ATTR: attributes.Schema(
            "ID of server (VM, etc...) on host that is used for exporting network file-system.",
            type=attributes.Schema.STRING,
        ),
        CREATED_AT_ATTR: attributes.Schema(
            "Datetime when a share was created.", type=attributes.Schema.STRING
        ),
        SHARE_STATUS_ATTR: attributes.Schema(
            "Current share status.", type=attributes.Schema.STRING
        ),
        PROJECT_ID_ATTR: attributes.Schema("Share project ID.", type=attributes.Schema.STRING),
    }

    # -- create -------------------------------------------------------------------------

    def share_name(self) -> str:
        """The template's name, or the resource's physical name (see the module's note)."""
        return self.properties[self.NAME] or self.physical_resource_name()

    def create_arguments(self) -> dict[str, Any]:
        """openstacksdk's ``create_share`` arguments: names resolved to ids, unset ones left out."""
        plugin = self.client_plugin()
        arguments: dict[str, Any] = {
            "share_protocol": self.properties[self.SHARE_PROTOCOL],
            "size": self.properties[self.SIZE],
            "name": self.share_name(),
            "is_public": bool(self.properties[self.IS_PUBLIC]),
        }
        if self.properties[self.DESCRIPTION] is not None:
            arguments["description"] = self.properties[self.DESCRIPTION]
        if self.properties[self.METADATA]:
            arguments["metadata"] = _strings(self.properties[self.METADATA])
        for key, argument, finder in (
            (self.SHARE_NETWORK, "share_network_id", plugin.get_share_network),
            (self.SHARE_SNAPSHOT, "snapshot_id", plugin.get_share_snapshot),
            (self.SHARE_TYPE, "share_type", plugin.get_share_type),
        ):
            if self.properties[key]:
                arguments[argument] = str(finder(self.properties[key]).id)
        return arguments

    def handle_create(self) -> str:
        share = self.client().create_share(**self.create_arguments())
        self.resource_id_set(share.id)
        # A token, so an engine that restarts while the share is made polls on.
        return str(share.id)

    def check_create_complete(self, token: Any) -> bool:
        status = self._share().status
        if status == CREATING:
            return False
        if status == AVAILABLE:
            # Manila refuses rules on a share that is not available yet.
            try:
                self._allow(self.properties[self.ACCESS_RULES] or [], self._rules())
            except Exception as error:  # noqa: BLE001 - openstacksdk's types, reported in Heat's words
                raise ResourceFailure(
                    f'Went to status {status} due to "Error during applying access rules to share '
                    f'"{self.resource_id}". The root cause of the problem is the following: {error}."'
                ) from error
            return True
        if status == ERROR:
            raise ResourceFailure(
                f'Went to status {status} due to "Error during creation of share "{self.resource_id}""'
            )
        raise ResourceFailure(
            f'Resource failed - Unknown status {status} due to "Unknown share_status during '
            f'creation of share "{self.resource_id}""'
        )

    def find_created(self) -> str | None:
        # Only a name this resource made is its own: a template's name may be another share's.
        if self.properties[self.NAME]:
            return None
        name = self.physical_resource_name()
        for share in self.client().shares(name=name):
            if share.name == name:
                return str(share.id)
        return None

    # -- access rules -------------------------------------------------------------------

    def _rules(self) -> list[Any]:
        """The share's rules, less those Manila is denying (listed until the share
        service has removed them)."""
        return [
            rule
            for rule in self.client().access_rules(self.resource_id)
            if rule.state not in DENYING
        ]

    @classmethod
    def _rule_key(cls, rule: Mapping[str, Any]) -> tuple[str, str, str]:
        # A rule without a level is Manila's "rw": compared as such, so an update does not
        # deny and grant again a rule the template and the share both have.
        return (
            str(rule.get(cls.ACCESS_TO)),
            str(rule.get(cls.ACCESS_TYPE)),
            str(rule.get(cls.ACCESS_LEVEL) or DEFAULT_ACCESS_LEVEL),
        )

    def _live_key(self, rule: Any) -> tuple[str, str, str]:
        return (
            str(rule.access_to),
            str(rule.access_type),
            str(rule.access_level or DEFAULT_ACCESS_LEVEL),
        )

    def _allow(self, wanted: list[Mapping[str, Any]], existing: list[Any]) -> None:
        """Grant each rule of ``wanted`` the share does not have yet, in order."""
        have = {self._live_key(rule) for rule in existing}
        for rule in wanted:
            if self._rule_key(rule) in have:
                continue
            arguments = {"access_to": rule[self.ACCESS_TO], "access_type": rule[self.ACCESS_TYPE]}
            if rule.get(self.ACCESS_LEVEL):
                arguments["access_level"] = rule[self.ACCESS_LEVEL]
            self.client().create_access_rule(self.resource_id, **arguments)
            have.add(self._rule_key(rule))

    # -- update -------------------------------------------------------------------------

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        changes: dict[str, Any] = {}
        if self.IS_PUBLIC in prop_diff:
            changes["is_public"] = bool(prop_diff[self.IS_PUBLIC])
        if self.NAME in prop_diff:
            changes["display_name"] = prop_diff[self.NAME] or self.physical_resource_name()
        if self.DESCRIPTION in prop_diff:
            changes["display_description"] = prop_diff[self.DESCRIPTION]
        if changes:
            self.client().update_share(self.resource_id, **changes)
        if self.METADATA in prop_diff:
            self.client().set_share_metadata(
                self.resource_id, replace=True, **_strings(prop_diff[self.METADATA] or {})
            )
        if self.ACCESS_RULES in prop_diff:
            wanted = list(prop_diff[self.ACCESS_RULES] or [])
            keys = {self._rule_key(rule) for rule in wanted}
            kept = []
            for rule in self._rules():
                if self._live_key(rule) in keys:
                    kept.append(rule)
                else:
                    self.client().delete_access_rule(rule.id, self.resource_id, ignore_missing=True)
            self._allow(wanted, kept)

    # -- delete, check ------------------------------------------------------------------

    def handle_delete(self) -> str | None:
        if self.resource_id is None:
            return None
        try:
            self.client().delete_share(self.resource_id, ignore_missing=False)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return None
        return self.resource_id

    def check_delete_complete(self, token: Any) -> bool:
        if not token:
            return True
        try:
            share = self._share()
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return True
        if share.status == DELETING:
            return False
        if share.status in (ERROR, ERROR_DELETING):
            raise ResourceFailure(
                f'Went to status {share.status} due to "Error during deleting share "{self.resource_id}"."'
            )
        raise ResourceFailure(
            f'Resource failed - Unknown status {share.status} due to "Unknown status during '
            f'deleting share "{self.resource_id}""'
        )

    def handle_check(self) -> None:
        status = self._share().status
        if status != AVAILABLE:
            raise ResourceFailure(f"'status': expected '{[AVAILABLE]}', got '{status}'")

    # -- attributes ---------------------------------------------------------------------

    def _share(self) -> Any:
        return self.client_plugin().read(lambda: self.client().get_share(self.resource_id))

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return self._share().to_dict(original_names=True, headers=False, computed=False)

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        if name == self.EXPORT_LOCATIONS_ATTR:
            # Only the paths: what the share itself listed before microversion 2.9.
            return [location.path for location in self.client().export_locations(self.resource_id)]
        field = {self.SHARE_STATUS_ATTR: "status"}.get(name, name)
        value = getattr(self._share(), field, None)
        # Heat gives every one as a string; an unset one (a share without a share
        # server) stays None here rather than Heat's "None".
        return None if value is None else str(value)


def _strings(values: Mapping[str, Any]) -> dict[str, str]:
    return {str(key): str(value) for key, value in values.items()}


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Manila::Share": ManilaShare}
