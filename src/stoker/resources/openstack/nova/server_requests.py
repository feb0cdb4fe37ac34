"""OS::Nova::Server's pure rules: checking property values and turning them into Nova and
Neutron request bodies, with Heat's messages.

Owns: block device mappings (v1 and v2), metadata serialisation, user data (RAW, and the
cloud-init MIME bundle of HEAT_CFNTOOLS and SOFTWARE_CONFIG), the ``networks`` entry rules,
the Nova ``networks`` request entries, port extra properties, and the plan of an in-place
``networks`` update (which interfaces to detach, which entries to attach).

Must not: call a cloud. Where a rule needs an answer from one (a subnet's network), the
caller passes a function.

User data, as far as it is cloud-side: RAW goes to Nova unchanged. HEAT_CFNTOOLS and
SOFTWARE_CONFIG become a multipart MIME message for cloud-init, as Heat builds it: a part
handler (stoker's own) writes each ``text/x-cfninitdata`` part to /var/lib/heat-cfntools and
/var/lib/cloud/data, the resource's metadata goes in ``cfn-init-data``, HEAT_CFNTOOLS adds the
user data as ``cfn-userdata`` with a script that runs it, and SOFTWARE_CONFIG adds the user
data (each part of it, when it is multipart itself) or injects the metadata into a CoreOS
Ignition document. Not done, since stoker has no CFN API, no Heat API credentials for
servers and no software-config store: the ``cfn-metadata-server`` and boto parts, the
transport credentials and ``deployments`` metadata of SOFTWARE_CONFIG, and loading user data
given as a software config id.
"""

from __future__ import annotations

import base64
import copy
import email
import ipaddress
import json
from collections.abc import Callable, Mapping, Sequence
from email.message import Message
from email.mime import multipart, text
from typing import Any, cast
from urllib import parse

from stoker.resources.openstack.neutron.port import Port
from stoker.resources.openstack.nova import server_schema as s
from stoker.sdk.exceptions import ValidationError

__all__ = [
    "NetworkPlan",
    "block_devices_v2",
    "build_user_data",
    "legacy_block_devices",
    "plan_network_update",
    "serialize_metadata",
    "validate_block_devices",
    "validate_networks",
]


def conflict(*names: str, path: str | None = None) -> ValidationError:
    """Heat's ResourcePropertyConflict."""
    return ValidationError(f"Cannot define the following properties at the same time: {', '.join(names)}.", path=path)


# -- metadata, user data, personality ------------------------------------------------------


def serialize_metadata(metadata: Mapping[str, Any] | None) -> dict[str, str]:
    """Nova's metadata values are strings: anything else is sent as JSON (Heat's meta_serialize)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise ValidationError("nova server metadata needs to be a Map.")
    return {str(key): value if isinstance(value, str) else json.dumps(value) for key, value in metadata.items()}


def encode_user_data(user_data: str | None) -> str | None:
    """Nova takes user data base64-encoded; none (or empty) is not sent."""
    if not user_data:
        return None
    return base64.b64encode(user_data.encode("utf-8")).decode("ascii")


def personality_request(files: Mapping[str, Any] | None) -> list[dict[str, str]] | None:
    if not files:
        return None
    return [
        {"path": path, "contents": base64.b64encode((contents or "").encode("utf-8")).decode("ascii")}
        for path, contents in files.items()
    ]


# cloud-init runs this for every text/x-cfninitdata part (written for stoker; it does what
# Heat's part handler does with those parts).
_PART_HANDLER = '''#part-handler
import os

DIRECTORIES = ("/var/lib/heat-cfntools", "/var/lib/cloud/data")


def list_types():
    return ["text/x-cfninitdata"]


def handle_part(data, ctype, filename, payload):
    if ctype in ("__begin__", "__end__"):
        return
    for directory in DIRECTORIES:
        if not os.path.isdir(directory):
            os.makedirs(directory)
        with open(os.path.join(directory, filename), "w") as written:
            written.write(payload)
'''

_RUN_CFN_USERDATA = """#!/bin/sh
# Written by stoker: run the template's user_data (the cfn-userdata part), logging its output.
chmod 700 /var/lib/heat-cfntools/cfn-userdata
/var/lib/heat-cfntools/cfn-userdata > /var/log/heat-provision.log 2>&1
echo $? > /var/lib/heat-cfntools/provision-finished
"""


def is_ignition(user_data: str | None) -> bool:
    try:
        payload = json.loads(user_data or "")
    except ValueError:
        return False
    ignition = payload.get("ignition") if isinstance(payload, dict) else None
    return bool(isinstance(ignition, dict) and ignition.get("version"))


def _ignition_with_metadata(metadata: Mapping[str, Any], user_data: str) -> str:
    payload = json.loads(user_data)
    source = "data:," + parse.quote(json.dumps(metadata))
    storage = payload.setdefault("storage", {})
    if not isinstance(storage, dict):
        raise ValidationError('Ignition "storage" section must be a map')
    files = storage.setdefault("files", [])
    if not isinstance(files, list):
        raise ValidationError('Ignition "files" section must be a list')
    for path in ("/var/lib/heat-cfntools/cfn-init-data", "/var/lib/cloud/data/cfn-init-data"):
        files.append(
            {
                "filesystem": "root",
                "group": {"name": "root"},
                "path": path,
                "user": {"name": "root"},
                "contents": {"source": source, "verification": {}},
                "mode": 0o640,
            }
        )
    return json.dumps(payload)


def _part(content: str | None, filename: str, subtype: str) -> text.MIMEText:
    content = content or ""
    try:
        content.encode("us-ascii")
        charset = "us-ascii"
    except UnicodeEncodeError:
        charset = "utf-8"
    message = text.MIMEText(content, _subtype=subtype, _charset=charset)
    message.add_header("Content-Disposition", "attachment", filename=filename)
    return message


def build_user_data(user_data: str | None, user_data_format: str, metadata: Mapping[str, Any] | None) -> str | None:
    """The user data Nova gets (before base64), per ``user_data_format`` (see the module
    docstring for what is and is not done for HEAT_CFNTOOLS and SOFTWARE_CONFIG)."""
    if user_data_format == s.RAW:
        return user_data or None
    if user_data_format == s.SOFTWARE_CONFIG and is_ignition(user_data):
        return _ignition_with_metadata(metadata, user_data or "") if metadata else user_data
    parts: list[Message] = [_part(_PART_HANDLER, "part-handler.py", "part-handler")]
    if user_data_format == s.HEAT_CFNTOOLS:
        parts.append(_part(user_data, "cfn-userdata", "x-cfninitdata"))
        parts.append(_part(_RUN_CFN_USERDATA, "run-cfn-userdata.sh", "x-shellscript"))
    else:
        given = email.message_from_string(user_data or "")
        if user_data and given.is_multipart():
            # A multipart message's payload is the list of its parts (compat32 Messages).
            for piece in cast("list[Message]", given.get_payload()):
                # A part that is multipart itself goes in whole (Heat's make_subpart fails on
                # its payload, a list of parts); cloud-init walks nested multiparts.
                if piece.is_multipart():
                    parts.append(piece)
                else:
                    parts.append(_part(cast("str", piece.get_payload()), piece.get_filename() or "", piece.get_content_subtype()))
        else:
            parts.append(_part(user_data, "", "plain"))
    if metadata:
        parts.append(_part(json.dumps(metadata), "cfn-init-data", "x-cfninitdata"))
    return multipart.MIMEMultipart(_subparts=parts).as_string()


# -- block devices ---------------------------------------------------------------------------


def legacy_block_devices(mappings: Sequence[Mapping[str, Any]] | None, image: str | None) -> list[dict[str, Any]]:
    """block_device_mapping (v1) in Nova's v2 form, as Nova converts legacy mappings: with
    an image, every volume is a data disk; without one, the ``vda`` mapping (else the first)
    is the boot disk."""
    if not mappings:
        return []
    boot_device = None
    if not image:
        names = [mapping.get(s.BDM_DEVICE_NAME) for mapping in mappings]
        boot_device = "vda" if "vda" in names else names[0]
    devices = []
    for mapping in mappings:
        snapshot_id = mapping.get(s.BDM_SNAPSHOT_ID)
        device: dict[str, Any] = {
            "uuid": snapshot_id or mapping.get(s.BDM_VOLUME_ID),
            "source_type": "snapshot" if snapshot_id else "volume",
            "destination_type": "volume",
            "device_name": mapping.get(s.BDM_DEVICE_NAME),
            "boot_index": 0 if mapping.get(s.BDM_DEVICE_NAME) == boot_device else -1,
            "delete_on_termination": bool(mapping.get(s.BDM_DELETE_ON_TERM)),
        }
        if mapping.get(s.BDM_VOLUME_SIZE):
            device["volume_size"] = mapping[s.BDM_VOLUME_SIZE]
        devices.append(device)
    return devices


def booting_image(devices: list[dict[str, Any]], image: str | None) -> list[dict[str, Any]]:
    """``devices`` with the image as the boot disk (index 0) first when the server has an
    image and none of them boots: Nova refuses a mapping without a boot index 0 ("Boot
    sequence ... is not valid"), and adds this entry itself only for a legacy mapping."""
    if not image or not devices or any(device.get("boot_index") == 0 for device in devices):
        return devices
    boot = {"uuid": image, "source_type": "image", "destination_type": "local", "boot_index": 0, "delete_on_termination": True}
    return [boot, *devices]


_BDM_V2_PASSED_ON = (s.BDM_DEVICE_TYPE, s.BDM_DISK_BUS, s.BDM_BOOT_INDEX, s.BDM_VOLUME_SIZE, s.BDM_DELETE_ON_TERM, s.BDM_VOLUME_TYPE)


def block_devices_v2(mappings: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """block_device_mapping_v2 as Nova's request entries (Heat's defaults: a volume,
    snapshot or image source boots at index 0 and is kept; swap and ephemeral disks are
    local, not bootable, deleted with the server)."""
    devices = []
    for mapping in mappings or []:
        device: dict[str, Any] | None = None
        for key, source in ((s.BDM_VOLUME_ID, "volume"), (s.BDM_SNAPSHOT_ID, "snapshot"), (s.BDM_IMAGE, "image")):
            if mapping.get(key):
                device = {"uuid": mapping[key], "source_type": source, "destination_type": "volume", "boot_index": 0, "delete_on_termination": False}
                break
        if device is None and mapping.get(s.BDM_SWAP_SIZE):
            device = {
                "source_type": "blank", "destination_type": "local", "boot_index": -1,
                "delete_on_termination": True, "guest_format": "swap", "volume_size": mapping[s.BDM_SWAP_SIZE],
            }
        elif device is None and (mapping.get(s.BDM_EPHEMERAL_SIZE) or mapping.get(s.BDM_EPHEMERAL_FORMAT)):
            device = {"source_type": "blank", "destination_type": "local", "boot_index": -1, "delete_on_termination": True}
            if mapping.get(s.BDM_EPHEMERAL_SIZE):
                device["volume_size"] = mapping[s.BDM_EPHEMERAL_SIZE]
            if mapping.get(s.BDM_EPHEMERAL_FORMAT):
                device["guest_format"] = mapping[s.BDM_EPHEMERAL_FORMAT]
        if device is None:
            continue
        if mapping.get(s.BDM_DEVICE_NAME):
            device["device_name"] = mapping[s.BDM_DEVICE_NAME]
        for key in _BDM_V2_PASSED_ON:
            if mapping.get(key) is not None:
                device[key] = mapping[key]
        devices.append(device)
    return devices


def validate_block_devices(server: str, image: Any, bdm: Sequence[Mapping[str, Any]] | None, bdm_v2: Sequence[Mapping[str, Any]] | None, path: str | None = None) -> None:
    """Heat's rules: one of the two mapping properties; a source per mapping; something
    to boot from, and with v2 exactly one bootable source."""
    bdm, bdm_v2 = list(bdm or []), list(bdm_v2 or [])
    if bdm and bdm_v2:
        raise conflict(s.BLOCK_DEVICE_MAPPING, s.BLOCK_DEVICE_MAPPING_V2, path=path)
    bootable = bool(image)
    for mapping in bdm:
        device_name = mapping.get(s.BDM_DEVICE_NAME)
        if device_name == "vda":
            bootable = True
        volume_id, snapshot_id = mapping.get(s.BDM_VOLUME_ID), mapping.get(s.BDM_SNAPSHOT_ID)
        if volume_id is not None and snapshot_id is not None:
            raise conflict(s.BDM_VOLUME_ID, s.BDM_SNAPSHOT_ID, path=path)
        if volume_id is None and snapshot_id is None:
            raise ValidationError(f"Either volume_id or snapshot_id must be specified for device mapping {device_name}", path=path)
    bootable_sources = [image] if image else []
    for mapping in bdm_v2:
        volume_id, snapshot_id, image_id = (mapping.get(s.BDM_VOLUME_ID), mapping.get(s.BDM_SNAPSHOT_ID), mapping.get(s.BDM_IMAGE))
        ephemeral = mapping.get(s.BDM_EPHEMERAL_SIZE) or mapping.get(s.BDM_EPHEMERAL_FORMAT)
        sources = (volume_id, snapshot_id, image_id, mapping.get(s.BDM_SWAP_SIZE), ephemeral)
        given = len(sources) - sources.count(None)
        if given > 1:
            raise conflict(s.BDM_VOLUME_ID, s.BDM_SNAPSHOT_ID, s.BDM_IMAGE, s.BDM_SWAP_SIZE, s.BDM_EPHEMERAL_SIZE, s.BDM_EPHEMERAL_FORMAT, path=path)
        if given == 0:
            raise ValidationError(
                "Either volume_id, snapshot_id, image_id, swap_size, ephemeral_size or ephemeral_format must be specified.",
                path=path,
            )
        boot_index = mapping.get(s.BDM_BOOT_INDEX)
        if any(source is not None for source in (volume_id, snapshot_id, image_id)) and boot_index in (None, 0):
            bootable = True
            bootable_sources.extend(source for source in (volume_id, snapshot_id, image_id) if source is not None)
    if not bootable:
        raise ValidationError(f"Neither image nor bootable volume is specified for instance {server}", path=path)
    if bdm_v2 and len(bootable_sources) != 1:
        raise ValidationError(f"Multiple bootable sources for instance {server}.", path=path)


# -- networks --------------------------------------------------------------------------------


def str_network(networks: Sequence[Mapping[str, Any]] | None) -> str | None:
    """The ``allocate_network`` value ("auto" or "none") of the entries, if one gives it."""
    for network in networks or []:
        if network.get(s.ALLOCATE_NETWORK):
            return str(network[s.ALLOCATE_NETWORK])
    return None


def is_nic_tagged(networks: Sequence[Mapping[str, Any]] | None) -> bool:
    return any(network.get(s.NIC_TAG) for network in networks or [])


def validate_network(server: str, network: Mapping[str, Any], path: str | None = None) -> None:
    """One ``networks`` entry (Heat's ServerNetworkMixin._validate_network)."""
    net_id, port, subnet = network.get(s.NETWORK_ID), network.get(s.NETWORK_PORT), network.get(s.NETWORK_SUBNET)
    allocate = network.get(s.ALLOCATE_NETWORK)
    if net_id is None and port is None and subnet is None and not allocate:
        raise ValidationError(
            f'One of the properties "{s.NETWORK_ID}", "{s.NETWORK_PORT}", "{s.ALLOCATE_NETWORK}" or '
            f'"{s.NETWORK_SUBNET}" should be set for the specified network of server "{server}".',
            path=path,
        )
    given = [key for key, value in network.items() if value is not None]
    if allocate and len(given) != 1:
        raise ValidationError(f'Can not specify "{s.ALLOCATE_NETWORK}" with other keys of networks at the same time.', path=path)
    if network.get(s.NETWORK_FIXED_IP) and port is not None:
        raise conflict(f"{s.NETWORKS}/{s.NETWORK_FIXED_IP}", f"{s.NETWORKS}/{s.NETWORK_PORT}", path=path)
    if network.get(s.NETWORK_FLOATING_IP) is not None and net_id is not None and port is None and subnet is None and not network.get(s.NETWORK_PORT_EXTRA):
        raise ValidationError(
            f'Property "{s.NETWORK_FLOATING_IP}" is not supported if only "{s.NETWORK_ID}" is specified, '
            "because the corresponding port can not be retrieved.",
            path=path,
        )


def validate_networks(server: str, networks: Sequence[Mapping[str, Any]] | None, security_groups: Sequence[str] | None, path: str | None = None) -> None:
    """Every entry, then the rules across them: "allocate_network" alone; no
    ``security_groups`` with a given port (a port keeps its own groups)."""
    networks = list(networks or [])
    for index, network in enumerate(networks):
        validate_network(server, network, f"{path}.{s.NETWORKS}[{index}]" if path else None)
    if str_network(networks) is not None and len(networks) != 1:
        raise ValidationError(
            f'Property "{s.ALLOCATE_NETWORK}" can not be specified if multiple network interfaces set for server.', path=path
        )
    if any(network.get(s.NETWORK_PORT) is not None for network in networks) and security_groups:
        raise conflict(s.SECURITY_GROUPS, f"{s.NETWORKS}/{s.NETWORK_PORT}", path=path)


def nic_request(network_id: str | None, port_id: str | None, fixed_ip: str | None, tag: str | None) -> dict[str, Any]:
    """One entry of Nova's ``networks``: a port, or a network with an optional fixed IP."""
    nic: dict[str, Any] = {}
    if port_id:
        nic["port"] = port_id
    elif network_id:
        nic["uuid"] = network_id
    if not port_id and fixed_ip:
        nic["fixed_ip"] = fixed_ip
    if tag:
        nic["tag"] = tag
    return nic


def port_extra_request(extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """Neutron port fields from ``port_extra_properties`` (value_specs merged in; the QoS
    policy given by name or id is left under ``qos_policy`` for the caller to resolve)."""
    if extra is None:
        return {}
    extra = copy.deepcopy(dict(extra))
    body: dict[str, Any] = dict(extra.pop(Port.VALUE_SPECS, None) or {})
    for key in s.PORT_EXTRA_KEYS:
        if key in (Port.VALUE_SPECS, Port.ALLOWED_ADDRESS_PAIRS, Port.NO_FIXED_IPS):
            continue
        if extra.get(key) is not None:
            body[key] = extra[key]
    pairs = extra.get(Port.ALLOWED_ADDRESS_PAIRS)
    if pairs is not None:
        body[Port.ALLOWED_ADDRESS_PAIRS] = [{key: value for key, value in pair.items() if value is not None} for pair in pairs]
    return body


def internal_port_request(network_id: str | None, network: Mapping[str, Any], security_group_ids: Sequence[str] | None) -> dict[str, Any]:
    """The Neutron port a ``networks`` entry with a subnet or port_extra_properties gets."""
    body: dict[str, Any] = {"network_id": network_id}
    fixed: dict[str, Any] = {}
    if network.get(s.NETWORK_FIXED_IP):
        fixed["ip_address"] = network[s.NETWORK_FIXED_IP]
    if network.get(s.NETWORK_SUBNET):
        fixed["subnet_id"] = network[s.NETWORK_SUBNET]
    if fixed:
        body["fixed_ips"] = [fixed]
    extra = network.get(s.NETWORK_PORT_EXTRA) or {}
    if extra.get(Port.NO_FIXED_IPS):
        body["fixed_ips"] = []
    if security_group_ids:
        body["security_groups"] = list(security_group_ids)
    body.update(port_extra_request(network.get(s.NETWORK_PORT_EXTRA)))
    return body


def ip_version(address: str | None) -> int | None:
    try:
        return ipaddress.ip_address(address or "").version
    except ValueError:
        return None


# -- updating networks in place ---------------------------------------------------------------


class NetworkPlan:
    """What an in-place ``networks`` update does: ports to detach (``internal`` ones the
    server made are deleted as well), floating IPs to disassociate, ports the server made
    whose extra properties change in place, and entries to attach (``{}`` means "any
    network", as Nova picks on create; ``{"allocate_network": "auto"}`` asks for the
    project's network)."""

    def __init__(self) -> None:
        self.detach: list[str] = []
        self.delete_internal: list[str] = []
        self.disassociate: list[str] = []
        self.update_ports: list[tuple[str, dict[str, Any]]] = []
        self.attach: list[dict[str, Any]] = []


def _is_subset(subset: Mapping[str, Any], superset: Mapping[str, Any]) -> bool:
    return all(key in superset and superset[key] == value for key, value in subset.items())


def _matching_items(specified: Mapping[str, Any], interface: Mapping[str, Any]) -> int:
    return sum(1 for key, value in specified.items() if key in interface and interface[key] == value)


def _best_match(candidates: list[dict[str, Any]], specified: Mapping[str, Any]) -> dict[str, Any] | None:
    for key in (s.NETWORK_PORT, s.NETWORK_FIXED_IP):
        if specified.get(key) is not None:
            return next((c for c in candidates if c.get(key) == specified[key] and _is_subset(specified, c)), None)
    best, most = None, 0
    for candidate in candidates:
        if _is_subset(specified, candidate):
            count = _matching_items(specified, candidate)
            if count > most:
                best, most = candidate, count
    return best


def _extras_update_in_place(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """Whether only port extra properties Neutron updates in place changed."""
    if new is None:
        return False
    old = old or {}
    for key in set(old) | set(new):
        if old.get(key) != new.get(key):
            schema = s.PORT_EXTRA_SCHEMA.get(key)
            if schema is None or not schema.update_allowed:
                return False
    return True


def plan_network_update(
    old_networks: Sequence[Mapping[str, Any]] | None,
    new_networks: Sequence[Mapping[str, Any]] | None,
    interfaces: Sequence[Mapping[str, Any]],
    internal_ports: Sequence[str],
    network_of_subnet: Callable[[str], str | None],
) -> NetworkPlan:
    """Heat's calculate_networks: entries that still match an interface stay, the other
    old ones are detached, the other new ones attached. ``interfaces`` are the server's, as
    ``{port, network, fixed_ip, subnet}``; ``internal_ports`` the ports the server made."""
    plan = NetworkPlan()
    old = [dict(network) for network in old_networks or []]
    new = [dict(network) for network in new_networks or []]
    interface_ports = [str(interface[s.NETWORK_PORT]) for interface in interfaces]
    new_str = str_network(new)
    if new_str is not None:
        plan.detach = interface_ports
        plan.delete_internal = [port for port in interface_ports if port in internal_ports]
        if new_str == s.NETWORK_AUTO:
            plan.attach.append({s.ALLOCATE_NETWORK: s.NETWORK_AUTO})
        return plan
    if not new and not old:
        return plan
    kept: list[dict[str, Any]] = []
    if not old or str_network(old) is not None:
        plan.detach = interface_ports
        plan.delete_internal = [port for port in interface_ports if port in internal_ports]
    else:
        kept = _keep_matching(old, new, interfaces, internal_ports, network_of_subnet, plan)
        for network in old:
            port = network.get(s.NETWORK_PORT)
            if port:
                plan.detach.append(port)
                if port in internal_ports:
                    plan.delete_internal.append(port)
            if network.get(s.NETWORK_FLOATING_IP):
                plan.disassociate.append(network[s.NETWORK_FLOATING_IP])
    if not new and not kept:
        plan.attach.append({})
    else:
        plan.attach.extend(new)
    return plan


def _keep_matching(
    old: list[dict[str, Any]],
    new: list[dict[str, Any]],
    interfaces: Sequence[Mapping[str, Any]],
    internal_ports: Sequence[str],
    network_of_subnet: Callable[[str], str | None],
    plan: NetworkPlan,
) -> list[dict[str, Any]]:
    """Remove from ``old`` and ``new`` the entries that need no change (filling the old
    ones from the interfaces they match first) and return them."""
    remaining = [dict(interface) for interface in interfaces]
    for network in old:
        if network.get(s.NETWORK_PORT) is None and not network.get(s.NETWORK_ID) and network.get(s.NETWORK_SUBNET):
            network[s.NETWORK_ID] = network_of_subnet(network[s.NETWORK_SUBNET])
        reduced = {k: v for k, v in network.items() if k in s.IFACE_MANAGED_KEYS and v is not None}
        match = _best_match(remaining, reduced)
        if match is not None:
            network.update(match)
            remaining.remove(match)
    for key in s.NETWORK_KEYS:
        for network in (*new, *old):
            network[key] = network.get(key) or None
    kept = []
    for network in list(new):
        reduced = {k: v for k, v in network.items() if k not in s.IFACE_MANAGED_KEYS or v is not None}
        match = _best_match(old, reduced)
        if match is not None:
            kept.append(match)
            new.remove(network)
            old.remove(match)
            continue
        without_extras = {k: v for k, v in reduced.items() if k != s.NETWORK_PORT_EXTRA}
        match = _best_match(old, without_extras)
        port = match.get(s.NETWORK_PORT) if match is not None else None
        if match is None or not port or port not in internal_ports:
            continue
        if _extras_update_in_place(match.get(s.NETWORK_PORT_EXTRA), network.get(s.NETWORK_PORT_EXTRA)):
            plan.update_ports.append((port, port_extra_request(network.get(s.NETWORK_PORT_EXTRA))))
            kept.append(match)
            new.remove(network)
            old.remove(match)
    return kept
