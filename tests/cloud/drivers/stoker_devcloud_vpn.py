"""A VPNaaS service driver for the test cloud: no agent, no IPsec; what Neutron's VPN plugin
stores is marked ACTIVE at once (a VPN service when its first connection is made, the
connection itself when it is made), as the IPsec driver's agent would report.

neutron-vpnaas' own drivers notify the L3 agents hosting the router, and with none the
connection stays PENDING_CREATE for ever (Heat's OS::Neutron::IPsecSiteConnection waits
for ACTIVE). Loaded by neutron-api from the services' PYTHONPATH through
``[service_providers] service_provider = VPN:stoker_noop:stoker_devcloud_vpn.NoopVpnDriver:default``.
"""

from neutron_lib import constants
from neutron_vpnaas.services.vpn.service_drivers import VpnDriver


class NoopVpnDriver(VpnDriver):
    @property
    def service_type(self):
        return "IPsec"

    def create_vpnservice(self, context, vpnservice):
        pass

    def update_vpnservice(self, context, old_vpnservice, vpnservice):
        pass

    def delete_vpnservice(self, context, vpnservice):
        pass

    def create_ipsec_site_connection(self, context, ipsec_site_connection):
        self.service_plugin.update_ipsec_site_conn_status(
            context, ipsec_site_connection["id"], constants.ACTIVE
        )
        self.service_plugin.set_vpnservice_status(
            # Still PENDING_CREATE: allowed only when saying so (as the agent's report does).
            context,
            ipsec_site_connection["vpnservice_id"],
            constants.ACTIVE,
            updated_pending_status=True,
        )

    def update_ipsec_site_connection(
        self, context, old_ipsec_site_connection, ipsec_site_connection
    ):
        pass

    def delete_ipsec_site_connection(self, context, ipsec_site_connection):
        pass
