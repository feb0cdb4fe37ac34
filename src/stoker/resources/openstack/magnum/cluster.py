"""OS::Magnum::Cluster, as Heat has it.

Owns: the cluster's create request (the template resolved to its UUID by Heat's
translation; the physical name when no name is given), the wait for Magnum's conductor
(CREATE_IN_PROGRESS -> CREATE_COMPLETE, _FAILED a failure, in Heat's words), updates of the
node and master counts, discovery URL and timeout in place (a JSON patch, then the wait for
UPDATE_COMPLETE), delete and its wait, the attributes (the cluster as Magnum shows it), and
finding a cluster an interrupted create made (by the physical name it was given).

Untested against a real Magnum (issue 29): a cluster needs Magnum's Heat-driven drivers, an
image and Nova servers; validation, and the refusal a cloud without Magnum gives, are tested
through the ``stoker`` command.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.magnum.client_plugin import settled
from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.resource import Resource

__all__ = ["Cluster", "resource_mapping"]

COLLECTION = "clusters"


class Cluster(Resource):
    """A resource that creates a magnum cluster.

    This resource creates a magnum cluster, which is a collection of node objects where work
    is scheduled.
    """

    support_status = support.SupportStatus(version="9.0.0")
    default_client_name = "magnum"
    entity = "clusters"

    PROPERTIES = (
        NAME, CLUSTER_TEMPLATE, KEYPAIR, NODE_COUNT, MASTER_COUNT, DISCOVERY_URL, CREATE_TIMEOUT,
    ) = (
        "name", "cluster_template", "keypair", "node_count", "master_count", "discovery_url",
        "create_timeout",
    )  # fmt: skip
    ATTRIBUTES = (
        API_ADDRESS_ATTR, STACK_ID_ATTR, COE_VERSION_ATTR, MASTER_ADDRESSES_ATTR, STATUS_ATTR,
        MASTER_COUNT_ATTR, NODE_ADDRESSES_ATTR, STATUS_REASON_ATTR, NODE_COUNT_ATTR, NAME_ATTR,
        CONTAINER_VERSION_ATTR, DISCOVERY_URL_ATTR, CLUSTER_TEMPLATE_ID_ATTR, KEYPAIR_ATTR,
        CREATE_TIMEOUT_ATTR,
    ) = (
        "api_address", "stack_id", "coe_version", "master_addresses", "status", "master_count",
        "node_addresses", "status_reason", "node_count", "name", "container_version",
        "discovery_url", "cluster_template_id", "keypair", "create_timeout",
    )  # fmt: skip

    properties_schema = {
        CLUSTER_TEMPLATE: properties.Schema(
            properties.Schema.STRING,
            "The name or ID of the cluster template.",
            required=True,
            constraints=[constraints.CustomConstraint("magnum.cluster_template")],
        ),
        CREATE_TIMEOUT: properties.Schema(
            properties.Schema.INTEGER,
            "Timeout for creating the cluster in minutes. Set to 0 for no timeout.",
            update_allowed=True,
            default=60,
            constraints=[constraints.Range(min=0)],
        ),
        DISCOVERY_URL: properties.Schema(
            properties.Schema.STRING,
            "Specifies a custom discovery url for node discovery.",
            update_allowed=True,
        ),
        KEYPAIR: properties.Schema(
            properties.Schema.STRING,
            "The name of the keypair. If not presented, use keypair in cluster template.",
            constraints=[constraints.CustomConstraint("nova.keypair")],
        ),
        MASTER_COUNT: properties.Schema(
            properties.Schema.INTEGER,
            "The number of master nodes for this cluster.",
            update_allowed=True,
            default=1,
            constraints=[constraints.Range(min=1)],
        ),
        NAME: properties.Schema(
            properties.Schema.STRING,
            "The cluster name.",
        ),
        NODE_COUNT: properties.Schema(
            properties.Schema.INTEGER,
            "The node count for this cluster.",
            update_allowed=True,
            default=1,
            constraints=[constraints.Range(min=1)],
        ),
    }

    attributes_schema = {
        API_ADDRESS_ATTR: attributes.Schema(
            "The endpoint URL of COE API exposed to end-users.", type=attributes.Schema.STRING
        ),
        CLUSTER_TEMPLATE_ID_ATTR: attributes.Schema(
            "The UUID of the cluster template.", type=attributes.Schema.STRING
        ),
        COE_VERSION_ATTR: attributes.Schema(
            "Version info of chosen COE in cluster for helping client in picking the right version of client.",
            type=attributes.Schema.STRING,
        ),
        CONTAINER_VERSION_ATTR: attributes.Schema(
            "Version info of constainer engine in the chosen COE in cluster for helping client in picking the right version of client.",
            type=attributes.Schema.STRING,
        ),
        CREATE_TIMEOUT_ATTR: attributes.Schema(
            "The timeout for cluster creation in minutes.", type=attributes.Schema.INTEGER
        ),
        DISCOVERY_URL_ATTR: attributes.Schema(
            "The custom discovery url for node discovery.", type=attributes.Schema.STRING
        ),
        KEYPAIR_ATTR: attributes.Schema("The name of the keypair.", type=attributes.Schema.STRING),
        MASTER_ADDRESSES_ATTR: attributes.Schema(
            "List of floating IP of all master nodes.", type=attributes.Schema.LIST
        ),
        MASTER_COUNT_ATTR: attributes.Schema(
            "The number of servers that will serve as master for the cluster.",
            type=attributes.Schema.INTEGER,
        ),
        NAME_ATTR: attributes.Schema("Name of the resource.", type=attributes.Schema.STRING),
        NODE_ADDRESSES_ATTR: attributes.Schema(
            "List of floating IP of all servers that serve as node.", type=attributes.Schema.LIST
        ),
        NODE_COUNT_ATTR: attributes.Schema(
            "The number of servers that will serve as node in the cluster.",
            type=attributes.Schema.INTEGER,
        ),
        STACK_ID_ATTR: attributes.Schema(
            "The reference UUID of orchestration stack for this COE cluster.",
            type=attributes.Schema.STRING,
        ),
        STATUS_ATTR: attributes.Schema(
            "The status for this COE cluster.", type=attributes.Schema.STRING
        ),
        STATUS_REASON_ATTR: attributes.Schema(
            "The reason of cluster current status.", type=attributes.Schema.STRING
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.CLUSTER_TEMPLATE],
                client_plugin="magnum", finder="get_cluster_template",
            )
        ]  # fmt: skip

    # -- create, update, delete -------------------------------------------------------

    def handle_create(self) -> str:
        body = {
            key: value for key, value in self.properties.resolved().items() if value is not None
        }
        body["cluster_template_id"] = body.pop(self.CLUSTER_TEMPLATE)
        # The physical name when none is given (Heat lets Magnum make one): the name a
        # resumed create finds its cluster by.
        body[self.NAME] = self.properties[self.NAME] or self.physical_resource_name()
        created = self.client_plugin().call("POST", f"/{COLLECTION}", body)
        self.resource_id_set(created["uuid"])
        return str(created["uuid"])

    def check_create_complete(self, token: Any) -> bool:
        return settled(self.client_plugin().show(COLLECTION, token), "CREATE", "Cluster", self.name)

    def find_created(self) -> str | None:
        if self.properties[self.NAME]:
            return None  # a name the user gave may be another cluster's too
        name = self.physical_resource_name()
        listed = self.client_plugin().call("GET", f"/{COLLECTION}")[COLLECTION]
        found = [item for item in listed if item.get("name") == name]
        return str(found[0]["uuid"]) if len(found) == 1 else None

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> str | None:
        if not prop_diff:
            return None
        patch = [
            {"op": "replace", "path": f"/{key}", "value": value} for key, value in prop_diff.items()
        ]
        self.client_plugin().call("PATCH", f"/{COLLECTION}/{self.resource_id}", patch)
        return self.resource_id

    def check_update_complete(self, token: Any) -> bool:
        if not token:
            return True
        found = self.client_plugin().show(COLLECTION, token)
        # As Heat: the first poll may come before Magnum has started the update.
        if found.get("status") == "CREATE_COMPLETE":
            return False
        return settled(found, "UPDATE", "Cluster", self.name)

    def handle_delete(self) -> str | None:
        if self.resource_id is None:
            return None
        try:
            self.client_plugin().call("DELETE", f"/{COLLECTION}/{self.resource_id}")
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return None
        return self.resource_id

    def check_delete_complete(self, token: Any) -> bool:
        return not token or self.client_plugin().gone(COLLECTION, token)

    # -- attributes ------------------------------------------------------------------

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return self.client_plugin().show(COLLECTION, self.resource_id)

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        return self.client_plugin().show(COLLECTION, self.resource_id).get(name)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Magnum::Cluster": Cluster}
