"""OS::Manila::ShareNetwork, as Heat has it.

Owns: the share network's create (its Neutron network and subnet found by name or id, the
network taken from the subnet when only the subnet is given) and its security services,
Heat's validation (a network needs its subnet, and the subnet must be on that network;
nova-network is refused), updating everything in place (security services added and
removed by difference), delete, check, the attributes (segmentation id, CIDR, IP version and
network type, which Manila reports on the network's default subnet), and finding a share
network an interrupted create made.

A delete waits for the ports of the network's share servers to go (Manila removes them
after the network): the template's subnet can then be deleted.

Crash safety: the id is recorded the moment Manila answers; the security services are
added by ``check_create_complete``, each one only if the network does not have it yet, so
an engine that restarts halfway adds the rest. A share network the template does not name
is given the resource's physical name (Heat sends none), which ``find_created`` looks for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

__all__ = ["ManilaShareNetwork", "resource_mapping"]


class ManilaShareNetwork(Resource):
    """A resource that stores network information for share servers.

    Stores network information that will be used by share servers, where shares are hosted.
    """

    support_status = support.SupportStatus(version="5.0.0")
    default_client_name = "manila"
    entity = "share_networks"

    PROPERTIES = (NAME, NEUTRON_NETWORK, NEUTRON_SUBNET, NOVA_NETWORK, DESCRIPTION, SECURITY_SERVICES) = (
        "name", "neutron_network", "neutron_subnet", "nova_network", "description", "security_services",
    )  # fmt: skip
    ATTRIBUTES = (SEGMENTATION_ID, CIDR, IP_VERSION, NETWORK_TYPE) = (
        "segmentation_id", "cidr", "ip_version", "network_type",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of the share network.", update_allowed=True
        ),
        NEUTRON_NETWORK: properties.Schema(
            properties.Schema.STRING,
            "Neutron network id.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("neutron.network")],
        ),
        NEUTRON_SUBNET: properties.Schema(
            properties.Schema.STRING,
            "Neutron subnet id.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("neutron.subnet")],
        ),
        NOVA_NETWORK: properties.Schema(
            properties.Schema.STRING,
            "Nova network id.",
            update_allowed=True,
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                message="nova-network is no longer supported.",
                version="21.0.0",
            ),
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Share network description.", update_allowed=True
        ),
        SECURITY_SERVICES: properties.Schema(
            properties.Schema.LIST,
            "A list of security services IDs or names.",
            schema=properties.Schema(properties.Schema.STRING),
            update_allowed=True,
            default=[],
        ),
    }

    attributes_schema = {
        SEGMENTATION_ID: attributes.Schema(
            "VLAN ID for VLAN networks or tunnel-id for GRE/VXLAN networks.",
            type=attributes.Schema.STRING,
        ),
        CIDR: attributes.Schema("CIDR of subnet.", type=attributes.Schema.STRING),
        IP_VERSION: attributes.Schema("Version of IP address.", type=attributes.Schema.STRING),
        NETWORK_TYPE: attributes.Schema(
            "The physical mechanism by which the virtual network is implemented.",
            type=attributes.Schema.STRING,
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [key],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity=entity,
            )
            for key, entity in ((self.NEUTRON_NETWORK, "network"), (self.NEUTRON_SUBNET, "subnet"))
        ]  # fmt: skip

    def validate(self) -> None:
        super().validate()
        where = f"resources.{self.name}.properties"
        if self.properties[self.NOVA_NETWORK]:
            raise ValidationError(
                "Nova network is no longer supported",
                path=f"{where}.{self.NOVA_NETWORK}",
                hint="give neutron_network and neutron_subnet instead",
            )
        network, subnet = (
            self.properties[self.NEUTRON_NETWORK],
            self.properties[self.NEUTRON_SUBNET],
        )
        if network and not subnet:
            raise ValidationError(
                f"{self.NEUTRON_NETWORK} specified without {self.NEUTRON_SUBNET}.",
                path=f"{where}.{self.NEUTRON_NETWORK}",
                hint=f"give {self.NEUTRON_SUBNET}: a subnet of that network",
            )
        if network and subnet:
            neutron = self.client_plugin("neutron")
            subnet_network = self._network_of(
                neutron.find_resourceid_by_name_or_id("subnet", subnet)
            )
            if subnet_network != neutron.find_resourceid_by_name_or_id("network", network):
                raise ValidationError(
                    f"Provided {self.NEUTRON_SUBNET} does not belong to provided {self.NEUTRON_NETWORK}.",
                    path=f"{where}.{self.NEUTRON_SUBNET}",
                    hint=f"give a subnet of {network}",
                )

    def _network_of(self, subnet_id: str) -> str:
        neutron = self.client_plugin("neutron")
        return str(neutron.read(lambda: neutron.client().get_subnet(subnet_id)).network_id)

    def network_name(self) -> str:
        """The template's name, or the resource's physical name (see the module's note)."""
        return self.properties[self.NAME] or self.physical_resource_name()

    # -- create -------------------------------------------------------------------------

    def handle_create(self) -> str:
        arguments: dict[str, Any] = {"name": self.network_name()}
        subnet, network = (
            self.properties[self.NEUTRON_SUBNET],
            self.properties[self.NEUTRON_NETWORK],
        )
        if subnet and not network:
            network = self._network_of(subnet)
        for key, value in (
            ("neutron_net_id", network),
            ("neutron_subnet_id", subnet),
            ("description", self.properties[self.DESCRIPTION]),
        ):
            if value is not None:
                arguments[key] = value
        created = self.client().create_share_network(**arguments)
        self.resource_id_set(created.id)
        return str(created.id)

    def check_create_complete(self, token: Any) -> bool:
        wanted = self._security_service_ids(self.properties[self.SECURITY_SERVICES] or [])
        for security_service_id in sorted(wanted - self._attached()):
            self.client_plugin().share_network_action(
                self.resource_id, "add_security_service", security_service_id
            )
        return True

    def find_created(self) -> str | None:
        if self.properties[self.NAME]:
            return None
        name = self.physical_resource_name()
        for found in self.client().share_networks(name=name):
            if found.name == name:
                return str(found.id)
        return None

    def _security_service_ids(self, services: list[str]) -> set[str]:
        plugin = self.client_plugin()
        return {str(plugin.get_security_service(service)["id"]) for service in services}

    def _attached(self) -> set[str]:
        return {
            str(found["id"])
            for found in self.client_plugin().security_services(share_network_id=self.resource_id)
        }

    # -- update -------------------------------------------------------------------------

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        changes = dict(prop_diff)
        if self.SECURITY_SERVICES in changes:
            wanted = self._security_service_ids(changes.pop(self.SECURITY_SERVICES) or [])
            attached = self._attached()
            plugin = self.client_plugin()
            for security_service_id in sorted(attached - wanted):
                plugin.share_network_action(
                    self.resource_id, "remove_security_service", security_service_id
                )
            for security_service_id in sorted(wanted - attached):
                plugin.share_network_action(
                    self.resource_id, "add_security_service", security_service_id
                )
        if not changes:
            return
        update: dict[str, Any] = {}
        if self.NAME in changes:
            update["name"] = changes[self.NAME] or self.physical_resource_name()
        if self.DESCRIPTION in changes:
            update["description"] = changes[self.DESCRIPTION]
        subnet, network = changes.get(self.NEUTRON_SUBNET), changes.get(self.NEUTRON_NETWORK)
        if subnet and not network:
            network = self._network_of(subnet)
        if network:
            update["neutron_net_id"] = network
        if subnet:
            update["neutron_subnet_id"] = subnet
        if update:
            self.client().update_share_network(self.resource_id, **update)

    # -- delete, check, attributes --------------------------------------------------------

    def handle_delete(self) -> str | None:
        if self.resource_id is None:
            return None
        try:
            self.client().delete_share_network(self.resource_id, ignore_missing=False)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return None
        return self.resource_id

    def check_delete_complete(self, token: Any) -> bool:
        if not token:
            return True
        try:
            self.client_plugin().read(lambda: self.client().get_share_network(self.resource_id))
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return not self._share_server_ports()
        return False

    def _share_server_ports(self) -> list[Any]:
        """The ports Manila's share servers still have on the network's subnet. Manila
        tears a share network's share servers down after the network is gone; until their
        ports are, the subnet cannot be deleted, so the delete waits for them (Heat does
        not, and a template's subnet delete then fails on Neutron's 409)."""
        neutron = self.client_plugin("neutron")
        try:
            subnet = self.properties[self.NEUTRON_SUBNET]
        except Exception as error:  # noqa: BLE001 - a subnet deleted behind the stack's back
            neutron.ignore_not_found(error)
            return []
        if not subnet:
            return []
        ports = neutron.read(
            lambda: list(neutron.client().ports(fixed_ips=[f"subnet_id={subnet}"]))
        )
        return [port for port in ports if str(port.device_owner or "").startswith("manila:")]

    def handle_check(self) -> None:
        self.client_plugin().read(lambda: self.client().get_share_network(self.resource_id))

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        found = self.client_plugin().read(lambda: self.client().get_share_network(self.resource_id))
        return found.to_dict(original_names=True, headers=False, computed=False)

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        # Manila's first microversion reports these on the network (taken from its
        # default subnet); openstacksdk's model of a share network has none of them.
        return self.client_plugin().share_network_document(self.resource_id).get(name)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Manila::ShareNetwork": ManilaShareNetwork}
