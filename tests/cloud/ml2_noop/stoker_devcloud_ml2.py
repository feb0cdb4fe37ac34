"""An ML2 mechanism driver that binds every port on any host, with no agent, and a trunk
driver and a QoS driver beside it, so Neutron's trunk and QoS service plugins have a
compatible driver (VLAN subports, trunks on bound ports; every rule type Open vSwitch's
driver supports, on networks and ports).

Installed into the test cloud's own environment (never into stoker's): without an agent, no
real driver would bind the ports Nova asks for, and servers would fail to boot. Ports become
ACTIVE with vif_type ovs; no traffic flows anywhere.
"""

from neutron_lib import constants
from neutron_lib.api.definitions import portbindings
from neutron_lib.plugins.ml2 import api

NAME = "stoker_noop"


def _trunk_driver():
    """Neutron's trunk plugin refuses to start without a driver of a loaded mechanism
    driver; ours registers itself when the plugin announces it has started."""
    from neutron.services.trunk.drivers import base

    class NoopTrunkDriver(base.DriverBase):
        @property
        def is_loaded(self):
            return True

    return NoopTrunkDriver(NAME, (portbindings.VIF_TYPE_OVS,), ("vlan",), agent_type=None, can_trunk_bound_port=True)


def _qos_driver():
    """Neutron's QoS plugin accepts a rule on a network or port only when a driver
    supports it; ours supports what Open vSwitch's does."""
    from neutron.services.qos.drivers.openvswitch.driver import SUPPORTED_RULES
    from neutron_lib.services.qos import base

    return base.DriverBase(
        NAME,
        vif_types=[portbindings.VIF_TYPE_OVS],
        vnic_types=[portbindings.VNIC_NORMAL],
        supported_rules=SUPPORTED_RULES,
        requires_rpc_notifications=False,
    )


class NoopMechanismDriver(api.MechanismDriver):
    def initialize(self):
        self.trunk_driver = _trunk_driver()
        self.qos_driver = _qos_driver()

    def bind_port(self, context):
        # Any segment will do: flat (the external network) and vxlan (project networks) alike.
        for segment in context.segments_to_bind:
            context.set_binding(
                segment[api.ID],
                portbindings.VIF_TYPE_OVS,
                {portbindings.CAP_PORT_FILTER: True, portbindings.OVS_HYBRID_PLUG: False},
                status=constants.PORT_STATUS_ACTIVE,
            )
            return

    @property
    def supported_vnic_types(self):
        return [portbindings.VNIC_NORMAL]
