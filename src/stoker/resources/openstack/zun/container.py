"""OS::Zun::Container, as Heat has it.

Owns: Heat's validation (the restart policy's forms, a volume id or a size per mount, a
network or a port per NIC and no fixed IP with a port), the container's run request (the
command split as a shell would, the restart policy as Docker's, mounts, networks as Zun's
``nets``; microversion 1.36 when ``tty`` is given), the wait for Running (Stopped is done
unless interactive; Error a failure, in Heat's words), updates in place of name, CPU and
memory, and of networks by detaching and attaching interfaces one poll at a time, delete
(the container stopped first), and the ``addresses`` attribute (keyed by network id and by
network name).

Untested against a real Zun (issue 29): Zun's compute agent needs Docker and Kuryr. Validation,
and the refusal a cloud without Zun gives, are tested through the ``stoker`` command.
"""

from __future__ import annotations

import copy
import shlex
from collections.abc import Mapping
from typing import Any

from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.exceptions import ResourceFailure, ValidationError
from stoker.sdk.resource import Resource

__all__ = ["ZunContainer", "resource_mapping"]

RESTART_POLICIES = ("always", "unless-stopped", "on-failure", "no")


def parse_restart_policy(policy: str) -> dict[str, str] | None:
    """Docker's restart policy for Heat's text (``on-failure:3``), None when it is not one."""
    if ":" in policy:
        name, _, count = policy.partition(":")
        return {"Name": name, "MaximumRetryCount": count or "0"} if name == "on-failure" else None
    return {"Name": policy, "MaximumRetryCount": "0"} if policy in RESTART_POLICIES else None


class ZunContainer(Resource):
    """A resource that creates a Zun Container.

    This resource creates a Zun container.
    """

    support_status = support.SupportStatus(version="9.0.0")
    default_client_name = "zun"
    entity = "containers"

    PROPERTIES = (
        NAME, IMAGE, COMMAND, CPU, MEMORY, ENVIRONMENT, WORKDIR, LABELS, IMAGE_PULL_POLICY,
        RESTART_POLICY, INTERACTIVE, IMAGE_DRIVER, HINTS, HOSTNAME, SECURITY_GROUPS, MOUNTS,
        NETWORKS, TTY,
    ) = (
        "name", "image", "command", "cpu", "memory", "environment", "workdir", "labels",
        "image_pull_policy", "restart_policy", "interactive", "image_driver", "hints",
        "hostname", "security_groups", "mounts", "networks", "tty",
    )  # fmt: skip
    _NETWORK_KEYS = (NETWORK_ID, NETWORK_FIXED_IP, NETWORK_PORT) = ("network", "fixed_ip", "port")
    _MOUNT_KEYS = (VOLUME_ID, MOUNT_PATH, VOLUME_SIZE) = ("volume_id", "mount_path", "volume_size")
    ATTRIBUTES = (NAME_ATTR, ADDRESSES_ATTR) = ("name", "addresses")

    properties_schema = {
        COMMAND: properties.Schema(
            properties.Schema.STRING,
            "Send command to the container.",
        ),
        CPU: properties.Schema(
            properties.Schema.NUMBER,
            "The number of virtual cpus.",
            update_allowed=True,
        ),
        ENVIRONMENT: properties.Schema(
            properties.Schema.MAP,
            "The environment variables.",
        ),
        HINTS: properties.Schema(
            properties.Schema.MAP,
            "Arbitrary key-value pairs for scheduler to select host.",
        ),
        HOSTNAME: properties.Schema(
            properties.Schema.STRING,
            "The hostname of the container.",
        ),
        IMAGE: properties.Schema(
            properties.Schema.STRING,
            "Name or ID of the image.",
            required=True,
        ),
        IMAGE_DRIVER: properties.Schema(
            properties.Schema.STRING,
            "The image driver to use to pull container image.",
            constraints=[constraints.AllowedValues(["docker", "glance"])],
        ),
        IMAGE_PULL_POLICY: properties.Schema(
            properties.Schema.STRING,
            "The policy which determines if the image should be pulled prior to starting the container.",
            constraints=[constraints.AllowedValues(["ifnotpresent", "always", "never"])],
        ),
        INTERACTIVE: properties.Schema(
            properties.Schema.BOOLEAN,
            "Keep STDIN open even if not attached.",
        ),
        LABELS: properties.Schema(
            properties.Schema.MAP,
            "Adds a map of labels to a container. May be used multiple times.",
        ),
        MEMORY: properties.Schema(
            properties.Schema.INTEGER,
            "The container memory size in MiB.",
            update_allowed=True,
        ),
        MOUNTS: properties.Schema(
            properties.Schema.LIST,
            "A list of volumes mounted inside the container.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    MOUNT_PATH: properties.Schema(
                        properties.Schema.STRING,
                        "The filesystem path inside the container.",
                        required=True,
                    ),
                    VOLUME_ID: properties.Schema(
                        properties.Schema.STRING,
                        "The ID or name of the cinder volume mount to the container.",
                        constraints=[constraints.CustomConstraint("cinder.volume")],
                    ),
                    VOLUME_SIZE: properties.Schema(
                        properties.Schema.INTEGER,
                        "The size of the cinder volume to create.",
                    ),
                },
            ),
        ),
        NAME: properties.Schema(
            properties.Schema.STRING,
            "Name of the container.",
            update_allowed=True,
        ),
        NETWORKS: properties.Schema(
            properties.Schema.LIST,
            "An ordered list of nics to be added to this server, with information about connected networks, fixed ips, port etc.",
            update_allowed=True,
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    NETWORK_FIXED_IP: properties.Schema(
                        properties.Schema.STRING,
                        "Fixed IP address to specify for the port created on the requested network.",
                        constraints=[constraints.CustomConstraint("ip_addr")],
                    ),
                    NETWORK_ID: properties.Schema(
                        properties.Schema.STRING,
                        "Name or ID of network to create a port on.",
                        constraints=[constraints.CustomConstraint("neutron.network")],
                    ),
                    NETWORK_PORT: properties.Schema(
                        properties.Schema.STRING,
                        "ID of an existing port to associate with this container.",
                        constraints=[constraints.CustomConstraint("neutron.port")],
                    ),
                },
            ),
        ),
        RESTART_POLICY: properties.Schema(
            properties.Schema.STRING,
            'Restart policy to apply when a container exits. Possible values are "no", "on-failure[:max-retry]", "always", and "unless-stopped".',
        ),
        SECURITY_GROUPS: properties.Schema(
            properties.Schema.LIST,
            "List of security group names or IDs.",
            default=[],
        ),
        TTY: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether the container allocates a TTY for itself.",
        ),
        WORKDIR: properties.Schema(
            properties.Schema.STRING,
            "The working directory for commands to run in.",
        ),
    }

    attributes_schema = {
        ADDRESSES_ATTR: attributes.Schema(
            'A dict of all network addresses with corresponding port_id. Each network will have two keys in dict, they are network name and network id. The port ID may be obtained through the following expression: "{get_attr: [<container>, addresses, <network name_or_id>, 0, port]}".',
            type=attributes.Schema.MAP,
        ),
        NAME_ATTR: attributes.Schema("Name of the container.", type=attributes.Schema.STRING),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        rule = translation.TranslationRule
        return [
            rule(props, rule.RESOLVE, [self.NETWORKS, self.NETWORK_ID],
                 client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="network"),
            rule(props, rule.RESOLVE, [self.NETWORKS, self.NETWORK_PORT],
                 client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="port"),
        ]  # fmt: skip

    def validate(self) -> None:
        super().validate()
        where = f"resources.{self.name}.properties"
        policy = self.properties[self.RESTART_POLICY]
        if policy and not parse_restart_policy(policy):
            raise ValidationError(
                f'restart_policy "{policy}" is invalid. Valid values are "no", '
                '"on-failure[:max-retry]", "always", and "unless-stopped".',
                path=f"{where}.{self.RESTART_POLICY}",
                hint="give one of the valid values",
            )
        for index, mount in enumerate(self.properties[self.MOUNTS] or []):
            path = f"{where}.{self.MOUNTS}[{index}]"
            if mount.get(self.VOLUME_ID) is None and mount.get(self.VOLUME_SIZE) is None:
                raise ValidationError(
                    f'One of the properties "{self.VOLUME_ID}" or "{self.VOLUME_SIZE}" should be set for the '
                    f'specified mount of container "{self.name}".',
                    path=path, hint=f"give {self.VOLUME_ID} (a volume to mount) or {self.VOLUME_SIZE} (a new one)",
                )  # fmt: skip
            if mount.get(self.VOLUME_ID) and mount.get(self.VOLUME_SIZE):
                raise ValidationError(
                    "Cannot define the following properties at the same time: "
                    f"{self.NETWORKS}/{self.VOLUME_ID}, {self.NETWORKS}/{self.VOLUME_SIZE}.",
                    path=path, hint=f"give only one of {self.VOLUME_ID} and {self.VOLUME_SIZE}",
                )  # fmt: skip
        for index, network in enumerate(self.properties[self.NETWORKS] or []):
            path = f"{where}.{self.NETWORKS}[{index}]"
            if network.get(self.NETWORK_ID) is None and network.get(self.NETWORK_PORT) is None:
                raise ValidationError(
                    f"At least one of the following properties must be specified: {self.NETWORK_ID}, {self.NETWORK_PORT}.",
                    path=path, hint=f"give {self.NETWORK_ID} or {self.NETWORK_PORT}",
                )  # fmt: skip
            if network.get(self.NETWORK_FIXED_IP) and network.get(self.NETWORK_PORT) is not None:
                raise ValidationError(
                    "Cannot define the following properties at the same time: "
                    f"{self.NETWORKS}.{self.NETWORK_FIXED_IP}, {self.NETWORKS}.{self.NETWORK_PORT}.",
                    path=path, hint="a port has its addresses: give the fixed IP on the port, or a network",
                )  # fmt: skip

    # -- create ----------------------------------------------------------------------

    def _nets(self, networks: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
        nets = []
        for network in networks:
            entry = {}
            if network.get(self.NETWORK_ID):
                entry[self.NETWORK_ID] = network[self.NETWORK_ID]
            if network.get(self.NETWORK_PORT):
                entry[self.NETWORK_PORT] = network[self.NETWORK_PORT]
            if network.get(self.NETWORK_FIXED_IP):
                entry["v4-fixed-ip"] = network[self.NETWORK_FIXED_IP]
            nets.append(entry)
        return nets

    def handle_create(self) -> str:
        body = {
            key: value for key, value in self.properties.resolved().items() if value is not None
        }
        policy = body.pop(self.RESTART_POLICY, None)
        if policy:
            body[self.RESTART_POLICY] = parse_restart_policy(policy)
        mounts = body.pop(self.MOUNTS, None)
        if mounts:
            body[self.MOUNTS] = [
                {"destination": mount[self.MOUNT_PATH]}
                | ({"source": mount[self.VOLUME_ID]} if mount.get(self.VOLUME_ID) else {})
                | ({"size": mount[self.VOLUME_SIZE]} if mount.get(self.VOLUME_SIZE) else {})
                for mount in mounts
            ]
        networks = body.pop(self.NETWORKS, None)
        if networks:
            body["nets"] = self._nets(networks)
        command = body.pop(self.COMMAND, None)
        if command:
            body[self.COMMAND] = shlex.split(command)
        plugin = self.client_plugin()
        version = plugin.V1_36 if self.TTY in body else plugin.V1_12
        container = plugin.request("POST", "/containers?run=true", body, version)
        self.resource_id_set(container["uuid"])
        return str(container["uuid"])

    def check_create_complete(self, token: Any) -> bool:
        container = self.client_plugin().get_container(token)
        status, reason = container.get("status"), container.get("status_reason")
        if status in ("Creating", "Created"):
            return False
        if status == "Running":
            return True
        if status == "Stopped":
            if container.get("interactive"):
                raise ResourceFailure(
                    f"Went to status Stopped due to \"Error in creating container '{self.name}' - interactive "
                    'mode was enabled but the container has stopped running"'
                )
            return True
        if status == "Error":
            raise ResourceFailure(
                f"Went to status Error due to \"Error in creating container '{self.name}' - {reason}\""
            )
        raise ResourceFailure(
            f"Went to status {status} due to \"Unknown status Container '{self.name}' - {reason}\""
        )

    # -- update ----------------------------------------------------------------------

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """Name, CPU and memory changed now; network changes as steps (the token): the
        interfaces of NICs gone from the template detached, new NICs attached."""
        changes = dict(prop_diff)
        steps: list[dict[str, Any]] = []
        if self.NETWORKS in changes:
            new = [dict(item) for item in changes.pop(self.NETWORKS) or []]
            old = [dict(item) for item in self.properties[self.NETWORKS] or []]
            interfaces = self.client_plugin().network_list(self.resource_id)
            for network in old:
                if network in new:
                    new.remove(network)
                    continue
                for interface in interfaces:
                    if network.get(self.NETWORK_PORT) in (None, interface.get("port_id")) and (
                        network.get(self.NETWORK_ID) in (None, interface.get("net_id"))
                    ):
                        steps.append({"detach": interface["port_id"]})
                        interfaces.remove(interface)
                        break
            for network in new:
                arguments = {
                    key: network[name]
                    for key, name in (
                        ("network", self.NETWORK_ID),
                        ("port", self.NETWORK_PORT),
                        ("fixed_ip", self.NETWORK_FIXED_IP),
                    )
                    if network.get(name)
                }
                steps.append({"attach": arguments})
        self.client_plugin().update_container(self.resource_id, **changes)
        return steps

    def check_update_complete(self, steps: Any) -> bool:
        """One step per poll, in order; each is checked done before the next."""
        plugin = self.client_plugin()
        for step in steps or []:
            if step.get("done"):
                continue
            if not step.get("sent"):
                if "detach" in step:
                    plugin.network_detach(self.resource_id, step["detach"])
                else:
                    plugin.network_attach(self.resource_id, **step["attach"])
                step["sent"] = True
                return False
            ports = {
                interface.get("port_id") for interface in plugin.network_list(self.resource_id)
            }
            port = step.get("detach") or step["attach"].get("port")
            if "detach" in step and port in ports:
                return False
            if "attach" in step and port is not None and port not in ports:
                return False
            step["done"] = True
            return False
        return True

    # -- delete ----------------------------------------------------------------------

    def handle_delete(self) -> str | None:
        if self.resource_id is None:
            return None
        try:
            self.client_plugin().request("DELETE", f"/containers/{self.resource_id}?stop=True")
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return None
        return self.resource_id

    def check_delete_complete(self, token: Any) -> bool:
        if not token:
            return True
        try:
            self.client_plugin().get_container(token)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return True
        return False

    # -- attributes ------------------------------------------------------------------

    def _show_resource(self) -> dict[str, Any] | None:
        return (
            None
            if self.resource_id is None
            else self.client_plugin().get_container(self.resource_id)
        )

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        try:
            container = self.client_plugin().get_container(self.resource_id)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return ""
        if name == self.ADDRESSES_ATTR:
            return self._addresses(container.get("addresses") or {})
        return container.get(name, "")

    def _addresses(self, addresses: Mapping[str, Any]) -> dict[str, Any]:
        """Zun's addresses (by network id), each also under its network's name (as Heat)."""
        names = {
            network.id: network.name
            for network in self.client_plugin("neutron").client().networks()
        }
        extended = copy.deepcopy(dict(addresses))
        for network_id, listed in addresses.items():
            name = names.get(network_id)
            if name:
                extended.setdefault(name, [])
                extended[name] += listed
        return extended


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Zun::Container": ZunContainer}
