"""OS::Nova::Server's live state (Heat's ``parse_live_resource_data`` of its Server):
name, flavor, image, metadata, tags, security groups, networks (its interfaces), block
devices (the volumes attached) and user data (where Nova shows it: to an administrator,
microversion 2.3 on), read from the live server and written in the vocabulary the stack
holds them in, so that an untouched server shows no drift (docs/drift.md).

Owns the reading only: the server plugin calls it; nothing here changes the server.
"""

from __future__ import annotations

import base64
import binascii
import email
from collections.abc import Mapping, Sequence
from typing import Any

from stoker.resources.openstack.nova import server_requests as requests
from stoker.resources.openstack.nova import server_schema as s
from stoker.resources.openstack.nova.server_networks import EXTERNAL_PORTS, INTERNAL_PORTS
from stoker.resources.openstack.nova.server_requests import serialize_metadata
from stoker.sdk.exceptions import EntityNotFound

__all__ = ["live_server", "parse"]

_USER_DATA = "OS-EXT-SRV-ATTR:user_data"  # Nova's field (administrators, 2.3 on)


def live_server(resource: Any) -> dict[str, Any] | None:
    """The live server as Nova's body (None before it has an id); ``EntityNotFound``
    when Nova no longer has it. Tags are read where the microversion has them."""
    if resource.resource_id is None:
        return None
    compute = resource.client()
    try:
        server = compute.get_server(resource.resource_id)
    except Exception as error:  # noqa: BLE001 - openstacksdk's types, classified here
        if resource.client_plugin().is_not_found(error):
            raise EntityNotFound("Resource", resource.name) from error
        raise
    body = server.to_dict(original_names=True, headers=False, computed=False)
    body.pop("location", None)
    # ``to_dict`` gives every field, None where Nova did not answer it: user data Nova
    # does not show (to a project member) is not an empty one.
    shown = getattr(getattr(server, "_body", None), "attributes", {})
    if _USER_DATA not in shown:
        body.pop(_USER_DATA, None)
    return body


def _same_id(resolve: Any, given: Any, live_id: str) -> bool:
    try:
        return given is not None and resolve(str(given)) == live_id
    except Exception:  # noqa: BLE001 - a value that no longer resolves is not the live one
        return False


def parse(
    resource: Any, resource_properties: Mapping[str, Any], data: Mapping[str, Any]
) -> dict[str, Any]:
    """Property -> live value. A flavor or image the stack names (or holds by id) is
    shown as the stack holds it when it is the one the server has; otherwise the live
    name (a flavor, from microversion 2.47 on) or id. Metadata is compared as Nova keeps
    it (strings; other values as JSON, as they were sent)."""
    result: dict[str, Any] = {}
    flavor = data.get("flavor") or {}
    # From microversion 2.47 Nova shows the flavor's name only (``original_name``), and
    # openstacksdk then gives that name as the flavor's ``id`` too: resolve it either way.
    live_flavor = str(flavor.get("original_name") or flavor.get("id") or "")
    given_flavor = resource_properties.get(s.FLAVOR)
    nova = resource.client_plugin("nova")
    if live_flavor:
        live_flavor_id = _resolved(nova.find_flavor_by_name_or_id, live_flavor)
        same = _same_id(nova.find_flavor_by_name_or_id, given_flavor, live_flavor_id)
        result[s.FLAVOR] = given_flavor if same else live_flavor
    image = data.get("image") or {}
    given_image = resource_properties.get(s.IMAGE)
    if isinstance(image, Mapping) and image.get("id") and given_image is not None:
        live_image = str(image["id"])
        glance = resource.client_plugin("glance")
        result[s.IMAGE] = (
            given_image
            if _same_id(glance.find_image_by_name_or_id, given_image, live_image)
            else live_image
        )
    if resource_properties.get(s.NAME) is not None:
        result[s.NAME] = data.get("name")
    given_metadata = resource_properties.get(s.METADATA)
    live_metadata = dict(data.get("metadata") or {})
    if given_metadata is not None and serialize_metadata(given_metadata) == live_metadata:
        result[s.METADATA] = given_metadata
    else:
        result[s.METADATA] = live_metadata
    if data.get("tags") is not None:
        result[s.TAGS] = list(data["tags"])
    groups = data.get("security_groups")
    if groups is not None:
        # Nova lists a group once per port that has it: each group once, by name.
        names: list[str] = []
        for group in groups:
            name = group.get("name") if isinstance(group, Mapping) else str(group)
            if name and name not in names:
                names.append(name)
        result[s.SECURITY_GROUPS] = names
    networks = resource_properties.get(s.NETWORKS)
    if networks and requests.str_network(networks) is None and data.get("id"):
        result[s.NETWORKS] = live_networks(resource, networks, resource.networks_helper().interfaces(str(data["id"])))
    attached = {str(volume.get("id")) for volume in data.get("os-extended-volumes:volumes_attached") or [] if isinstance(volume, Mapping)}
    for key in (s.BLOCK_DEVICE_MAPPING, s.BLOCK_DEVICE_MAPPING_V2):
        if resource_properties.get(key):
            result[key] = attached_devices(resource_properties[key], attached)
    user_data = live_user_data(resource, resource_properties, data)
    if user_data is not None:
        result[s.USER_DATA] = user_data
    return result


def live_networks(resource: Any, given: Sequence[Mapping[str, Any]], interfaces: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The ``networks`` entries the server's interfaces answer for: each given entry an
    interface matches (by its port; else by its network, and its fixed IP and subnet when
    given), as given, in the given order; then an entry for each interface no entry
    matches (attached since, out of band: ``{network, port, fixed_ip}``). An entry whose
    interface is gone is left out. Interfaces made for the server (its recorded ports) are
    matched first, so an interface attached out of band is the one reported."""
    helper = resource.networks_helper()
    known = {port["id"] for kind in (INTERNAL_PORTS, EXTERNAL_PORTS) for port in helper.ports(kind)}
    remaining = sorted(interfaces, key=lambda interface: str(interface.get(s.NETWORK_PORT)) not in known)
    found: list[dict[str, Any]] = []
    for entry in given:
        match = next((interface for interface in remaining if _answers(helper, entry, interface)), None)
        if match is not None:
            remaining.remove(match)
            found.append(dict(entry))
    for interface in remaining:
        extra: dict[str, Any] = dict.fromkeys(s.NETWORK_KEYS)
        extra.update({key: interface.get(key) for key in (s.NETWORK_ID, s.NETWORK_PORT, s.NETWORK_FIXED_IP)})
        found.append(extra)
    return found


def _answers(helper: Any, entry: Mapping[str, Any], interface: Mapping[str, Any]) -> bool:
    """Whether ``interface`` is the one the ``networks`` entry made or names."""
    if entry.get(s.NETWORK_PORT):
        return str(entry[s.NETWORK_PORT]) == str(interface.get(s.NETWORK_PORT))
    try:
        network = helper.network_id(entry)
        if network is not None and network != interface.get(s.NETWORK_ID):
            network = helper.neutron_plugin.find_resourceid_by_name_or_id("network", network)
    except Exception:  # noqa: BLE001 - a network gone since matches no interface
        return False
    if network != interface.get(s.NETWORK_ID):
        return False
    if entry.get(s.NETWORK_FIXED_IP) and entry[s.NETWORK_FIXED_IP] != interface.get(s.NETWORK_FIXED_IP):
        return False
    return not entry.get(s.NETWORK_SUBNET) or entry[s.NETWORK_SUBNET] == interface.get(s.NETWORK_SUBNET)


def attached_devices(given: Sequence[Mapping[str, Any]], attached: set[str]) -> list[dict[str, Any]]:
    """The block device entries still in place: those that name a volume the server
    has attached, and those that name none (an image, a snapshot or swap Nova made a
    disk of, which it shows no volume id for). A named volume detached since is left
    out. Volumes attached otherwise (an OS::Cinder::VolumeAttachment) are not this
    property's."""
    return [dict(entry) for entry in given if not entry.get(s.BDM_VOLUME_ID) or str(entry[s.BDM_VOLUME_ID]) in attached]


def live_user_data(resource: Any, properties: Mapping[str, Any], data: Mapping[str, Any]) -> Any:
    """The ``user_data`` the server holds, as the stack holds it when it is what stoker
    sent for it; None when it cannot be told: Nova shows it to administrators only
    (from microversion 2.3), an Ignition config carries the metadata, and with
    ``user_data_update_policy: IGNORE`` a change is not the stack's to see. The parts
    stoker adds in the multipart formats (the part handler, its runner, the metadata)
    are left out of the comparison."""
    encoded = data.get(_USER_DATA)
    if _USER_DATA not in data or properties.get(s.USER_DATA_UPDATE_POLICY) == "IGNORE":
        return None
    given = properties.get(s.USER_DATA)
    form = properties.get(s.USER_DATA_FORMAT) or s.HEAT_CFNTOOLS
    content = resource._user_data_content(properties) if given else given
    if form == s.SOFTWARE_CONFIG and requests.is_ignition(content):
        return None
    try:
        live = base64.b64decode(encoded).decode("utf-8") if encoded else None
    except (binascii.Error, ValueError):
        return encoded
    sent = requests.build_user_data(content, form, None)
    if _parts(live, form) == _parts(sent, form):
        return given
    return live


def _parts(text: str | None, form: str) -> Any:
    """User data as compared: the text (RAW), or the multipart's parts stoker did not add."""
    if not text or form == s.RAW:
        return text or None
    message = email.message_from_string(text)
    if not message.is_multipart():
        return text
    added = ("part-handler.py", "run-cfn-userdata.sh", "cfn-init-data")
    return [
        (part.get_filename(), part.get_content_type(), part.get_payload(decode=True))
        for part in message.walk()
        if not part.is_multipart() and part.get_filename() not in added
    ]


def _resolved(find: Any, value: str) -> str:
    try:
        return str(find(value))
    except Exception:  # noqa: BLE001 - a flavor deleted since: its name stands for itself
        return value
