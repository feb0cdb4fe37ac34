"""OS::Magnum::ClusterTemplate, as Heat has it, and Heat's HIDDEN OS::Magnum::BayModel.

Owns: the template's create request (image, flavors, keypair and external network sent as
Magnum's ``*_id`` fields; the networks resolved to ids by Heat's translation), Heat's check
that the volume driver suits the COE, updating ``public`` in place (a JSON patch), delete,
and finding a template an interrupted create made (by the physical name it was given).

Untested against a real Magnum (issue 29): validation, and the refusal a cloud without
Magnum gives, are tested through the ``stoker`` command.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import constraints, properties, support, translation
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

__all__ = ["BayModel", "ClusterTemplate", "resource_mapping"]

COLLECTION = "clustertemplates"


class ClusterTemplate(Resource):
    """A resource for the ClusterTemplate in Magnum.

    ClusterTemplate is an object that stores template information about the cluster which is
    used to create new clusters consistently.
    """

    support_status = support.SupportStatus(version="9.0.0")
    default_client_name = "magnum"
    entity = "cluster_templates"

    PROPERTIES = (
        NAME, IMAGE, FLAVOR, MASTER_FLAVOR, KEYPAIR, EXTERNAL_NETWORK, FIXED_NETWORK,
        FIXED_SUBNET, DNS_NAMESERVER, DOCKER_VOLUME_SIZE, DOCKER_STORAGE_DRIVER, COE,
        NETWORK_DRIVER, VOLUME_DRIVER, HTTP_PROXY, HTTPS_PROXY, NO_PROXY, LABELS, TLS_DISABLED,
        PUBLIC, REGISTRY_ENABLED, SERVER_TYPE, MASTER_LB_ENABLED, FLOATING_IP_ENABLED,
    ) = (
        "name", "image", "flavor", "master_flavor", "keypair", "external_network",
        "fixed_network", "fixed_subnet", "dns_nameserver", "docker_volume_size",
        "docker_storage_driver", "coe", "network_driver", "volume_driver", "http_proxy",
        "https_proxy", "no_proxy", "labels", "tls_disabled", "public", "registry_enabled",
        "server_type", "master_lb_enabled", "floating_ip_enabled",
    )  # fmt: skip
    # Sent as Magnum's "<property>_id" fields.
    ID_FIELDS = (IMAGE, FLAVOR, MASTER_FLAVOR, KEYPAIR, EXTERNAL_NETWORK)
    # The volume drivers each COE takes (Heat's SUPPORTED_VOLUME_DRIVER).
    SUPPORTED_VOLUME_DRIVER = {"kubernetes": ["cinder"], "swarm": ["rexray"], "mesos": ["rexray"]}

    properties_schema = {
        COE: properties.Schema(
            properties.Schema.STRING,
            "The Container Orchestration Engine for cluster.",
            required=True,
            constraints=[constraints.AllowedValues(["kubernetes", "swarm", "mesos"])],
        ),
        DNS_NAMESERVER: properties.Schema(
            properties.Schema.STRING,
            "The DNS nameserver address.",
            constraints=[constraints.CustomConstraint("ip_addr")],
        ),
        DOCKER_STORAGE_DRIVER: properties.Schema(
            properties.Schema.STRING,
            "Select a docker storage driver.",
            default="devicemapper",
            constraints=[constraints.AllowedValues(["devicemapper", "overlay"])],
        ),
        DOCKER_VOLUME_SIZE: properties.Schema(
            properties.Schema.INTEGER,
            "The size in GB of the docker volume.",
            constraints=[constraints.Range(min=1)],
        ),
        EXTERNAL_NETWORK: properties.Schema(
            properties.Schema.STRING,
            "The external neutron network name or UUID to attach the Cluster.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.network")],
        ),
        FIXED_NETWORK: properties.Schema(
            properties.Schema.STRING,
            "The fixed neutron network name or UUID to attach the Cluster.",
            constraints=[constraints.CustomConstraint("neutron.network")],
        ),
        FIXED_SUBNET: properties.Schema(
            properties.Schema.STRING,
            "The fixed neutron subnet name or UUID to attach the Cluster.",
            constraints=[constraints.CustomConstraint("neutron.subnet")],
        ),
        FLAVOR: properties.Schema(
            properties.Schema.STRING,
            "The nova flavor name or UUID to use when launching the cluster.",
            constraints=[constraints.CustomConstraint("nova.flavor")],
        ),
        FLOATING_IP_ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Indicates whether created clusters should have a floating ip or not.",
            default=True,
        ),
        HTTP_PROXY: properties.Schema(
            properties.Schema.STRING,
            "The http_proxy address to use for nodes in cluster.",
        ),
        HTTPS_PROXY: properties.Schema(
            properties.Schema.STRING,
            "The https_proxy address to use for nodes in cluster.",
        ),
        IMAGE: properties.Schema(
            properties.Schema.STRING,
            "The image name or UUID to use as a base image for cluster.",
            required=True,
            constraints=[constraints.CustomConstraint("glance.image")],
        ),
        KEYPAIR: properties.Schema(
            properties.Schema.STRING,
            "The name of the SSH keypair to load into the cluster nodes.",
            constraints=[constraints.CustomConstraint("nova.keypair")],
        ),
        LABELS: properties.Schema(
            properties.Schema.MAP,
            "Arbitrary labels in the form of key=value pairs to associate with cluster.",
        ),
        MASTER_FLAVOR: properties.Schema(
            properties.Schema.STRING,
            "The nova flavor name or UUID to use when launching the master node of the cluster.",
            constraints=[constraints.CustomConstraint("nova.flavor")],
        ),
        MASTER_LB_ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Indicates whether created clusters should have a load balancer for master nodes or not.",
            default=True,
        ),
        NAME: properties.Schema(
            properties.Schema.STRING,
            "The cluster template name.",
        ),
        NETWORK_DRIVER: properties.Schema(
            properties.Schema.STRING,
            "The name of the driver used for instantiating container networks. By default, Magnum will choose the pre-configured network driver based on COE type.",
        ),
        NO_PROXY: properties.Schema(
            properties.Schema.STRING,
            "A comma separated list of addresses for which proxies should not be used in the cluster.",
        ),
        PUBLIC: properties.Schema(
            properties.Schema.BOOLEAN,
            "Make the cluster template public. To enable this option, you must own the right to publish in magnum. Which default set to admin only.",
            update_allowed=True,
            default=False,
        ),
        REGISTRY_ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Enable the docker registry in the cluster.",
            default=False,
        ),
        SERVER_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Specify the server type to be used.",
            default="vm",
            constraints=[constraints.AllowedValues(["vm", "bm"])],
        ),
        TLS_DISABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Disable TLS in the cluster.",
            default=False,
        ),
        VOLUME_DRIVER: properties.Schema(
            properties.Schema.STRING,
            "The volume driver name for instantiating container volume.",
            constraints=[constraints.AllowedValues(["cinder", "rexray"])],
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [key],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity=entity,
            )
            for key, entity in (
                (self.EXTERNAL_NETWORK, "network"), (self.FIXED_NETWORK, "network"),
                (self.FIXED_SUBNET, "subnet"),
            )
        ]  # fmt: skip

    def validate(self) -> None:
        super().validate()
        coe = self.properties[self.COE]
        driver = self.properties[self.VOLUME_DRIVER]
        supported = self.SUPPORTED_VOLUME_DRIVER[coe]
        if driver and driver not in supported:
            raise ValidationError(
                f"Volume driver type {driver} is not supported by COE:{coe}, expecting a "
                f"{supported} volume driver.",
                path=f"resources.{self.name}.properties.{self.VOLUME_DRIVER}",
                hint=f"give volume_driver {supported[0]} for {coe}, or leave it out",
            )

    def _name(self) -> str:
        return self.properties[self.NAME] or self.physical_resource_name()

    # -- create, update, delete -------------------------------------------------------

    def handle_create(self) -> str:
        given = self.properties.resolved()
        body: dict[str, Any] = {self.NAME: self._name()}
        for key, value in given.items():
            if key == self.NAME or value is None:
                continue
            body[f"{key}_id" if key in self.ID_FIELDS else key] = value
        created = self.client_plugin().call("POST", f"/{COLLECTION}", body)
        self.resource_id_set(created["uuid"])
        return str(created["uuid"])

    def find_created(self) -> str | None:
        if self.properties[self.NAME]:
            return None  # a name the user gave may be another template's too
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
        # Magnum applies a template's PATCH before it answers: a template has no status.
        return True

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

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return self.client_plugin().show(COLLECTION, self.resource_id)


class BayModel(ClusterTemplate):
    """A resource for the BayModel in Magnum.

    This resource has been deprecated by ClusterTemplate. BayModel is an object that stores
    template information about the bay which is used to create new bays consistently.
    """

    support_status = support.SupportStatus(
        status=support.HIDDEN,
        message="Please use OS::Magnum::ClusterTemplate instead.",
        version="11.0.0",
        previous_status=support.SupportStatus(
            status=support.DEPRECATED,
            message="Please use OS::Magnum::ClusterTemplate instead.",
            version="9.0.0",
            previous_status=support.SupportStatus(status=support.SUPPORTED, version="5.0.0"),
        ),
    )


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Magnum::ClusterTemplate": ClusterTemplate, "OS::Magnum::BayModel": BayModel}
