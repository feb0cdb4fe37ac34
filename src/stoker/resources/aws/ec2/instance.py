"""AWS::EC2::Instance, as Heat 27 has it: a Nova server with CFN's property names, the
user data Heat builds for the cfn tools (``instance_user_data``), volumes attached after
the server is active, and an implicit port when ``SubnetId`` is given.

Owns: the create request (image and flavor by name or id, security groups, Tags as Nova
metadata, Nova scheduler hints, NetworkInterfaces as ports in DeviceIndex order or a port
made on SubnetId, EBS block device mappings in Nova's legacy form), attaching ``Volumes``,
the in-place updates Heat makes (Tags, InstanceType by resize and confirm, the interfaces
by detach and attach), validation with Heat's messages, delete (the port it made too),
suspend, resume, check and the attributes (AvailabilityZone, the addresses).

Shares OS::Nova::Server's machinery rather than copying it: the live-server read
(``fetch_server``) and the wait for a deleted server (``_server_gone``) of their common
base ``ServerReads``, the resize and interface steps (``server_update``) and the
interface calls (``ServerNetworks``).

Crash safety: the server and the port made for SubnetId are named by the physical resource
name, so a create cut short finds the server (``find_created``) and a delete finds the port;
every token is plain JSON and each poll decides from the live server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.aws.ec2 import instance_schema as schema
from stoker.resources.aws.ec2.instance_user_data import (
    build_instance_user_data,
    cfn_metadata_server_url,
)
from stoker.resources.aws.ec2.tags import tags_to_metadata
from stoker.resources.openstack.nova import server_live, server_update
from stoker.resources.openstack.nova.server import DEFERRED_STATUSES, ServerReads, status_of
from stoker.resources.openstack.nova.server_networks import ServerNetworks, server_networks
from stoker.resources.openstack.nova.server_requests import encode_user_data
from stoker.resources.openstack.nova.server_schema import MICROVERSION_STR_NETWORK, NETWORK_AUTO
from stoker.sdk.exceptions import EntityNotFound, ResourceFailure, ValidationError
from stoker.sdk.resource import Resource

__all__ = ["Instance", "resource_mapping"]

IMPLICIT_PORT = "port_id"


class Instance(ServerReads):
    """An EC2-style instance: a Nova server booted with the cfn tools' user data."""

    default_client_name = "nova"
    entity = "server"
    PROPERTIES = schema.PROPERTIES
    ATTRIBUTES = schema.ATTRIBUTES
    properties_schema = schema.PROPERTIES_SCHEMA
    attributes_schema = schema.ATTRIBUTES_SCHEMA

    def networks_helper(self) -> ServerNetworks:
        return ServerNetworks(self)  # type: ignore[arg-type]

    # -- validation -----------------------------------------------------------------------

    def security_groups(self) -> list[str] | None:
        groups = [
            *(self.properties[schema.SECURITY_GROUPS] or []),
            *(self.properties[schema.SECURITY_GROUP_IDS] or []),
        ]
        return groups or None

    def validate(self) -> None:
        super().validate()
        path = f"resources.{self.name}.properties"
        interfaces = self.properties[schema.NETWORK_INTERFACES]
        if self.security_groups() and interfaces:
            raise ValidationError(
                f"Cannot define the following properties at the same time: {schema.SECURITY_GROUPS}/{schema.SECURITY_GROUP_IDS}, {schema.NETWORK_INTERFACES}.",
                path=path,
            )
        for mapping in self.properties[schema.BLOCK_DEVICE_MAPPINGS] or []:
            ebs = mapping.get(schema.EBS)
            if not ebs:
                raise ValidationError(
                    "Ebs is missing, this is required when specifying BlockDeviceMappings.",
                    path=path,
                )
            if not ebs.get(schema.SNAPSHOT_ID):
                raise ValidationError(
                    "SnapshotId is missing, this is required when specifying BlockDeviceMappings.",
                    path=path,
                )
        if interfaces and self.properties[schema.SUBNET_ID]:
            self.warn(
                f'"{schema.SUBNET_ID}" will be ignored if specified "{schema.NETWORK_INTERFACES}". So if you specified the '
                f'"{schema.NETWORK_INTERFACES}" property, do not specify "{schema.SUBNET_ID}" property.'
            )

    # -- requests -------------------------------------------------------------------------

    def _implicit_port(self, subnet_id: str) -> str:
        """Heat's port on SubnetId (Nova would pick the network's first subnet)."""
        neutron = self.client("neutron")
        name = self.physical_resource_name()
        found = [port for port in neutron.ports(name=name) if port.name == name]
        if found:
            port_id = str(found[0].id)  # made by a create cut short
        else:
            request: dict[str, Any] = {
                "name": name,
                "admin_state_up": True,
                "network_id": neutron.get_subnet(subnet_id).network_id,
                "fixed_ips": [{"subnet_id": subnet_id}],
            }
            if self.security_groups():
                request["security_groups"] = self.client_plugin("neutron").get_secgroup_uuids(
                    self.security_groups()
                )
            port_id = str(neutron.create_port(**request).id)
        self.data_set(IMPLICIT_PORT, port_id)
        return port_id

    def _nics(self, interfaces: Any, subnet_id: str | None) -> list[dict[str, str]] | None:
        if interfaces:
            return [{"port": port} for port in schema.interface_ports(interfaces)]
        if subnet_id:
            return [{"port": self._implicit_port(subnet_id)}]
        return None

    def _scheduler_hints(self) -> dict[str, Any] | None:
        hints: dict[str, Any] = {}
        for hint in self.properties[schema.NOVA_SCHEDULER_HINTS] or []:
            key, value = hint[schema.HINT_KEY], hint[schema.HINT_VALUE]
            if key in hints:
                hints[key] = [
                    *(hints[key] if isinstance(hints[key], list) else [hints[key]]),
                    value,
                ]
            else:
                hints[key] = value
        return hints or None

    def user_data(self) -> str:
        return build_instance_user_data(
            self.properties[schema.USER_DATA], self.metadata_get(), cfn_metadata_server_url(self)
        )

    def create_request(self) -> dict[str, Any]:
        props = self.properties
        request: dict[str, Any] = {
            "name": self.physical_resource_name(),
            "image_id": self.client_plugin("glance").find_image_by_name_or_id(
                props[schema.IMAGE_ID]
            ),
            "flavor_id": self.client_plugin().find_flavor_by_name_or_id(
                props[schema.INSTANCE_TYPE]
            ),
            "key_name": props[schema.KEY_NAME] or None,
            "security_groups": [{"name": group} for group in self.security_groups() or []] or None,
            "user_data": encode_user_data(self.user_data()),
            "metadata": tags_to_metadata(props[schema.TAGS]),
            "scheduler_hints": self._scheduler_hints(),
            "networks": self._nics(props[schema.NETWORK_INTERFACES], props[schema.SUBNET_ID]),
            "availability_zone": props[schema.AVAILABILITY_ZONE] or None,
            "block_device_mapping": schema.legacy_block_devices(
                props[schema.BLOCK_DEVICE_MAPPINGS]
            ),
        }
        if request["networks"] is None and self.client_plugin().is_version_supported(
            MICROVERSION_STR_NETWORK
        ):
            # Since 2.37 Nova needs "networks"; "auto" is what it did before without one
            # (Heat sends none, at an older microversion).
            request["networks"] = NETWORK_AUTO
        return {key: value for key, value in request.items() if value is not None}

    # -- create ---------------------------------------------------------------------------

    def handle_create(self) -> dict[str, Any]:
        request = self.create_request()
        server = self.client().create_server(**request)
        # Recorded before anything else, so a crash leaves the server known to the stack.
        self.resource_id_set(server.id)
        volumes = [
            {
                "volume": volume[schema.VOLUME_ID],
                "device": volume[schema.VOLUME_DEVICE],
                "state": "new",
            }
            for volume in self.properties[schema.VOLUMES] or []
        ]
        return {"server": str(server.id), "volumes": volumes}

    def find_created(self) -> str | None:
        name = self.physical_resource_name()
        found = [
            server for server in self.client().servers(name=f"^{name}$") if server.name == name
        ]
        return str(max(found, key=lambda server: server.created_at or "").id) if found else None

    def _is_active(self, server: Any) -> bool:
        """Heat's ``_check_active(server, 'Instance')``."""
        status = status_of(server)
        if status == "ACTIVE":
            return True
        if status in DEFERRED_STATUSES:
            return False
        if status == "ERROR":
            fault = server.fault or {}
            raise ResourceFailure(
                f'Went to status ERROR due to "Message: {fault.get("message", "Unknown")}, Code: {fault.get("code", "Unknown")}"'
            )
        raise ResourceFailure(
            f'Instance is not active - Unknown status {server.status} due to "Unknown"'
        )

    def check_create_complete(self, token: Any) -> bool:
        if not token.get("active"):
            server = self.fetch_server(token["server"], polling=True)
            if server is None or not self._is_active(server):
                return False
            token["active"] = True
        return self._attach_volumes(token)

    def _attach_volumes(self, token: dict[str, Any]) -> bool:
        """One volume at a time, as Heat: attach it, then wait for Cinder to see it in-use."""
        for volume in token["volumes"]:
            if volume["state"] == "done":
                continue
            if volume["state"] == "new":
                live = self.client("cinder").get_volume(volume["volume"])
                if not any(
                    attachment.get("server_id") == token["server"]
                    for attachment in live.attachments or []
                ):
                    self.client_plugin().attach_volume(
                        token["server"], volume["volume"], volume["device"]
                    )
                volume["state"] = "called"
                return False
            if not self.client_plugin("cinder").check_attach_volume_complete(volume["volume"]):
                return False
            volume["state"] = "done"
        return True

    # -- update ---------------------------------------------------------------------------

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> dict[str, Any] | None:
        steps: list[dict[str, Any]] = []
        if schema.TAGS in prop_diff:
            metadata = tags_to_metadata(prop_diff[schema.TAGS]) or {}
            compute = self.client()
            server = compute.get_server(self.resource_id)
            stale = [key for key in (server.metadata or {}) if key not in metadata]
            if stale:
                compute.delete_server_metadata(server, stale)
            if metadata:
                compute.set_server_metadata(server, **metadata)
        if schema.INSTANCE_TYPE in prop_diff:
            flavor_id = self.client_plugin().find_flavor_by_name_or_id(
                prop_diff[schema.INSTANCE_TYPE]
            )
            steps.extend(server_update.resize_steps(self, flavor_id))  # type: ignore[arg-type]
        if schema.NETWORK_INTERFACES in prop_diff or schema.SUBNET_ID in prop_diff:
            steps.extend(self._interface_steps(prop_diff))
        return server_update.new_token(steps) if steps else None

    def _interface_steps(self, prop_diff: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Heat's ``_update_network_interfaces``: detach what goes, attach what comes."""
        new = list(prop_diff.get(schema.NETWORK_INTERFACES) or [])
        old = list(self.properties[schema.NETWORK_INTERFACES] or [])
        if old and new:
            kept = [entry for entry in old if entry in new]
            detach = schema.interface_ports([entry for entry in old if entry not in kept])
            attach = schema.interface_ports([entry for entry in new if entry not in kept])
            return [{"op": "detach", "port": port} for port in detach] + [
                {"op": "attach", "request": {"port_id": port}} for port in attach
            ]
        if old and schema.NETWORK_INTERFACES not in prop_diff:
            self.warn(
                f'There is no change of "{schema.NETWORK_INTERFACES}" for instance {self.resource_id}, do nothing when updating.'
            )
            return []
        # Interfaces not from NetworkInterfaces: all of them go, then the new ones come.
        steps: list[dict[str, Any]] = [
            {"op": "detach", "port": interface.port_id}
            for interface in self.client().server_interfaces(self.resource_id)
        ]
        self._delete_implicit_port()
        subnet_id = (
            prop_diff.get(schema.SUBNET_ID)
            if schema.SUBNET_ID in prop_diff
            else self.properties[schema.SUBNET_ID]
        )
        nics = self._nics(new, subnet_id)
        if not nics:
            raise ResourceFailure(
                f"Instance {self.resource_id} would be left without a network: give {schema.NETWORK_INTERFACES} or {schema.SUBNET_ID} "
                "(Nova needs a port or a network to attach)"
            )
        steps.extend({"op": "attach", "request": {"port_id": nic["port"]}} for nic in nics)
        return steps

    def check_update_complete(self, token: Any) -> bool:
        if not token:
            return True
        return server_update.advance(self, token)  # type: ignore[arg-type]

    # -- delete ---------------------------------------------------------------------------

    def _delete_implicit_port(self) -> None:
        port_id = self.data().get(IMPLICIT_PORT)
        if port_id is None:
            name = (
                self.physical_resource_name()
            )  # made by a create cut short before it was recorded
            found = [port for port in self.client("neutron").ports(name=name) if port.name == name]
            port_id = found[0].id if found else None
        if port_id:
            with self.client_plugin("neutron").ignore_not_found:
                self.client("neutron").delete_port(port_id)
        self.data_delete(IMPLICIT_PORT)

    def handle_delete(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            self._delete_implicit_port()
            return None
        try:
            self.client().delete_server(self.resource_id, ignore_missing=False)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
        return {"server": str(self.resource_id)}

    def check_delete_complete(self, token: Any) -> bool:
        if token and not self._server_gone(token["server"]):
            return False
        # After the server: Neutron refuses to delete a port a server is bound to (Heat
        # deletes it first, which Nova then tolerates).
        self._delete_implicit_port()
        return True

    # -- suspend, resume, check -----------------------------------------------------------

    def _server_for(self, action: str) -> Any:
        if self.resource_id is None:
            raise ResourceFailure(f"Cannot {action} {self.name}, resource_id not set")
        try:
            return self.client().get_server(self.resource_id)
        except Exception as error:  # noqa: BLE001
            if self.client_plugin().is_not_found(error):
                raise ResourceFailure(f"Failed to find instance {self.resource_id}")
            raise

    def handle_suspend(self) -> str:
        server = self._server_for("suspend")
        if status_of(server) != "SUSPENDED":
            self.client().suspend_server(server)
        return str(server.id)

    def check_suspend_complete(self, token: Any) -> bool:
        server = self.fetch_server(str(token))
        if server is None:
            return False
        status = status_of(server)
        if status in DEFERRED_STATUSES | {"ACTIVE"}:
            return status == "SUSPENDED"
        raise ResourceFailure(
            f'Suspend of instance {server.name} failed - Unknown status {status} due to "Unknown"'
        )

    def handle_resume(self) -> str:
        server = self._server_for("resume")
        if status_of(server) != "ACTIVE":
            self.client().resume_server(server)
        return str(server.id)

    def check_resume_complete(self, token: Any) -> bool:
        server = self.fetch_server(str(token))
        return server is not None and self._is_active(server)

    def handle_check(self) -> None:
        server = self.client().get_server(self.resource_id)
        if not self._is_active(server):
            raise ResourceFailure(f"Instance is not ACTIVE (was: {status_of(server)})")

    def live_metadata(self) -> dict[str, Any]:
        """The metadata the instance's cfn tools read (cfn-init's configuration): its
        functions resolved, as Heat serves it."""
        return self.metadata_get()

    # -- attributes -----------------------------------------------------------------------

    def _show_resource(self) -> dict[str, Any] | None:
        """The server as Nova shows it (None once gone)."""
        try:
            return server_live.live_server(self)
        except EntityNotFound:
            return None

    def get_live_resource_data(self) -> dict[str, Any] | None:
        return server_live.live_server(self)

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """The server in the CloudFormation vocabulary: ``InstanceType`` as given while it
        is the server's flavor, and ``Tags`` as given while the server's metadata holds
        them (else that metadata as tags)."""
        flavor = resource_data.get("flavor") or {}
        live_flavor = str(flavor.get("original_name") or flavor.get("id") or "")
        given = resource_properties.get(schema.INSTANCE_TYPE)
        nova = self.client_plugin()
        try:
            same = given is not None and nova.find_flavor_by_name_or_id(str(given)) == nova.find_flavor_by_name_or_id(live_flavor)
        except Exception:  # noqa: BLE001 - a flavor gone since is not the live one
            same = False
        metadata = {str(key): str(value) for key, value in (resource_data.get("metadata") or {}).items()}
        tags = resource_properties.get(schema.TAGS)
        if not tags or (tags_to_metadata(tags) or {}) != metadata:
            tags = [{"Key": key, "Value": value} for key, value in sorted(metadata.items())]
        return {schema.INSTANCE_TYPE: given if same else live_flavor, schema.TAGS: tags}

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        try:
            server = self.client().get_server(self.resource_id)
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
            return None
        if name == schema.AVAILABILITY_ZONE_ATTR:
            return self.properties[schema.AVAILABILITY_ZONE] or server.availability_zone or None
        # Heat's server_to_ipaddress: the first address of the last network by name.
        networks = server_networks(server.addresses)
        for network in sorted(networks, reverse=True):
            if networks[network]:
                return str(networks[network][0])
        return "0.0.0.0"  # noqa: S104 - Heat's answer for a server without an address


def resource_mapping() -> dict[str, type[Resource]]:
    return {"AWS::EC2::Instance": Instance}
