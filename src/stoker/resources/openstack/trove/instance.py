"""OS::Trove::Instance, as Heat has it.

Owns: Heat's validation (the datastore version against the type's, users' databases among
the instance's, a network or a port per NIC), the instance's create request (flavor resolved
by Heat's translation, networks and ports to Neutron ids, users' databases as Trove wants
them), the wait for ACTIVE (ERROR and FAILED failures in Heat's words), updates in place as
Heat makes them (rename, flavor resize, volume resize, databases and users added, removed,
changed and granted, one step per poll while the instance is ACTIVE), check, delete, the
``hostname`` and ``href`` attributes, and finding an instance an interrupted create made (by
the physical name it was given).

Untested against a real Trove (issue 29): Trove's guest agent needs Nova servers booted from
a datastore image. Validation, and the refusal a cloud without Trove gives, are tested
through the ``stoker`` command.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from stoker.resources.openstack.trove.client_plugin import failed
from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.exceptions import ResourceFailure, ValidationError
from stoker.sdk.resource import Resource

__all__ = ["TroveInstance", "resource_mapping"]


class TroveInstance(Resource):
    """OpenStack cloud database instance resource.

    Trove is Database as a Service for OpenStack. It's designed to run entirely on OpenStack,
    with the goal of allowing users to quickly and easily utilize the features of a relational
    or non-relational database without the burden of handling complex administrative tasks.
    """

    support_status = support.SupportStatus(version="2014.1")
    default_client_name = "trove"
    entity = "instances"

    ACTIVE = "ACTIVE"
    BAD_STATUSES = ("ERROR", "FAILED")
    PROPERTIES = (
        NAME, FLAVOR, SIZE, DATABASES, USERS, AVAILABILITY_ZONE, RESTORE_POINT, DATASTORE_TYPE,
        DATASTORE_VERSION, NICS, REPLICA_OF, REPLICA_COUNT,
    ) = (
        "name", "flavor", "size", "databases", "users", "availability_zone", "restore_point",
        "datastore_type", "datastore_version", "networks", "replica_of", "replica_count",
    )  # fmt: skip
    _DATABASE_KEYS = (DATABASE_CHARACTER_SET, DATABASE_COLLATE, DATABASE_NAME) = (
        "character_set", "collate", "name",
    )  # fmt: skip
    _USER_KEYS = (USER_NAME, USER_PASSWORD, USER_HOST, USER_DATABASES) = (
        "name", "password", "host", "databases",
    )  # fmt: skip
    _NICS_KEYS = (NET, PORT, V4_FIXED_IP) = ("network", "port", "fixed_ip")
    ATTRIBUTES = (HOSTNAME_ATTR, HREF_ATTR) = ("hostname", "href")

    properties_schema = {
        AVAILABILITY_ZONE: properties.Schema(
            properties.Schema.STRING,
            "Name of the availability zone for DB instance.",
        ),
        DATABASES: properties.Schema(
            properties.Schema.LIST,
            "List of databases to be created on DB instance creation.",
            update_allowed=True,
            default=[],
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    DATABASE_CHARACTER_SET: properties.Schema(
                        properties.Schema.STRING,
                        "Set of symbols and encodings.",
                        default="utf8",
                    ),
                    DATABASE_COLLATE: properties.Schema(
                        properties.Schema.STRING,
                        "Set of rules for comparing characters in a character set.",
                        default="utf8_general_ci",
                    ),
                    DATABASE_NAME: properties.Schema(
                        properties.Schema.STRING,
                        "Specifies database names for creating databases on instance creation.",
                        required=True,
                        constraints=[
                            constraints.Length(max=64),
                            constraints.AllowedPattern(
                                "[a-zA-Z0-9_\\-]+[a-zA-Z0-9_@?#\\s\\-]*[a-zA-Z0-9_\\-]+"
                            ),
                        ],
                    ),
                },
            ),
        ),
        DATASTORE_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Name of registered datastore type.",
            constraints=[constraints.Length(max=255)],
        ),
        DATASTORE_VERSION: properties.Schema(
            properties.Schema.STRING,
            "Name of the registered datastore version. It must exist for provided datastore type. Defaults to using single active version. If several active versions exist for provided datastore type, explicit value for this parameter must be specified.",
            constraints=[constraints.Length(max=255)],
        ),
        FLAVOR: properties.Schema(
            properties.Schema.STRING,
            "Reference to a flavor for creating DB instance.",
            required=True,
            update_allowed=True,
            constraints=[constraints.CustomConstraint("trove.flavor")],
        ),
        NAME: properties.Schema(
            properties.Schema.STRING,
            "Name of the DB instance to create.",
            update_allowed=True,
            constraints=[constraints.Length(max=255)],
        ),
        NICS: properties.Schema(
            properties.Schema.LIST,
            "List of network interfaces to create on instance.",
            default=[],
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    V4_FIXED_IP: properties.Schema(
                        properties.Schema.STRING,
                        "Fixed IPv4 address for this NIC.",
                        constraints=[constraints.CustomConstraint("ip_addr")],
                    ),
                    NET: properties.Schema(
                        properties.Schema.STRING,
                        "Name or UUID of the network to attach this NIC to. Either port or network must be specified.",
                        constraints=[constraints.CustomConstraint("neutron.network")],
                    ),
                    PORT: properties.Schema(
                        properties.Schema.STRING,
                        "Name or UUID of Neutron port to attach this NIC to. Either port or network must be specified.",
                        constraints=[constraints.CustomConstraint("neutron.port")],
                    ),
                },
            ),
        ),
        REPLICA_COUNT: properties.Schema(
            properties.Schema.INTEGER,
            "The number of replicas to be created.",
        ),
        REPLICA_OF: properties.Schema(
            properties.Schema.STRING,
            "Identifier of the source instance to replicate.",
        ),
        RESTORE_POINT: properties.Schema(
            properties.Schema.STRING,
            "DB instance restore point.",
        ),
        SIZE: properties.Schema(
            properties.Schema.INTEGER,
            "Database volume size in GB.",
            required=True,
            update_allowed=True,
            constraints=[constraints.Range(max=150, min=1)],
        ),
        USERS: properties.Schema(
            properties.Schema.LIST,
            "List of users to be created on DB instance creation.",
            update_allowed=True,
            default=[],
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    USER_DATABASES: properties.Schema(
                        properties.Schema.LIST,
                        "Names of databases that those users can access on instance creation.",
                        required=True,
                        update_allowed=True,
                        constraints=[constraints.Length(min=1)],
                        schema=properties.Schema(
                            properties.Schema.STRING,
                        ),
                    ),
                    USER_HOST: properties.Schema(
                        properties.Schema.STRING,
                        "The host from which a user is allowed to connect to the database.",
                        update_allowed=True,
                        default="%",
                    ),
                    USER_NAME: properties.Schema(
                        properties.Schema.STRING,
                        "User name to create a user on instance creation.",
                        required=True,
                        update_allowed=True,
                        constraints=[
                            constraints.Length(max=16),
                            constraints.AllowedPattern(
                                "[a-zA-Z0-9_]+[a-zA-Z0-9_@?#\\s]*[a-zA-Z0-9_]+"
                            ),
                        ],
                    ),
                    USER_PASSWORD: properties.Schema(
                        properties.Schema.STRING,
                        "Password for those users on instance creation.",
                        required=True,
                        update_allowed=True,
                        constraints=[
                            constraints.AllowedPattern(
                                "[a-zA-Z0-9_]+[a-zA-Z0-9_@?#\\s]*[a-zA-Z0-9_]+"
                            )
                        ],
                    ),
                },
            ),
        ),
    }

    attributes_schema = {
        HOSTNAME_ATTR: attributes.Schema(
            "Hostname of the instance.", type=attributes.Schema.STRING
        ),
        HREF_ATTR: attributes.Schema(
            "Api endpoint reference of the instance.", type=attributes.Schema.STRING
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.FLAVOR],
                client_plugin="trove", finder="find_flavor_by_name_or_id",
            )
        ]  # fmt: skip

    def validate(self) -> None:
        super().validate()
        where = f"resources.{self.name}.properties"
        users = self.properties[self.USERS] or []
        databases = self.properties[self.DATABASES] or []
        if users and not databases:
            raise ValidationError(
                f"Databases property is required if users property is provided for resource {self.name}.",
                path=f"{where}.{self.DATABASES}",
                hint="list the databases the users may access",
            )
        names = {database[self.DATABASE_NAME] for database in databases}
        for index, user in enumerate(users):
            missing = [name for name in user[self.USER_DATABASES] if name not in names]
            if missing:
                raise ValidationError(
                    f"Database {missing} specified for user does not exist in databases for resource {self.name}.",
                    path=f"{where}.{self.USERS}[{index}].{self.USER_DATABASES}",
                    hint="add them to databases, or take them out of the user's",
                )
        for index, nic in enumerate(self.properties[self.NICS] or []):
            if (nic.get(self.NET) is None) == (nic.get(self.PORT) is None):
                raise ValidationError(
                    f"Either {self.NET} or {self.PORT} must be provided.",
                    path=f"{where}.{self.NICS}[{index}]",
                    hint=f"give exactly one of {self.NET} and {self.PORT}",
                )
        # Last, as Heat: the one check that asks Trove.
        self.client_plugin().validate_datastore(
            self.properties[self.DATASTORE_TYPE], self.properties[self.DATASTORE_VERSION],
            self.DATASTORE_TYPE, self.DATASTORE_VERSION, where,
        )  # fmt: skip

    def _instance_name(self) -> str:
        return self.properties[self.NAME] or self.physical_resource_name()

    def _path(self, tail: str = "") -> str:
        return f"/instances/{self.resource_id}{tail}"

    def _instance(self) -> dict[str, Any]:
        return self.client_plugin().show(self._path())["instance"]

    @staticmethod
    def _user_body(user: Mapping[str, Any]) -> dict[str, Any]:
        body = {key: value for key, value in user.items() if value is not None}
        body["databases"] = [{"name": name} for name in user.get("databases") or []]
        return body

    # -- create ----------------------------------------------------------------------

    def _nics(self) -> list[dict[str, str]]:
        neutron = self.client_plugin("neutron")
        nics = []
        for nic in self.properties[self.NICS] or []:
            entry = {}
            if nic.get(self.NET):
                entry["net-id"] = neutron.find_resourceid_by_name_or_id("network", nic[self.NET])
            if nic.get(self.PORT):
                entry["port-id"] = neutron.find_resourceid_by_name_or_id("port", nic[self.PORT])
            if nic.get(self.V4_FIXED_IP):
                entry["v4-fixed-ip"] = nic[self.V4_FIXED_IP]
            nics.append(entry)
        return nics

    def handle_create(self) -> str:
        given = self.properties
        body: dict[str, Any] = {
            "name": self._instance_name(),
            "flavorRef": given[self.FLAVOR],
            "volume": {"size": given[self.SIZE]},
            "databases": [dict(database) for database in given[self.DATABASES] or []],
            "users": [self._user_body(user) for user in given[self.USERS] or []],
        }
        if given[self.RESTORE_POINT]:
            body["restorePoint"] = {"backupRef": given[self.RESTORE_POINT]}
        if given[self.AVAILABILITY_ZONE]:
            body["availability_zone"] = given[self.AVAILABILITY_ZONE]
        if given[self.DATASTORE_TYPE]:
            body["datastore"] = {"type": given[self.DATASTORE_TYPE]}
            if given[self.DATASTORE_VERSION]:
                body["datastore"]["version"] = given[self.DATASTORE_VERSION]
        nics = self._nics()
        if nics:
            body["nics"] = nics
        if given[self.REPLICA_OF]:
            body["replica_of"] = given[self.REPLICA_OF]
        if given[self.REPLICA_COUNT]:
            body["replica_count"] = given[self.REPLICA_COUNT]
        created = self.client_plugin().call("POST", "/instances", {"instance": body})["instance"]
        self.resource_id_set(created["id"])
        return str(created["id"])

    def check_create_complete(self, token: Any) -> bool:
        try:
            status = self._instance()["status"]
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            if self.client_plugin().is_over_limit(error):
                return False  # as Heat: rate-limited, ask again
            raise
        if status in self.BAD_STATUSES:
            raise failed(status)
        return status == self.ACTIVE

    def find_created(self) -> str | None:
        if self.properties[self.NAME]:
            return None  # a name the user gave may be another instance's too
        name = self.physical_resource_name()
        listed = self.client_plugin().call("GET", "/instances")["instances"]
        found = [item for item in listed if item.get("name") == name]
        return str(found[0]["id"]) if len(found) == 1 else None

    def handle_check(self) -> None:
        status = self._instance()["status"]
        if status != self.ACTIVE:
            raise ResourceFailure(f"'status': expected '{self.ACTIVE}', got '{status}'")

    # -- update ----------------------------------------------------------------------

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> dict[str, Any]:
        """What to change, as Heat computes it: databases and users each marked to create
        or delete against what the instance has (the token: it is persisted)."""
        updates: dict[str, Any] = {
            key: prop_diff[key] for key in (self.NAME, self.FLAVOR, self.SIZE) if key in prop_diff
        }
        if self.DATABASES in prop_diff:
            current = [
                item["name"]
                for item in self.client_plugin().call("GET", self._path("/databases"))["databases"]
            ]
            desired = [dict(item) for item in prop_diff[self.DATABASES] or []]
            wanted = {item[self.DATABASE_NAME] for item in desired}
            for item in desired:
                if item[self.DATABASE_NAME] not in current:
                    item["ACTION"] = "CREATE"
            desired += [
                {self.DATABASE_NAME: name, "ACTION": "DELETE"}
                for name in current
                if name not in wanted
            ]
            updates[self.DATABASES] = desired
        if self.USERS in prop_diff:
            current = [
                item["name"]
                for item in self.client_plugin().call("GET", self._path("/users"))["users"]
            ]
            desired = [dict(item) for item in prop_diff[self.USERS] or []]
            wanted = {item[self.USER_NAME] for item in desired}
            for item in desired:
                if item[self.USER_NAME] not in current:
                    item["ACTION"] = "CREATE"
            desired += [
                {self.USER_NAME: name, "ACTION": "DELETE"} for name in current if name not in wanted
            ]
            updates[self.USERS] = desired
        return updates

    def check_update_complete(self, updates: Any) -> bool:
        instance = self._instance()
        if instance["status"] in self.BAD_STATUSES:
            raise failed(instance["status"])
        if not updates:
            return True
        if instance["status"] != self.ACTIVE:
            return False
        try:
            return (
                self._update_name(instance, updates.get(self.NAME))
                and self._update_flavor(instance, updates.get(self.FLAVOR))
                and self._update_size(instance, updates.get(self.SIZE))
                and self._update_databases(updates.get(self.DATABASES))
                and self._update_users(instance, updates.get(self.USERS))
            )
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            # As Heat: the instance may have changed since it was read; ask again.
            if self.client_plugin().is_over_limit(error) or "No change was requested" in str(error):
                return False
            raise

    def _update_name(self, instance: Mapping[str, Any], name: str | None) -> bool:
        if name and instance.get("name") != name:
            self.client_plugin().call("PATCH", self._path(), {"instance": {"name": name}})
            return False
        return True

    def _update_flavor(self, instance: Mapping[str, Any], flavor: str | None) -> bool:
        if flavor and str((instance.get("flavor") or {}).get("id")) != str(flavor):
            self.client_plugin().call(
                "POST", self._path("/action"), {"resize": {"flavorRef": flavor}}
            )
            return False
        return True

    def _update_size(self, instance: Mapping[str, Any], size: int | None) -> bool:
        if size and (instance.get("volume") or {}).get("size") != size:
            self.client_plugin().call(
                "POST", self._path("/action"), {"resize": {"volume": {"size": size}}}
            )
            return False
        return True

    def _update_databases(self, databases: list[dict[str, Any]] | None) -> bool:
        for database in databases or []:
            action = database.pop("ACTION", None)
            if action == "CREATE":
                self.client_plugin().call(
                    "POST", self._path("/databases"), {"databases": [database]}
                )
            elif action == "DELETE":
                self.client_plugin().call(
                    "DELETE", self._path(f"/databases/{quote(database['name'])}")
                )
        return True

    def _update_users(
        self, instance: Mapping[str, Any], users: list[dict[str, Any]] | None
    ) -> bool:
        plugin = self.client_plugin()
        for user in users or []:
            action = user.pop("ACTION", None)
            path = self._path(f"/users/{quote(user[self.USER_NAME])}")
            if action == "CREATE":
                plugin.call("POST", self._path("/users"), {"users": [self._user_body(user)]})
                continue
            if action == "DELETE":
                plugin.call("DELETE", path)
                continue
            changes = {
                key: user[key] for key in (self.USER_HOST, self.USER_PASSWORD) if user.get(key)
            }
            if changes:
                plugin.call("PUT", path, {"user": changes})
            granted = [
                item["name"] for item in plugin.call("GET", f"{path}/databases")["databases"]
            ]
            desired = user.get(self.USER_DATABASES) or []
            grants = [name for name in desired if name not in granted]
            if grants:
                plugin.call(
                    "PUT", f"{path}/databases", {"databases": [{"name": name} for name in grants]}
                )
            for name in granted:
                if name not in desired:
                    plugin.call("DELETE", f"{path}/databases/{quote(name)}")
        return True

    # -- delete ----------------------------------------------------------------------

    def handle_delete(self) -> str | None:
        if self.resource_id is None:
            return None
        try:
            self.client_plugin().call("DELETE", self._path())
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return None
        return self.resource_id

    def check_delete_complete(self, token: Any) -> bool:
        # For some time a Trove instance may live on (as Heat notes).
        return not token or self.client_plugin().gone(f"/instances/{token}")

    # -- attributes ------------------------------------------------------------------

    def _show_resource(self) -> dict[str, Any] | None:
        return None if self.resource_id is None else self._instance()

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        instance = self._instance()
        if name == self.HOSTNAME_ATTR:
            return instance.get("hostname")
        if name == self.HREF_ATTR:
            return next(
                (link["href"] for link in instance.get("links") or [] if link.get("rel") == "self"),
                None,
            )
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Trove::Instance": TroveInstance}
