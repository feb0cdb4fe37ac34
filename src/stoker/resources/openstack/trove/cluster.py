"""OS::Trove::Cluster, as Heat has it.

Owns: Heat's validation (the datastore version against the type's; a network or a port per
NIC, not both), the cluster's create request (flavors, networks and ports resolved by Heat's
translation), the wait until every instance of the cluster is ACTIVE (ERROR and FAILED
failures, in Heat's words), delete (sent once Trove's task allows it, then the wait until the
cluster is gone), the ``instances`` and ``ip`` attributes, and finding a cluster an
interrupted create made (by the physical name it was given). No update: Heat has none.

Untested against a real Trove (issue 29): Trove's clusters need guest VMs booted from a
datastore image. Validation, and the refusal a cloud without Trove gives, are tested through
the ``stoker`` command.
"""

from __future__ import annotations

from typing import Any

from stoker.resources.openstack.trove.client_plugin import failed
from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

__all__ = ["TroveCluster", "resource_mapping"]


class TroveCluster(Resource):
    """A resource for managing Trove clusters.

    A Cluster is an opaque cluster used to store Database clusters.
    """

    support_status = support.SupportStatus(version="2015.1")
    default_client_name = "trove"
    entity = "clusters"

    ACTIVE = "ACTIVE"
    BAD_STATUSES = ("ERROR", "FAILED")
    # Trove's cluster tasks during which a delete may be sent (or is under way).
    DELETE_STATUSES = (DELETING, NONE) = ("DELETING", "NONE")
    PROPERTIES = (NAME, DATASTORE_TYPE, DATASTORE_VERSION, INSTANCES) = (
        "name", "datastore_type", "datastore_version", "instances",
    )  # fmt: skip
    _INSTANCE_KEYS = (FLAVOR, VOLUME_SIZE, NETWORKS, AVAILABILITY_ZONE) = (
        "flavor", "volume_size", "networks", "availability_zone",
    )  # fmt: skip
    _NICS_KEYS = (NET, PORT, V4_FIXED_IP) = ("network", "port", "fixed_ip")
    ATTRIBUTES = (INSTANCES_ATTR, IP_ATTR) = ("instances", "ip")

    properties_schema = {
        DATASTORE_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Name of registered datastore type.",
            required=True,
            constraints=[constraints.Length(max=255)],
        ),
        DATASTORE_VERSION: properties.Schema(
            properties.Schema.STRING,
            "Name of the registered datastore version. It must exist for provided datastore type. Defaults to using single active version. If several active versions exist for provided datastore type, explicit value for this parameter must be specified.",
            required=True,
            constraints=[constraints.Length(max=255)],
        ),
        INSTANCES: properties.Schema(
            properties.Schema.LIST,
            "List of database instances.",
            required=True,
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    AVAILABILITY_ZONE: properties.Schema(
                        properties.Schema.STRING,
                        "Name of the availability zone for DB instance.",
                    ),
                    FLAVOR: properties.Schema(
                        properties.Schema.STRING,
                        "Flavor of the instance.",
                        required=True,
                        constraints=[constraints.CustomConstraint("trove.flavor")],
                    ),
                    NETWORKS: properties.Schema(
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
                    VOLUME_SIZE: properties.Schema(
                        properties.Schema.INTEGER,
                        "Size of the instance disk volume in GB.",
                        required=True,
                        constraints=[constraints.Range(max=150, min=1)],
                    ),
                },
            ),
        ),
        NAME: properties.Schema(
            properties.Schema.STRING,
            "Name of the cluster to create.",
            constraints=[constraints.Length(max=255)],
        ),
    }

    attributes_schema = {
        INSTANCES_ATTR: attributes.Schema("A list of instances ids.", type=attributes.Schema.LIST),
        IP_ATTR: attributes.Schema("A list of cluster instance IPs.", type=attributes.Schema.LIST),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        rule = translation.TranslationRule
        return [
            rule(props, rule.RESOLVE, [self.INSTANCES, self.NETWORKS, self.NET],
                 client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="network"),
            rule(props, rule.RESOLVE, [self.INSTANCES, self.NETWORKS, self.PORT],
                 client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="port"),
            rule(props, rule.RESOLVE, [self.INSTANCES, self.FLAVOR],
                 client_plugin="trove", finder="find_flavor_by_name_or_id"),
        ]  # fmt: skip

    def validate(self) -> None:
        super().validate()
        where = f"resources.{self.name}.properties"
        for index, instance in enumerate(self.properties[self.INSTANCES]):
            for position, nic in enumerate(instance[self.NETWORKS] or []):
                path = f"{where}.{self.INSTANCES}[{index}].{self.NETWORKS}[{position}]"
                if nic.get(self.NET) is None and nic.get(self.PORT) is None:
                    raise ValidationError(
                        f"Either {self.NET} or {self.PORT} must be provided.",
                        path=path,
                        hint=f"give {self.NET} or {self.PORT}",
                    )
                if nic.get(self.NET) is not None and nic.get(self.PORT) is not None:
                    raise ValidationError(
                        f"Cannot define the following properties at the same time: {self.NET}, {self.PORT}.",
                        path=path,
                        hint=f"give only one of {self.NET} and {self.PORT}",
                    )
        self.client_plugin().validate_datastore(
            self.properties[self.DATASTORE_TYPE], self.properties[self.DATASTORE_VERSION],
            self.DATASTORE_TYPE, self.DATASTORE_VERSION, where,
        )  # fmt: skip

    def _cluster(self, cluster_id: str) -> dict[str, Any]:
        return self.client_plugin().show(f"/clusters/{cluster_id}")["cluster"]

    # -- create ----------------------------------------------------------------------

    def handle_create(self) -> str:
        instances = []
        for instance in self.properties.resolved()[self.INSTANCES]:
            entry: dict[str, Any] = {
                "flavorRef": instance[self.FLAVOR],
                "volume": {"size": instance[self.VOLUME_SIZE]},
            }
            nics = []
            for nic in instance[self.NETWORKS] or []:
                found = {}
                if nic.get(self.NET):
                    found["net-id"] = nic[self.NET]
                if nic.get(self.PORT):
                    found["port-id"] = nic[self.PORT]
                if nic.get(self.V4_FIXED_IP):
                    found["v4-fixed-ip"] = nic[self.V4_FIXED_IP]
                nics.append(found)
            if nics:
                entry["nics"] = nics
            if instance[self.AVAILABILITY_ZONE]:
                entry["availability_zone"] = instance[self.AVAILABILITY_ZONE]
            instances.append(entry)
        datastore = {
            "type": self.properties[self.DATASTORE_TYPE],
            "version": self.properties[self.DATASTORE_VERSION],
        }
        body = {
            "name": self.properties[self.NAME] or self.physical_resource_name(),
            "datastore": datastore,
            "instances": instances,
        }
        created = self.client_plugin().call("POST", "/clusters", {"cluster": body})["cluster"]
        self.resource_id_set(created["id"])
        return str(created["id"])

    def check_create_complete(self, token: Any) -> bool:
        try:
            cluster = self._cluster(token)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            if self.client_plugin().is_over_limit(error):
                return False  # as Heat: rate-limited, ask again
            raise
        for instance in cluster.get("instances") or []:
            if instance["status"] in self.BAD_STATUSES:
                raise failed(instance["status"])
            if instance["status"] != self.ACTIVE:
                return False
        return True

    def find_created(self) -> str | None:
        if self.properties[self.NAME]:
            return None  # a name the user gave may be another cluster's too
        name = self.physical_resource_name()
        listed = self.client_plugin().call("GET", "/clusters")["clusters"]
        found = [item for item in listed if item.get("name") == name]
        return str(found[0]["id"]) if len(found) == 1 else None

    # -- delete ----------------------------------------------------------------------

    def handle_delete(self) -> str | None:
        if self.resource_id is None:
            return None
        try:
            self._cluster(self.resource_id)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return None
        return self.resource_id

    def check_delete_complete(self, token: Any) -> bool:
        if not token:
            return True
        try:
            cluster = self._cluster(token)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return True
        task = (cluster.get("task") or {}).get("name")
        if task not in self.DELETE_STATUSES:
            return False  # Trove refuses a delete while another task runs
        if task != self.DELETING:
            try:
                self.client_plugin().call("DELETE", f"/clusters/{token}")
            except Exception as error:  # noqa: BLE001 - openstacksdk's types
                self.client_plugin().ignore_not_found(error)
                return True
        return False

    # -- attributes ------------------------------------------------------------------

    def _show_resource(self) -> dict[str, Any] | None:
        return None if self.resource_id is None else self._cluster(self.resource_id)

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        cluster = self._cluster(self.resource_id)
        if name == self.INSTANCES_ATTR:
            return [instance["id"] for instance in cluster.get("instances") or []]
        if name == self.IP_ATTR:
            return cluster.get("ip")
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Trove::Cluster": TroveCluster}
