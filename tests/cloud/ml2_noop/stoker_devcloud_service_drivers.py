"""Service drivers for the add-on Neutron service plugins of the test cloud that ship none
that works without an agent: tap-as-a-service and L2 gateways (networking-sfc has its
``dummy`` drivers, networking-bgpvpn its database-only ``BGPVPNDriver``).

Installed into the test cloud's own environment beside the ML2 driver, and named in
neutron.conf's ``[service_providers]``. Each acts as the agent would once it had programmed
the switch: a tap service or tap flow goes ACTIVE as it is created and is gone as it is
deleted (TaaS's own RPC driver leaves both DOWN until a taas agent answers, and Heat waits
for ACTIVE). An L2 gateway and its connections are kept in the database only (the RPC
driver would look for the gateway's switch in an OVSDB no agent fills).
"""

from networking_l2gw.services.l2gateway import service_drivers as l2gw_drivers
from networking_l2gw.services.l2gateway.common import constants as l2gw_constants
from neutron_lib import constants
from neutron_taas.services.taas import service_drivers as taas_drivers
from neutron_taas.services.taas import taas_plugin


class NoopTaasDriver(taas_drivers.TaasBaseDriver):
    """Tap services and flows are ACTIVE once created, gone once deleted."""

    def _database(self):
        # The plugin's database methods, beneath the plugin's own (which call the driver).
        return super(taas_plugin.TaasPlugin, self.service_plugin)

    def create_tap_service_precommit(self, context):
        # The tap id (a VLAN the agent would use) is allocated as the RPC driver does.
        context.tap_id_association = context._plugin.create_tap_id_association(
            context._plugin_context, context.tap_service["id"]
        )

    def create_tap_service_postcommit(self, context):
        self._database().update_tap_service(
            context._plugin_context,
            context.tap_service["id"],
            {"tap_service": {"status": constants.ACTIVE}},
        )

    def delete_tap_service_precommit(self, context):
        # Called for an ACTIVE tap service (marked PENDING_DELETE): the agent would
        # unprogram it and report it INACTIVE, which deletes the row.
        self._database().delete_tap_service(context._plugin_context, context.tap_service["id"])

    def delete_tap_service_postcommit(self, context):
        pass

    def create_tap_flow_precommit(self, context):
        pass

    def create_tap_flow_postcommit(self, context):
        self._database().update_tap_flow(
            context._plugin_context,
            context.tap_flow["id"],
            {"tap_flow": {"status": constants.ACTIVE}},
        )

    def delete_tap_flow_precommit(self, context):
        self._database().delete_tap_flow(context._plugin_context, context.tap_flow["id"])

    def delete_tap_flow_postcommit(self, context):
        pass

    def create_tap_mirror_precommit(self, context):
        pass

    def create_tap_mirror_postcommit(self, context):
        pass

    def delete_tap_mirror_precommit(self, context):
        pass

    def delete_tap_mirror_postcommit(self, context):
        pass


class NoopL2gwDriver(l2gw_drivers.L2gwDriver):
    """L2 gateways and their connections in the database only."""

    @property
    def service_type(self):
        return l2gw_constants.L2GW
