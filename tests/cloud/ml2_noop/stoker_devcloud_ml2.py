"""An ML2 mechanism driver that binds every port on any host, with no agent.

Installed into the test cloud's own environment (never into stoker's): without an agent, no
real driver would bind the ports Nova asks for, and servers would fail to boot. Ports become
ACTIVE with vif_type ovs; no traffic flows anywhere.
"""

from neutron_lib import constants
from neutron_lib.api.definitions import portbindings
from neutron_lib.plugins.ml2 import api


class NoopMechanismDriver(api.MechanismDriver):
    def initialize(self):
        pass

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
