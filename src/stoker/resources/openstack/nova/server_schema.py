"""OS::Nova::Server's declarations: the names, the property and attribute schemas, and the
compute microversions its features need, as Heat has them (names, defaults, constraints,
descriptions, update behaviour).

Owns: data only. The resource (``server.py``) reads these; nothing here calls a cloud or
knows the engine. Kept apart from the resource because Heat's schema alone is ~600 lines.
"""

from __future__ import annotations

from stoker.resources.openstack.neutron.port import Port
from stoker.sdk import attributes, constraints, properties, support

__all__ = ["ATTRIBUTES_SCHEMA", "PROPERTIES_SCHEMA"]

# The compute microversions of Heat's features (tags, "allocate_network", nic tags,
# personality's removal, volume_type in block_device_mapping_v2), and user_data on rebuild.
MICROVERSION_TAGS = "2.26"
MICROVERSION_STR_NETWORK = "2.37"
MICROVERSION_NIC_TAGS = "2.42"
MICROVERSION_PERSONALITY_REMOVED = "2.57"
# The last compute microversion that takes personality: a create with personality uses it
# on a cloud that still offers it (seed 004's rule for a removed field).
MICROVERSION_LAST_PERSONALITY = "2.56"
MICROVERSION_REBUILD_USER_DATA = "2.57"
MICROVERSION_VOLUME_TYPE = "2.67"

PROPERTIES = (
    NAME, IMAGE, BLOCK_DEVICE_MAPPING, BLOCK_DEVICE_MAPPING_V2,
    FLAVOR, FLAVOR_UPDATE_POLICY, IMAGE_UPDATE_POLICY, KEY_NAME,
    ADMIN_USER, AVAILABILITY_ZONE, SECURITY_GROUPS, NETWORKS,
    SCHEDULER_HINTS, METADATA, USER_DATA_FORMAT, USER_DATA,
    RESERVATION_ID, CONFIG_DRIVE, DISK_CONFIG, PERSONALITY,
    ADMIN_PASS, SOFTWARE_CONFIG_TRANSPORT, USER_DATA_UPDATE_POLICY,
    TAGS, DEPLOYMENT_SWIFT_DATA,
) = (
    "name", "image", "block_device_mapping", "block_device_mapping_v2",
    "flavor", "flavor_update_policy", "image_update_policy", "key_name",
    "admin_user", "availability_zone", "security_groups", "networks",
    "scheduler_hints", "metadata", "user_data_format", "user_data",
    "reservation_id", "config_drive", "diskConfig", "personality",
    "admin_pass", "software_config_transport", "user_data_update_policy",
    "tags", "deployment_swift_data",
)

BDM_KEYS = (
    BDM_DEVICE_NAME, BDM_VOLUME_ID, BDM_IMAGE_ID, BDM_IMAGE, BDM_SNAPSHOT_ID, BDM_SWAP_SIZE,
    BDM_DEVICE_TYPE, BDM_DISK_BUS, BDM_BOOT_INDEX, BDM_VOLUME_SIZE, BDM_DELETE_ON_TERM,
    BDM_EPHEMERAL_SIZE, BDM_EPHEMERAL_FORMAT, BDM_VOLUME_TYPE,
) = (
    "device_name", "volume_id", "image_id", "image", "snapshot_id", "swap_size",
    "device_type", "disk_bus", "boot_index", "volume_size", "delete_on_termination",
    "ephemeral_size", "ephemeral_format", "volume_type",
)

NETWORK_KEYS = (
    NETWORK_UUID, NETWORK_ID, NETWORK_FIXED_IP, NETWORK_PORT, NETWORK_SUBNET,
    NETWORK_PORT_EXTRA, NETWORK_FLOATING_IP, ALLOCATE_NETWORK, NIC_TAG,
) = (
    "uuid", "network", "fixed_ip", "port", "subnet",
    "port_extra_properties", "floating_ip", "allocate_network", "tag",
)
# The keys of a networks entry an interface of the server can answer for.
IFACE_MANAGED_KEYS = (NETWORK_PORT, NETWORK_ID, NETWORK_FIXED_IP, NETWORK_SUBNET)

USER_DATA_FORMATS = (HEAT_CFNTOOLS, RAW, SOFTWARE_CONFIG) = ("HEAT_CFNTOOLS", "RAW", "SOFTWARE_CONFIG")
SOFTWARE_CONFIG_TRANSPORTS = ("POLL_SERVER_CFN", "POLL_SERVER_HEAT", "POLL_TEMP_URL", "ZAQAR_MESSAGE")
ALLOCATE_TYPES = (NETWORK_NONE, NETWORK_AUTO) = ("none", "auto")
DEPLOYMENT_SWIFT_DATA_KEYS = (CONTAINER, OBJECT) = ("container", "object")

ATTRIBUTES = (
    NAME_ATTR, ADDRESSES, NETWORKS_ATTR, FIRST_ADDRESS, INSTANCE_NAME, ACCESSIPV4,
    ACCESSIPV6, CONSOLE_URLS, TAGS_ATTR, OS_COLLECT_CONFIG,
) = (
    "name", "addresses", "networks", "first_address", "instance_name", "accessIPv4",
    "accessIPv6", "console_urls", "tags", "os_collect_config",
)

# Heat's Port.extra_properties_schema: the port properties a networks entry may set on
# the port the server creates for it.
PORT_EXTRA_KEYS = (
    Port.VALUE_SPECS, Port.ADMIN_STATE_UP, Port.MAC_ADDRESS, Port.ALLOWED_ADDRESS_PAIRS,
    Port.VNIC_TYPE, Port.QOS_POLICY, Port.PORT_SECURITY_ENABLED, Port.PROPAGATE_UPLINK_STATUS,
    Port.NO_FIXED_IPS,
)
PORT_EXTRA_SCHEMA = {key: Port.properties_schema[key] for key in PORT_EXTRA_KEYS}

_S = properties.Schema
_DEVICE_NAME_TEXT = (
    "A device name where the volume will be attached in the system at /dev/device_name. "
    "This value is typically vda."
)


def _hidden_since(version: str, message: str, deprecated: str, first: str | None = None) -> support.SupportStatus:
    return support.SupportStatus(
        status=support.HIDDEN,
        version=version,
        message=message,
        previous_status=support.SupportStatus(
            status=support.DEPRECATED,
            version=deprecated,
            previous_status=support.SupportStatus(version=first) if first else None,
        ),
    )


_BDM_V1_SCHEMA = {
    BDM_DEVICE_NAME: _S(_S.STRING, _DEVICE_NAME_TEXT, required=True),
    BDM_VOLUME_ID: _S(
        _S.STRING,
        "The ID of the volume to boot from. Only one of volume_id or snapshot_id should be provided.",
        constraints=[constraints.CustomConstraint("cinder.volume")],
    ),
    BDM_SNAPSHOT_ID: _S(
        _S.STRING,
        "The ID of the snapshot to create a volume from.",
        constraints=[constraints.CustomConstraint("cinder.snapshot")],
    ),
    BDM_VOLUME_SIZE: _S(
        _S.INTEGER,
        "The size of the volume, in GB. It is safe to leave this blank and have the Compute "
        "service infer the size.",
    ),
    BDM_DELETE_ON_TERM: _S(_S.BOOLEAN, "Indicate whether the volume should be deleted when the server is terminated."),
}

_BDM_V2_SCHEMA = {
    BDM_DEVICE_NAME: _S(_S.STRING, _DEVICE_NAME_TEXT),
    BDM_VOLUME_ID: _S(
        _S.STRING,
        "The volume_id can be boot or non-boot device to the server.",
        constraints=[constraints.CustomConstraint("cinder.volume")],
    ),
    BDM_IMAGE_ID: _S(
        _S.STRING,
        "The ID of the image to create a volume from.",
        support_status=_hidden_since("9.0.0", f"Use property {BDM_IMAGE}.", "7.0.0", "5.0.0"),
        constraints=[constraints.CustomConstraint("glance.image")],
    ),
    BDM_IMAGE: _S(
        _S.STRING,
        "The ID or name of the image to create a volume from.",
        support_status=support.SupportStatus(version="7.0.0"),
        constraints=[constraints.CustomConstraint("glance.image")],
    ),
    BDM_SNAPSHOT_ID: _S(
        _S.STRING,
        "The ID of the snapshot to create a volume from.",
        constraints=[constraints.CustomConstraint("cinder.snapshot")],
    ),
    BDM_SWAP_SIZE: _S(_S.INTEGER, "The size of the swap, in MB."),
    BDM_EPHEMERAL_SIZE: _S(
        _S.INTEGER,
        "The size of the local ephemeral block device, in GB.",
        support_status=support.SupportStatus(version="8.0.0"),
        constraints=[constraints.Range(min=1)],
    ),
    BDM_EPHEMERAL_FORMAT: _S(
        _S.STRING,
        "The format of the local ephemeral block device. If no format is specified, uses "
        "default value, defined in nova configuration file.",
        constraints=[constraints.AllowedValues(["ext2", "ext3", "ext4", "xfs", "ntfs"])],
        support_status=support.SupportStatus(version="8.0.0"),
    ),
    BDM_DEVICE_TYPE: _S(
        _S.STRING,
        "Device type: at the moment we can make distinction only between disk and cdrom.",
        constraints=[constraints.AllowedValues(["cdrom", "disk"])],
    ),
    BDM_DISK_BUS: _S(
        _S.STRING,
        "Bus of the device: hypervisor driver chooses a suitable default if omitted.",
        constraints=[constraints.AllowedValues(["ide", "lame_bus", "sata", "scsi", "usb", "virtio"])],
    ),
    BDM_BOOT_INDEX: _S(
        _S.INTEGER,
        'Integer used for ordering the boot disks. If it is not specified, value "0" will be '
        'set for bootable sources (volume, snapshot, image); value "-1" will be set for '
        "non-bootable sources.",
    ),
    BDM_VOLUME_SIZE: _S(
        _S.INTEGER,
        "Size of the block device in GB. If it is omitted, hypervisor driver calculates size.",
    ),
    BDM_DELETE_ON_TERM: _S(
        _S.BOOLEAN,
        'Indicate whether the volume should be deleted when the server is terminated. Defaults '
        'to "False" in case of a volume, snapshot or image and to "True" in case of swap or ephemeral.',
    ),
    BDM_VOLUME_TYPE: _S(
        _S.STRING,
        "The type of volume to use when creating a volume from image, snapshot, or blank "
        "source. Maps to a specific Cinder backend. Requires Nova API microversion 2.67 or later.",
        constraints=[constraints.CustomConstraint("cinder.vtype")],
        support_status=support.SupportStatus(version="26.0.0"),
    ),
}

_NETWORK_SCHEMA = {
    NETWORK_UUID: _S(
        _S.STRING,
        "ID of network to create a port on.",
        support_status=support.SupportStatus(
            status=support.HIDDEN,
            version="5.0.0",
            previous_status=support.SupportStatus(
                status=support.DEPRECATED, message=f"Use property {NETWORK_ID}.", version="2014.1"
            ),
        ),
        constraints=[constraints.CustomConstraint("neutron.network")],
    ),
    NETWORK_ID: _S(
        _S.STRING,
        "Name or ID of network to create a port on.",
        constraints=[constraints.CustomConstraint("neutron.network")],
    ),
    ALLOCATE_NETWORK: _S(
        _S.STRING,
        "The special string values of network, auto: means either a network that is already "
        "available to the project will be used, or if one does not exist, will be "
        "automatically created for the project; none: means no networking will be allocated "
        'for the created server. Supported by Nova API since version "2.37". This property '
        "can not be used with other network keys.",
        support_status=support.SupportStatus(version="9.0.0"),
        constraints=[constraints.AllowedValues([NETWORK_NONE, NETWORK_AUTO])],
        update_allowed=True,
    ),
    NETWORK_FIXED_IP: _S(
        _S.STRING,
        "Fixed IP address to specify for the port created on the requested network.",
        constraints=[constraints.CustomConstraint("ip_addr")],
    ),
    NETWORK_PORT: _S(
        _S.STRING,
        "ID of an existing port to associate with this server.",
        constraints=[constraints.CustomConstraint("neutron.port")],
    ),
    NETWORK_PORT_EXTRA: _S(
        _S.MAP,
        "Dict, which has expand properties for port. Used only if port property is not "
        "specified for creating port.",
        schema=PORT_EXTRA_SCHEMA,
        support_status=support.SupportStatus(version="6.0.0"),
        update_allowed=True,
    ),
    NETWORK_SUBNET: _S(
        _S.STRING,
        "Subnet in which to allocate the IP address for port. Used for creating port, based "
        "on derived properties. If subnet is specified, network property becomes optional.",
        support_status=support.SupportStatus(version="5.0.0"),
    ),
    NETWORK_FLOATING_IP: _S(
        _S.STRING,
        "ID of the floating IP to associate.",
        support_status=support.SupportStatus(version="6.0.0"),
    ),
    NIC_TAG: _S(
        _S.STRING,
        "Port tag. Heat ignores any update on this property as nova does not support it.",
        support_status=support.SupportStatus(version="9.0.0"),
    ),
}

PROPERTIES_SCHEMA = {
    NAME: _S(_S.STRING, "Server name.", update_allowed=True),
    IMAGE: _S(
        _S.STRING,
        "The ID or name of the image to boot with.",
        constraints=[constraints.CustomConstraint("glance.image")],
        update_allowed=True,
    ),
    BLOCK_DEVICE_MAPPING: _S(
        _S.LIST,
        "Block device mappings for this server.",
        schema=_S(_S.MAP, schema=_BDM_V1_SCHEMA),
    ),
    BLOCK_DEVICE_MAPPING_V2: _S(
        _S.LIST,
        "Block device mappings v2 for this server.",
        schema=_S(_S.MAP, schema=_BDM_V2_SCHEMA),
        support_status=support.SupportStatus(version="2015.1"),
    ),
    FLAVOR: _S(
        _S.STRING,
        "The ID or name of the flavor to boot onto.",
        required=True,
        update_allowed=True,
        constraints=[constraints.CustomConstraint("nova.flavor")],
    ),
    FLAVOR_UPDATE_POLICY: _S(
        _S.STRING,
        "Policy on how to apply a flavor update; either by requesting a server resize or by "
        "replacing the entire server.",
        default="RESIZE",
        constraints=[constraints.AllowedValues(["RESIZE", "REPLACE"])],
        update_allowed=True,
    ),
    IMAGE_UPDATE_POLICY: _S(
        _S.STRING,
        "Policy on how to apply an image-id update; either by requesting a server rebuild or "
        "by replacing the entire server.",
        default="REBUILD",
        constraints=[constraints.AllowedValues(["REBUILD", "REPLACE", "REBUILD_PRESERVE_EPHEMERAL"])],
        update_allowed=True,
    ),
    KEY_NAME: _S(
        _S.STRING,
        "Name of keypair to inject into the server.",
        constraints=[constraints.CustomConstraint("nova.keypair")],
    ),
    ADMIN_USER: _S(
        _S.STRING,
        "Name of the administrative user to use on the server.",
        support_status=_hidden_since(
            "5.0.0",
            'The default cloud-init user set up for each image (e.g. "ubuntu" for Ubuntu '
            '12.04+, "fedora" for Fedora 19+ and "cloud-user" for CentOS/RHEL 6.5).',
            "2014.1",
            "2013.2",
        ),
    ),
    AVAILABILITY_ZONE: _S(_S.STRING, "Name of the availability zone for server placement."),
    SECURITY_GROUPS: _S(
        _S.LIST,
        "List of security group names or IDs. Cannot be used if neutron ports are associated "
        "with this server; assign security groups to the ports instead.",
        default=[],
    ),
    NETWORKS: _S(
        _S.LIST,
        "An ordered list of nics to be added to this server, with information about "
        "connected networks, fixed ips, port etc.",
        schema=_S(_S.MAP, schema=_NETWORK_SCHEMA),
        update_allowed=True,
    ),
    SCHEDULER_HINTS: _S(_S.MAP, "Arbitrary key-value pairs specified by the client to help boot a server."),
    METADATA: _S(
        _S.MAP,
        "Arbitrary key/value metadata to store for this server. Both keys and values must be "
        "255 characters or less. Non-string values will be serialized to JSON (and the "
        "serialized string must be 255 characters or less).",
        update_allowed=True,
        default={},
    ),
    USER_DATA_FORMAT: _S(
        _S.STRING,
        "How the user_data should be formatted for the server. For HEAT_CFNTOOLS, the "
        "user_data is bundled as part of the heat-cfntools cloud-init boot configuration "
        "data. For RAW the user_data is passed to Nova unmodified. For SOFTWARE_CONFIG "
        "user_data is bundled as part of the software config data, and metadata is derived "
        "from any associated SoftwareDeployment resources. And if the user_data is in CoreOS "
        "ignition(json) format, the metadata will be injected into the user_data "
        "automatically by Heat.",
        default=HEAT_CFNTOOLS,
        constraints=[constraints.AllowedValues(list(USER_DATA_FORMATS))],
    ),
    SOFTWARE_CONFIG_TRANSPORT: _S(
        _S.STRING,
        "How the server should receive the metadata required for software configuration. "
        "POLL_SERVER_CFN will allow calls to the cfn API action DescribeStackResource "
        "authenticated with the provided keypair. POLL_SERVER_HEAT will allow calls to the "
        "Heat API resource-show using the provided keystone credentials. POLL_TEMP_URL will "
        "serve the metadata at a URL (stoker's own, in place of a Swift TempURL) for polling. "
        "ZAQAR_MESSAGE will create a dedicated zaqar queue and post the metadata for polling. "
        "stoker serves POLL_TEMP_URL (its default), POLL_SERVER_HEAT (a Keystone stack user "
        "reads the metadata from stoker's API) and POLL_SERVER_CFN (stoker's CFN API at /cfn/v1/, "
        "signed with a keypair stoker issues to the server); ZAQAR_MESSAGE posts it to a Zaqar queue the server's Keystone stack user reads.",
        default="POLL_TEMP_URL",
        update_allowed=True,
        constraints=[constraints.AllowedValues(list(SOFTWARE_CONFIG_TRANSPORTS))],
    ),
    USER_DATA_UPDATE_POLICY: _S(
        _S.STRING,
        "Policy on how to apply a user_data update; by ignoring it, by replacing the entire "
        "server, or rebuild the server.",
        default="REPLACE",
        constraints=[constraints.AllowedValues(["REPLACE", "IGNORE", "REBUILD"])],
        support_status=support.SupportStatus(version="6.0.0"),
        update_allowed=True,
    ),
    USER_DATA: _S(
        _S.STRING,
        "User data script to be executed by cloud-init or CoreOS ignition. Changes cause "
        "replacement of the resource by default, but can be ignored altogether by setting "
        "the `user_data_update_policy` property.",
        default="",
        update_allowed=True,
    ),
    RESERVATION_ID: _S(_S.STRING, "A UUID for the set of servers being requested."),
    CONFIG_DRIVE: _S(_S.BOOLEAN, "If True, enable config drive on the server."),
    DISK_CONFIG: _S(
        _S.STRING,
        "Control how the disk is partitioned when the server is created.",
        constraints=[constraints.AllowedValues(["AUTO", "MANUAL"])],
    ),
    PERSONALITY: _S(
        _S.MAP,
        "A map of files to create/overwrite on the server upon boot. Keys are file names and "
        "values are the file contents.",
        support_status=support.SupportStatus(
            status=support.DEPRECATED,
            version="12.0.0",
            message="This is not supported with nova api microversion 2.57 and above. "
            "OS::Nova::Server resource will not support it in the future. Please use user_data "
            "or metadata instead. However, you can set heat config option "
            "max_nova_api_microversion < 2.57 to use this property in the meantime.",
        ),
        default={},
    ),
    ADMIN_PASS: _S(_S.STRING, "The administrator password for the server.", update_allowed=True),
    TAGS: _S(
        _S.LIST,
        "Server tags. Supported since client version 2.26.",
        support_status=support.SupportStatus(version="8.0.0"),
        schema=_S(_S.STRING),
        update_allowed=True,
    ),
    DEPLOYMENT_SWIFT_DATA: _S(
        _S.MAP,
        "Swift container and object to use for storing deployment data for the server "
        'resource. The parameter is a map value with the keys "container" and "object", and '
        "the values are the corresponding container and object names. The "
        "software_config_transport parameter must be set to POLL_TEMP_URL for swift to be "
        "used. If not specified, and software_config_transport is set to POLL_TEMP_URL, a "
        "container will be automatically created from the resource name, and the object name "
        "will be a generated uuid.",
        support_status=support.SupportStatus(version="9.0.0"),
        default={},
        update_allowed=True,
        schema={
            CONTAINER: _S(_S.STRING, "Name of the container.", constraints=[constraints.Length(min=1)]),
            OBJECT: _S(_S.STRING, "Name of the object.", constraints=[constraints.Length(min=1)]),
        },
    ),
}

_A = attributes.Schema
ATTRIBUTES_SCHEMA = {
    NAME_ATTR: _A("Name of the server.", type=_A.STRING),
    ADDRESSES: _A(
        "A dict of all network addresses with corresponding port_id and subnets. Each "
        "network will have two keys in dict, they are network name and network id. The port "
        "ID may be obtained through the following expression: ``{get_attr: [<server>, "
        "addresses, <network name_or_id>, 0, port]}``. The subnets may be obtained trough the "
        "following expression: ``{get_attr: [<server>, addresses, <network name_or_id>, 0, "
        "subnets]}``. The network may be obtained through the following expression: "
        "``{get_attr: [<server>, addresses, <network name_or_id>, 0, network]}``.",
        type=_A.MAP,
        support_status=support.SupportStatus(
            version="11.0.0",
            status=support.SUPPORTED,
            # Heat chains a SUPPORTED status to this one; stoker's checker refuses such a
            # chain, and it says nothing the message does not.
            message="The attribute was extended to include subnets and network with version 11.0.0.",
        ),
    ),
    NETWORKS_ATTR: _A(
        'A dict of assigned network addresses of the form: {"public": [ip1, ip2...], '
        '"private": [ip3, ip4], "public_uuid": [ip1, ip2...], "private_uuid": [ip3, ip4]}. '
        "Each network will have two keys in dict, they are network name and network id.",
        type=_A.MAP,
    ),
    FIRST_ADDRESS: _A(
        "Convenience attribute to fetch the first assigned network address, or an empty "
        "string if nothing has been assigned at this time. Result may not be predictable if "
        "the server has addresses from more than one network.",
        support_status=_hidden_since(
            "5.0.0",
            'Use the networks attribute instead of first_address. For example: "{get_attr: '
            '[<server name>, networks, <network name>, 0]}"',
            "2014.2",
            "2013.2",
        ),
    ),
    INSTANCE_NAME: _A("AWS compatible instance name.", type=_A.STRING),
    ACCESSIPV4: _A(
        "The manually assigned alternative public IPv4 address of the server.",
        type=_A.STRING,
        support_status=support.SupportStatus(
            status=support.DEPRECATED, version="14.0.0", previous_status=support.SupportStatus(version="2015.1")
        ),
    ),
    ACCESSIPV6: _A(
        "The manually assigned alternative public IPv6 address of the server.",
        type=_A.STRING,
        support_status=support.SupportStatus(
            status=support.DEPRECATED, version="14.0.0", previous_status=support.SupportStatus(version="2015.1")
        ),
    ),
    CONSOLE_URLS: _A(
        "URLs of server's consoles. To get a specific console type, the requested type can be "
        "specified as parameter to the get_attr function, e.g. get_attr: [ <server>, "
        "console_urls, novnc ]. Currently supported types are novnc, xvpvnc, spice-html5, "
        "rdp-html5, serial and webmks.",
        support_status=support.SupportStatus(version="2015.1"),
        type=_A.MAP,
    ),
    TAGS_ATTR: _A(
        "Tags from the server. Supported since client version 2.26.",
        support_status=support.SupportStatus(version="8.0.0"),
        type=_A.LIST,
    ),
    OS_COLLECT_CONFIG: _A(
        "The os-collect-config configuration for the server's local agent to be configured "
        "to connect to Heat to retrieve deployment data.",
        support_status=support.SupportStatus(version="9.0.0"),
        type=_A.MAP,
        cache_mode=_A.CACHE_NONE,
    ),
}
