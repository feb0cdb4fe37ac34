"""OS::Nova::Server, Heat-compatible, through openstacksdk's compute proxy.

Owns: the resource's lifecycle (create, in-place update or replacement, delete that
tolerates "already gone" and waits until the server is gone, suspend, resume, check,
snapshot and restore), validation, and the attributes. The declarations live in
``server_schema``, the pure request rules in ``server_requests``, networking in
``server_networks`` and the update steps in ``server_update``.

Microversions (seed 004): openstacksdk picks one per call; this module never chooses one.
A feature newer than the cloud fails with the seed's message (``require_version``), except
``allocate_network: auto`` on a Nova older than 2.37, which is emulated (a network is found
or made for the project, and a warning event says so).

Must not: keep state outside the resource data, or hold a token that is not plain JSON.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from stoker.resources import server_transport
from stoker.resources.heat.software_config import config_by_reference
from stoker.resources.openstack.client_plugin import http_status
from stoker.resources.openstack.neutron import dependencies
from stoker.resources.openstack.nova import server_live, server_replace, server_update
from stoker.resources.openstack.nova import server_requests as requests
from stoker.resources.openstack.nova import server_schema as s
from stoker.resources.openstack.nova.server_networks import (
    EXTERNAL_PORTS,
    ServerNetworks,
    first_address,
    server_networks,
)
from stoker.sdk import translation
from stoker.sdk.dependencies import ResourceView, StackView
from stoker.sdk.exceptions import EntityNotFound, ResourceFailure, ValidationError
from stoker.sdk.properties import Properties, contains_unresolved
from stoker.sdk.resource import Resource

__all__ = ["Server", "ServerReads", "resource_mapping"]

# Statuses a server passes through on its way somewhere (Heat's deferred_server_statuses).
DEFERRED_STATUSES = frozenset(
    {"BUILD", "HARD_REBOOT", "PASSWORD", "REBOOT", "RESCUE", "RESIZE", "REVERT_RESIZE", "SHUTOFF", "SUSPENDED", "VERIFY_RESIZE"}
)
IMAGE_TASK_STATES = frozenset({"image_uploading", "image_snapshot_pending", "image_snapshot", "image_pending_upload"})
SNAPSHOT_IMAGE_ID = "snapshot_image_id"
# Heat's collectors for a Nova server's agent, before the transport's own.
DEFAULT_COLLECTORS = ("ec2",)
CONSOLE_TYPES = {
    "novnc": ("vnc", "novnc"),
    "xvpvnc": ("vnc", "xvpvnc"),
    "spice-html5": ("spice", "spice-html5"),
    "rdp-html5": ("rdp", "rdp-html5"),
    "serial": ("serial", "serial"),
    "webmks": ("mks", "webmks"),
}


def status_of(server: Any) -> str:
    """The server's status (some clouds append "(...)" to it)."""
    return str(server.status or "").split("(")[0]


class ServerReads(Resource):
    """What OS::Nova::Server shares with AWS::EC2::Instance (not a type itself): reading the
    live server and waiting for its delete, from the clients and the resource id only."""

    def fetch_server(self, server_id: str, polling: bool = False) -> Any:
        """The live server, or None on an answer worth asking again (over limit, 500,
        503), as Heat's fetch_server. Not found raises. ``polling``: a poll of a create
        or delete, answered from the action's shared listing (a second old at most)."""
        try:
            if polling:
                return self.client_plugin().listed_server(server_id)
            return self.client().get_server(server_id)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types, classified below
            if self.client_plugin().is_over_limit(error) or http_status(error) in (500, 503):
                return None
            raise

    def _server_gone(self, server_id: str) -> bool:
        """Heat's check_delete_server_complete."""
        try:
            server = self.fetch_server(server_id, polling=True)
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
            return True
        if server is None:
            return False
        status = status_of(server)
        if status == "DELETED":  # whatever task state the deleted row kept
            return True
        if server.task_state == "deleting":
            return False
        if status == "SOFT_DELETED":
            self.client().delete_server(server_id, force=True)
        elif status == "ERROR":
            fault = server.fault or {}
            raise ResourceFailure(
                f"Went to status ERROR due to \"Server {server.name} delete failed: ({fault.get('code')}) {fault.get('message', 'Unknown')}\""
            )
        return False


class Server(ServerReads):
    """A resource for managing Nova instances.

    A Server resource manages the running virtual machine instance within an OpenStack
    cloud.
    """

    default_client_name = "nova"
    entity = "server"
    properties_schema = s.PROPERTIES_SCHEMA
    attributes_schema = s.ATTRIBUTES_SCHEMA

    @classmethod
    def implicit_dependencies(cls, me: ResourceView, stack: StackView) -> list[str]:
        """Heat's rule: a server follows the subnets of the networks it is on (and those
        whose network it cannot tell)."""
        return dependencies.server_dependencies(me, stack)

    def translation_rules(self, props: Properties) -> list[translation.TranslationRule]:
        rule = translation.TranslationRule
        resolve_neutron = [
            rule(props, rule.RESOLVE, [s.NETWORKS, key], client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity=entity)
            for key, entity in ((s.NETWORK_ID, "network"), (s.NETWORK_SUBNET, "subnet"), (s.NETWORK_PORT, "port"))
        ]
        return [
            rule(props, rule.REPLACE, [s.NETWORKS, s.NETWORK_ID], value_name=s.NETWORK_UUID),
            rule(props, rule.RESOLVE, [s.FLAVOR], client_plugin="nova", finder="find_flavor_by_name_or_id"),
            rule(props, rule.RESOLVE, [s.IMAGE], client_plugin="glance", finder="find_image_by_name_or_id"),
            rule(props, rule.REPLACE, [s.BLOCK_DEVICE_MAPPING_V2, s.BDM_IMAGE], value_name=s.BDM_IMAGE_ID),
            rule(props, rule.RESOLVE, [s.BLOCK_DEVICE_MAPPING_V2, s.BDM_IMAGE], client_plugin="glance", finder="find_image_by_name_or_id"),
            *resolve_neutron,
        ]

    # -- helpers -------------------------------------------------------------------------

    def networks_helper(self) -> ServerNetworks:
        return ServerNetworks(self)

    def server_name(self) -> str:
        return self.properties[s.NAME] or self.physical_resource_name()

    def _get_server(self) -> Any:
        try:
            return self.client().get_server(self.resource_id)
        except Exception as error:  # noqa: BLE001
            if self.client_plugin().is_not_found(error):
                raise EntityNotFound("Server", str(self.resource_id))
            raise

    def _is_active(self, server: Any) -> bool:
        """Heat's _check_active: ACTIVE is done, a deferred status is not yet; ERROR or
        an unknown status fails."""
        status = status_of(server)
        if status == "ACTIVE":
            return True
        if status in DEFERRED_STATUSES:
            return False
        if status == "ERROR":
            fault = server.fault or {}
            raise ResourceFailure(
                f"Went to status ERROR due to \"Message: {fault.get('message', 'Unknown')}, Code: {fault.get('code', 'Unknown')}\""
            )
        raise ResourceFailure(f"Server is not active - Unknown status {server.status} due to \"Unknown\"")

    def _set_tags(self, server_id: str, tags: list[str]) -> None:
        compute = self.client()
        compute.get_server(server_id).set_tags(compute, list(tags))

    # -- validation ------------------------------------------------------------------------

    def validate(self) -> None:
        super().validate()
        props = self.properties
        path = f"resources.{self.name}.properties"
        if props[s.USER_DATA_FORMAT] == s.SOFTWARE_CONFIG:
            if "deployments" in self.metadata_get():
                raise ValidationError("deployments key not allowed in resource metadata with user_data_format of SOFTWARE_CONFIG", path=path)
            server_transport.check_transport(props[s.SOFTWARE_CONFIG_TRANSPORT], f"{path}.{s.SOFTWARE_CONFIG_TRANSPORT}")
        bdm_v2 = props[s.BLOCK_DEVICE_MAPPING_V2] or []
        requests.validate_block_devices(self.name, props[s.IMAGE] or None, props[s.BLOCK_DEVICE_MAPPING], bdm_v2, path)
        networks = props[s.NETWORKS] or []
        requests.validate_networks(self.name, networks, props[s.SECURITY_GROUPS], path)
        plugin = self.client_plugin()
        if requests.str_network(networks) == s.NETWORK_NONE:
            plugin.require_version(s.MICROVERSION_STR_NETWORK, feature='networks "allocate_network: none"')
        if requests.is_nic_tagged(networks):
            plugin.require_version(s.MICROVERSION_NIC_TAGS, feature='"tag" in networks')
        if props[s.TAGS]:
            plugin.require_version(s.MICROVERSION_TAGS, feature='"tags"')
        if any(mapping.get(s.BDM_VOLUME_TYPE) for mapping in bdm_v2):
            plugin.require_version(s.MICROVERSION_VOLUME_TYPE, feature='"volume_type" in block_device_mapping_v2')
        if props[s.PERSONALITY]:
            # Refused only by a cloud that offers nothing older than its removal (2.57):
            # elsewhere the create asks for 2.56 (seed 004).
            if not plugin.offers_version(s.MICROVERSION_LAST_PERSONALITY) and plugin.is_version_supported(s.MICROVERSION_PERSONALITY_REMOVED):
                raise ValidationError("Cannot use the personality parameter as nova no longer supports it. Use user_data instead.", path=path)
            if any(mapping.get(s.BDM_VOLUME_TYPE) for mapping in bdm_v2):
                raise ValidationError(
                    f'"personality" needs compute microversion {s.MICROVERSION_LAST_PERSONALITY} or older and '
                    f'"volume_type" in block_device_mapping_v2 needs {s.MICROVERSION_VOLUME_TYPE}: one server cannot have both',
                    path=path,
                    hint="give the files in user_data instead of personality",
                )
        if props[s.IMAGE] and not contains_unresolved(props[s.IMAGE]) and not contains_unresolved(props[s.FLAVOR]):
            self._validate_image_flavor(props[s.IMAGE], props[s.FLAVOR], path)
        metadata = props[s.METADATA]
        if metadata and not contains_unresolved(metadata):
            maximum = self.client_plugin().absolute_limits()["maxServerMeta"]
            if maximum is not None and maximum >= 0 and len(metadata) > maximum:
                raise ValidationError(
                    f"Instance metadata must not contain greater than {maximum} entries.  This is the maximum "
                    "number allowed by your service provider",
                    path=path,
                )

    def _validate_image_flavor(self, image_id: str, flavor_id: str, path: str) -> None:
        try:
            image = self.client_plugin("glance").find("image", image_id)
            flavor = self.client_plugin().find("flavor", flavor_id)
        except EntityNotFound:
            return  # made later in the same stack, or reported by the constraints
        if str(image.status).lower() != "active":
            raise ValidationError(f"Image status is required to be active not {image.status}.", path=path)
        if (flavor.ram or 0) < (image.min_ram or 0):
            raise ValidationError(f"Image {image_id} requires {image.min_ram} minimum ram. Flavor {flavor_id} has only {flavor.ram}.", path=path)
        if (flavor.disk or 0) < (image.min_disk or 0):
            raise ValidationError(
                f"Image {image_id} requires {image.min_disk} GB minimum disk space. Flavor {flavor_id} has only {flavor.disk} GB.", path=path
            )

    # -- create ------------------------------------------------------------------------------

    def _nics(self) -> Any:
        """Nova's ``networks`` for this server: "auto"/"none", a list, or None (omitted)."""
        networks = self.properties[s.NETWORKS] or []
        plugin = self.client_plugin()
        allocate = requests.str_network(networks)
        if allocate is not None:
            if plugin.is_version_supported(s.MICROVERSION_STR_NETWORK):
                return allocate
            if allocate != s.NETWORK_AUTO:
                plugin.require_version(s.MICROVERSION_STR_NETWORK, feature='networks "allocate_network: none"')
            network_id = self.emulated_auto_network()
            return [{"uuid": network_id}]
        if networks:
            return self.networks_helper().build_nics(networks, self.properties[s.SECURITY_GROUPS])
        # Since 2.37 Nova needs "networks"; "auto" is what it did before without one
        # (openstacksdk's cloud layer sends the same).
        return s.NETWORK_AUTO if plugin.is_version_supported(s.MICROVERSION_STR_NETWORK) else None

    def emulated_auto_network(self) -> str:
        """Nova 2.37's "allocate_network: auto" done client-side (seed 004's "get me a
        network"), with a warning event saying so: the network to use."""
        network_id, how = self.networks_helper().auto_allocate_network()
        self.warn(
            f"the compute service supports microversions up to {self.client_plugin().negotiated_version()}, and "
            f'"allocate_network: auto" needs {s.MICROVERSION_STR_NETWORK}: stoker emulated it client-side, '
            f"using network {network_id} ({how})"
        )
        return network_id

    def create_request(self, nics: Any) -> dict[str, Any]:
        """openstacksdk's create_server arguments (everything but the ports made)."""
        props = self.properties
        metadata_for_user_data = self.metadata_get()
        if self.user_data_software_config():
            # The agent learns where to poll from the metadata in its user data.
            server_transport.issue_metadata_url(self, props[s.SOFTWARE_CONFIG_TRANSPORT])
            metadata_for_user_data = server_transport.server_metadata(self, DEFAULT_COLLECTORS)
        user_data = requests.build_user_data(self._user_data_content(props), props[s.USER_DATA_FORMAT], metadata_for_user_data)
        bdm_v1 = requests.legacy_block_devices(props[s.BLOCK_DEVICE_MAPPING], props[s.IMAGE] or None)
        request: dict[str, Any] = {
            "name": self.server_name(),
            "flavor_id": props[s.FLAVOR],
            "image_id": props[s.IMAGE] or None,
            "key_name": props[s.KEY_NAME] or None,
            "security_groups": [{"name": group} for group in props[s.SECURITY_GROUPS] or []] or None,
            "metadata": requests.serialize_metadata(props[s.METADATA]) or None,
            "user_data": requests.encode_user_data(user_data),
            "scheduler_hints": props[s.SCHEDULER_HINTS] or None,
            "networks": nics,
            "availability_zone": props[s.AVAILABILITY_ZONE] or None,
            "block_device_mapping": requests.booting_image(bdm_v1 + requests.block_devices_v2(props[s.BLOCK_DEVICE_MAPPING_V2]), props[s.IMAGE] or None) or None,
            # Unset (None) leaves it to Nova; a given false is sent.
            "config_drive": props[s.CONFIG_DRIVE] if props.data.get(s.CONFIG_DRIVE) is not None else None,
            "disk_config": props[s.DISK_CONFIG] or None,
            "admin_password": props[s.ADMIN_PASS] or None,
            "personality": requests.personality_request(props[s.PERSONALITY]),
        }
        # reservation_id is accepted, not sent: Nova assigns reservation ids, it takes none.
        return {key: value for key, value in request.items() if value is not None}

    def handle_create(self) -> str:
        request = self.create_request(self._nics())
        plugin = self.client_plugin()
        if request.get("personality") and plugin.is_version_supported(s.MICROVERSION_PERSONALITY_REMOVED):
            # Compute 2.57 removed personality: ask for the last microversion that has it,
            # which validation made sure the cloud offers.
            from openstack.compute.v2.server import Server as ServerEntity

            server = plugin.create_at(ServerEntity, s.MICROVERSION_LAST_PERSONALITY, **request)
        else:
            server = self.client().create_server(**request)
        # Recorded before anything else, so a crash leaves the server known to the stack.
        self.resource_id_set(server.id)
        return str(server.id)

    def check_create_complete(self, token: Any) -> bool:
        server = self.fetch_server(str(token), polling=True)
        if server is None or not self._is_active(server):
            return False
        if self.properties[s.TAGS]:
            self._set_tags(str(token), self.properties[s.TAGS])
        helper = self.networks_helper()
        networks = self.properties[s.NETWORKS] or []
        if networks and all(entry.get(s.NETWORK_PORT) for entry in networks):
            # Every interface is a port the template gave: no need to ask Nova.
            helper.store_external_ports([{s.NETWORK_PORT: entry[s.NETWORK_PORT]} for entry in networks])
        else:
            helper.store_external_ports(helper.interfaces(str(token)))
        return True

    def find_created(self) -> str | None:
        """The id of a server an interrupted create made before its id was recorded: the
        one named exactly ``physical_resource_name()`` (the newest, should there be
        several). None when the template names the server (a name cannot tell it apart)."""
        if self.properties[s.NAME]:
            return None
        name = self.physical_resource_name()
        found = [server for server in self.client().servers(name=f"^{re.escape(name)}$") if server.name == name]
        if not found:
            return None
        return str(max(found, key=lambda server: server.created_at or "").id)

    # -- update --------------------------------------------------------------------------------

    def needs_replace_with_prop_diff(self, changed_properties_set: set[str], after_props: Mapping[str, Any], before_props: Mapping[str, Any]) -> bool:
        def policy(key: str) -> Any:
            return after_props.get(key) or before_props.get(key) or s.PROPERTIES_SCHEMA[key].default

        if s.FLAVOR in changed_properties_set and policy(s.FLAVOR_UPDATE_POLICY) == "REPLACE":
            return True
        if s.IMAGE in changed_properties_set and policy(s.IMAGE_UPDATE_POLICY) == "REPLACE":
            return True
        return s.USER_DATA in changed_properties_set and policy(s.USER_DATA_UPDATE_POLICY) == "REPLACE"

    def prepare_for_replace(self) -> None:
        """Before its replacement is created (Heat's hook): the old server gives up its
        ports, so the replacement can have a port it was given (``port``) or an address it
        names (``fixed_ip``). Every port is detached (and waited for); then the ports it
        made are deleted, as the old server's delete would have (detached first: Neutron's
        policy, 2025.1 on, refuses a member the delete of a port bound to a server). An old
        server in ERROR only has its own ports deleted, as in Heat."""
        if self.resource_id is None:
            return
        helper = self.networks_helper()
        try:
            server = self._get_server()
        except EntityNotFound:
            return
        if server.status != "ERROR":
            ports = [port["id"] for port in helper.ports(EXTERNAL_PORTS)] + helper.internal_port_ids()
            for port_id in ports:
                helper.detach(self.resource_id, port_id)
            server_replace.wait_for_ports(self, self.resource_id, ports, attached=False)
        helper.delete_internal_ports()

    def restore_prev_rsrc(self, convergence: bool = False) -> None:
        """A rollback makes this server current again (Heat's hook). Heat only moves the
        ports back; here the server gets back every entry of its ``networks``: the
        replacement lets go of its interfaces (Nova deletes the ports it made; the ports
        stoker made for it are deleted), then this server is attached again to the ports
        it was given and to its networks, with the fixed addresses they name. Entries it
        still has are left alone, so a rollback resumed after a crash does this once."""
        if self.resource_id is None:
            return
        replacement = self.replacement()
        if isinstance(replacement, Server) and replacement.resource_id is not None:
            server_replace.release_interfaces(replacement)
        server_replace.reattach_networks(self)

    def _user_data_content(self, props: Any) -> Any:
        """As Heat: in the RAW and SOFTWARE_CONFIG formats, a ``user_data`` that is the id
        of a stored software config stands for that config (an OS::Heat::CloudConfig or
        MultipartMime given by get_resource, say)."""
        if props[s.USER_DATA_FORMAT] in ("RAW", "SOFTWARE_CONFIG"):
            return config_by_reference(self, props[s.USER_DATA])
        return props[s.USER_DATA]

    def needs_replace_failed(self) -> bool:
        if not self.resource_id:
            return True
        try:
            server = self.client().get_server(self.resource_id)
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
            return True
        return status_of(server) in ("ERROR", "DELETED", "SOFT_DELETED")

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> dict[str, Any]:
        # The stored values are translated (ids); prop_diff carries the new ones alike.
        before = self.properties.resolved()
        after = Properties(self.properties_schema, {k: v for k, v in {**before, **prop_diff}.items() if v is not None}, context=self.context)
        compute = self.client()
        server_id = str(self.resource_id)
        if s.METADATA in prop_diff:
            live = compute.get_server(server_id)
            metadata = requests.serialize_metadata(after[s.METADATA])
            stale = sorted(set(live.metadata or {}) - set(metadata))
            if stale:
                compute.delete_server_metadata(live, stale)
            compute.set_server_metadata(live, **metadata)
        if s.TAGS in prop_diff:
            self._set_tags(server_id, after[s.TAGS] or [])
        if s.SOFTWARE_CONFIG_TRANSPORT in prop_diff and after[s.USER_DATA_FORMAT] == s.SOFTWARE_CONFIG:
            server_transport.forget_metadata_url(self)
            server_transport.issue_metadata_url(self, after[s.SOFTWARE_CONFIG_TRANSPORT])
        if s.NAME in prop_diff:
            compute.update_server(server_id, name=after[s.NAME] or self.physical_resource_name())
        steps: list[dict[str, Any]] = []
        if s.NETWORKS in prop_diff:
            steps.extend(server_update.network_steps(self, self.properties[s.NETWORKS], after))
        if s.FLAVOR in prop_diff:
            steps.extend(server_update.resize_steps(self, after[s.FLAVOR]))
        new_user_data = s.USER_DATA in prop_diff and after[s.USER_DATA_UPDATE_POLICY] == "REBUILD"
        if new_user_data:
            self.client_plugin().require_version(s.MICROVERSION_REBUILD_USER_DATA, feature="user_data_update_policy REBUILD")
        if s.IMAGE in prop_diff or new_user_data:
            image = after[s.IMAGE] or self._current_image(compute, server_id)
            user_data = requests.build_user_data(self._user_data_content(after), after[s.USER_DATA_FORMAT], self.metadata_get())
            # None clears the user data (a rebuild keeps it unless told).
            step = server_update.rebuild_step(image, after)
            if new_user_data:
                step["attrs"]["user_data"] = requests.encode_user_data(user_data)
            steps.append(step)
        elif s.ADMIN_PASS in prop_diff and after[s.ADMIN_PASS]:
            compute.change_server_password(server_id, after[s.ADMIN_PASS])
        return server_update.new_token(steps)

    @staticmethod
    def _current_image(compute: Any, server_id: str) -> str:
        image = compute.get_server(server_id).image or {}
        return str(image.get("id") or "")

    def check_update_complete(self, token: Any) -> bool:
        done = server_update.advance(self, token)
        if done and token["steps"]:
            helper = self.networks_helper()
            helper.store_external_ports(helper.interfaces(str(self.resource_id)))
        return done

    # -- delete ------------------------------------------------------------------------------

    def user_data_software_config(self) -> bool:
        return self.properties[s.USER_DATA_FORMAT] == s.SOFTWARE_CONFIG

    def live_metadata(self) -> dict[str, Any]:
        """The metadata the server's agent reads: with SOFTWARE_CONFIG, the deployments
        that target it and where to poll (``resources.server_transport``)."""
        if not self.user_data_software_config():
            return self.metadata_get()
        return server_transport.server_metadata(self, DEFAULT_COLLECTORS)

    def _delete(self) -> dict[str, Any] | None:
        server_transport.forget_metadata_url(self)
        helper = self.networks_helper()
        self.data_delete(EXTERNAL_PORTS)
        if self.resource_id is None:
            helper.delete_internal_ports()
            return {"server": None} if not helper.delete_auto_network() else None
        try:
            self.client().delete_server(self.resource_id, ignore_missing=False)
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
        return {"server": str(self.resource_id)}

    def handle_delete(self) -> dict[str, Any] | None:
        return self._delete()

    def handle_snapshot_delete(self, state: Any) -> dict[str, Any] | None:
        """Deletion policy Snapshot: an image of the server first, then the delete."""
        if state[1] != self.FAILED and self.resource_id:
            image_id = self._create_image()
            return {"server": str(self.resource_id), "image": image_id, "image_done": False}
        return self._delete()

    def check_delete_complete(self, token: Any) -> bool:
        if not token:
            return True
        if token.get("image") and not token.get("image_done"):
            if not self._image_ready(token["image"], check_server=False):
                return False
            token["image_done"] = True
            token.update(self._delete() or {"server": None})
        if token.get("server") and not self._server_gone(token["server"]):
            return False
        # The ports stoker made go once the server has (Heat deletes them first): Neutron's
        # policy (2025.1 on) refuses a member the delete of a port bound to a server
        # (device_owner compute:*), and Nova unbinds them when the server goes.
        helper = self.networks_helper()
        helper.delete_internal_ports()
        return helper.delete_auto_network()

    # -- suspend, resume, check ------------------------------------------------------------------

    def _server_for(self, action: str) -> Any:
        if self.resource_id is None:
            raise ResourceFailure(f"Cannot {action} {self.name}, resource_id not set")
        try:
            return self.client().get_server(self.resource_id)
        except Exception as error:  # noqa: BLE001
            if self.client_plugin().is_not_found(error):
                raise ResourceFailure(f"Failed to find server {self.resource_id}")
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
        raise ResourceFailure(f"Suspend of server {server.name} failed - Unknown status {status} due to \"Unknown\"")

    def handle_resume(self) -> str:
        server = self._server_for("resume")
        if status_of(server) != "ACTIVE":
            self.client().resume_server(server)
        return str(server.id)

    def check_resume_complete(self, token: Any) -> bool:
        server = self.fetch_server(str(token))
        return server is not None and self._is_active(server)

    def handle_check(self) -> None:
        """The live server must exist and be ACTIVE."""
        status = status_of(self._get_server())
        if status != "ACTIVE":
            raise ResourceFailure(f"'status': expected 'ACTIVE', got '{status}'")

    # -- snapshot and restore ------------------------------------------------------------------

    def _create_image(self) -> str:
        compute = self.client()
        return str(compute.get_server(self.resource_id).create_image(compute, self.physical_resource_name()))

    def _image_ready(self, image_id: str, check_server: bool = True) -> bool:
        image = self.client("glance").get_image(image_id)
        status = str(image.status).lower()
        if status in ("error", "deleted", "killed"):
            raise ResourceFailure(f"Image {image_id} went to status {image.status}")
        if status != "active":
            return False
        return not check_server or self._get_server().task_state not in IMAGE_TASK_STATES

    def handle_snapshot(self) -> str:
        image_id = self._create_image()
        self.data_set(SNAPSHOT_IMAGE_ID, image_id)
        return image_id

    def check_snapshot_complete(self, token: Any) -> bool:
        return self._image_ready(str(token))

    def handle_delete_snapshot(self, snapshot: Any) -> None:
        image_id = (snapshot.get("resource_data") or {}).get(SNAPSHOT_IMAGE_ID)
        if image_id:
            self.client("glance").delete_image(image_id, ignore_missing=True)

    def handle_restore(self, definition: Any, restore_data: Mapping[str, Any]) -> Any:
        """Restore from a snapshot: the same definition, booting the snapshot's image."""
        image_id = (restore_data.get("resource_data") or {}).get(SNAPSHOT_IMAGE_ID)
        if not image_id:
            return definition
        properties = {key: value for key, value in dict(definition.properties_data).items() if value is not None}
        properties[s.IMAGE] = image_id
        return replace(definition, properties_data=properties)

    # -- attributes ------------------------------------------------------------------------------

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        try:
            server = self.client().get_server(self.resource_id)
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
            return None
        body = server.to_dict(original_names=True, headers=False, computed=False)
        body.pop("location", None)
        return body

    def get_live_resource_data(self) -> dict[str, Any] | None:
        return server_live.live_server(self)

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        return server_live.parse(self, resource_properties, resource_data)

    def _console_urls(self, server: Any) -> dict[str, str]:
        urls = {}
        for name, (protocol, kind) in CONSOLE_TYPES.items():
            try:
                urls[name] = str(self.client().create_server_remote_console(server, protocol=protocol, type=kind).url)
            except Exception as error:  # noqa: BLE001 - reported in the value, as Heat does
                urls[name] = f"Cannot get console url: {error}"
        return urls

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        if name == s.OS_COLLECT_CONFIG:
            return self.live_metadata().get("os-collect-config", {})
        if name == s.NAME_ATTR:
            return self.server_name()
        try:
            server = self.client().get_server(self.resource_id)
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
            return ""
        if name == s.FIRST_ADDRESS:
            return first_address(server.addresses)
        if name == s.ADDRESSES:
            return self.networks_helper().addresses(str(server.id))
        if name == s.NETWORKS_ATTR:
            return self.networks_helper().extend_with_ids(server_networks(server.addresses))
        if name == s.INSTANCE_NAME:
            return server.instance_name
        if name == s.ACCESSIPV4:
            return server.access_ipv4
        if name == s.ACCESSIPV6:
            return server.access_ipv6
        if name == s.CONSOLE_URLS:
            return self._console_urls(server)
        if name == s.TAGS_ATTR and self.client_plugin().is_version_supported(s.MICROVERSION_TAGS):
            return list(server.fetch_tags(self.client()).tags or [])
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Nova::Server": Server}
