"""AWS::ElasticLoadBalancing::LoadBalancer as Heat builds it: a nested stack of one
HAProxy instance.

The child stack is Heat's own HAProxy template (``haproxy_template.json``, shipped
as Heat ships it) or the operator's (``loadbalancer_template``: ``Settings``, or
``STOKER_LOADBALANCER_TEMPLATE``): an AWS::EC2::Instance whose
``AWS::CloudFormation::Init`` metadata carries ``/etc/haproxy/haproxy.cfg``, cfn-hup's
files and a crontab, an IAM user and access key for the agent, a latency alarm, and a
WaitConditionHandle the instance signals with ``cfn-signal`` once HAProxy runs. The
parent's ``KeyName``, ``LbFlavor``, ``LBTimeout`` and ``LbImageId`` parameters, when
its template declares them, are passed on (without a ``KeyName`` the instance gets no
key), and ``SecurityGroups``.

This module owns the rendering of the HAProxy configuration from ``Listeners``,
``HealthCheck`` and the members' addresses (Heat's, line for line), and where it goes.
Heat writes a new configuration straight into the instance's stored metadata; here
metadata is the child template's, so a new membership is a child update in which only
``LB_instance``'s metadata changes (a metadata-only update: nothing is rebuilt, and
cfn-hup on the instance picks it up as it would from Heat). Members come from
``Instances``, or from an autoscaling group naming this load balancer in its
``LoadBalancerNames`` (``reconfigure``); with ``Instances`` not given, an update keeps
the membership the child has.

Must not: poll the members or HAProxy; the instance's agent does the configuring.
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stoker.resources.openstack.nova.server_networks import first_address
from stoker.sdk import attributes, constraints, properties
from stoker.sdk.exceptions import InvalidTemplateAttribute, StokerError, ValidationError
from stoker.sdk.stack_resource import StackResource
from stoker.template import loader

__all__ = ["LoadBalancer", "resource_mapping"]

LOG = logging.getLogger(__name__)

DEFAULT_TEMPLATE = Path(__file__).with_name("haproxy_template.json")
TEMPLATE_SETTING = "loadbalancer_template"
TEMPLATE_VARIABLE = "STOKER_LOADBALANCER_TEMPLATE"
# The child's instance, and the file of its cfn-init metadata that holds HAProxy's configuration.
INSTANCE = "LB_instance"
CONFIG_FILE = "/etc/haproxy/haproxy.cfg"
# The parent's parameters the child gets when the parent's template declares them.
PASSED_PARAMETERS = ("KeyName", "LbFlavor", "LBTimeout", "LbImageId")

_GLOBAL = """
global
    daemon
    maxconn 256
    stats socket /tmp/.haproxy-stats

defaults
    mode http
    timeout connect 5000ms
    timeout client 50000ms
    timeout server 50000ms
"""


def _config_files(template: Mapping[str, Any]) -> dict[str, Any] | None:
    """The cfn-init ``files`` of the child's instance; None in a template without them
    (an operator's own template may configure HAProxy otherwise)."""
    try:
        files = template["Resources"][INSTANCE]["Metadata"]["AWS::CloudFormation::Init"]["config"][
            "files"
        ]
    except (KeyError, TypeError):
        return None
    return files if isinstance(files, dict) and isinstance(files.get(CONFIG_FILE), dict) else None


class LoadBalancer(StackResource):
    """Implements a HAProxy-bearing instance as a nested stack.

    The template for the nested stack can be redefined with the ``loadbalancer_template``
    setting (``STOKER_LOADBALANCER_TEMPLATE``), as Heat's option of that name in
    ``heat.conf``.

    Generally the image used for the instance must have the following packages installed
    or available for installation at runtime: heat-cfntools and its dependencies like
    python-psutil, cronie, socat and haproxy. The built-in template is Heat's, made for the
    Fedora 21 x86_64 base cloud image.
    """

    PROPERTIES = (
        AVAILABILITY_ZONES,
        HEALTH_CHECK,
        INSTANCES,
        LISTENERS,
        APP_COOKIE_STICKINESS_POLICY,
        LBCOOKIE_STICKINESS_POLICY,
        SECURITY_GROUPS,
        SUBNETS,
    ) = (
        "AvailabilityZones",
        "HealthCheck",
        "Instances",
        "Listeners",
        "AppCookieStickinessPolicy",
        "LBCookieStickinessPolicy",
        "SecurityGroups",
        "Subnets",
    )
    _HEALTH_CHECK_KEYS = (
        HEALTHY_THRESHOLD,
        INTERVAL,
        TARGET,
        TIMEOUT,
        UNHEALTHY_THRESHOLD,
    ) = ("HealthyThreshold", "Interval", "Target", "Timeout", "UnhealthyThreshold")
    _LISTENER_KEYS = (
        INSTANCE_PORT,
        LOAD_BALANCER_PORT,
        PROTOCOL,
        SSL_CERTIFICATE_ID,
        POLICY_NAMES,
    ) = ("InstancePort", "LoadBalancerPort", "Protocol", "SSLCertificateId", "PolicyNames")
    ATTRIBUTES = (
        CANONICAL_HOSTED_ZONE_NAME,
        CANONICAL_HOSTED_ZONE_NAME_ID,
        DNS_NAME,
        SOURCE_SECURITY_GROUP_GROUP_NAME,
        SOURCE_SECURITY_GROUP_OWNER_ALIAS,
    ) = (
        "CanonicalHostedZoneName",
        "CanonicalHostedZoneNameID",
        "DNSName",
        "SourceSecurityGroup.GroupName",
        "SourceSecurityGroup.OwnerAlias",
    )

    # Its instance is a Nova server, and its members' addresses come from Nova: the
    # conformance lifecycle runs it against the test cloud (tests/cloud/test_aws_elb.py).
    default_client_name = "nova"

    properties_schema = {
        AVAILABILITY_ZONES: properties.Schema(
            properties.Schema.LIST,
            "The Availability Zones in which to create the load balancer.",
            required=True,
        ),
        HEALTH_CHECK: properties.Schema(
            properties.Schema.MAP,
            "An application health check for the instances.",
            schema={
                HEALTHY_THRESHOLD: properties.Schema(
                    properties.Schema.INTEGER,
                    "The number of consecutive health probe successes required before moving the instance to "
                    "the healthy state.",
                    required=True,
                ),
                INTERVAL: properties.Schema(
                    properties.Schema.INTEGER,
                    "The approximate interval, in seconds, between health checks of an individual instance.",
                    required=True,
                ),
                TARGET: properties.Schema(
                    properties.Schema.STRING, "The port being checked.", required=True
                ),
                TIMEOUT: properties.Schema(
                    properties.Schema.INTEGER, "Health probe timeout, in seconds.", required=True
                ),
                UNHEALTHY_THRESHOLD: properties.Schema(
                    properties.Schema.INTEGER,
                    "The number of consecutive health probe failures required before moving the instance to "
                    "the unhealthy state",
                    required=True,
                ),
            },
        ),
        INSTANCES: properties.Schema(
            properties.Schema.LIST, "The list of instance IDs load balanced.", update_allowed=True
        ),
        LISTENERS: properties.Schema(
            properties.Schema.LIST,
            "One or more listeners for this load balancer.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    INSTANCE_PORT: properties.Schema(
                        properties.Schema.INTEGER,
                        "TCP port on which the instance server is listening.",
                        required=True,
                    ),
                    LOAD_BALANCER_PORT: properties.Schema(
                        properties.Schema.INTEGER,
                        "The external load balancer port number.",
                        required=True,
                    ),
                    PROTOCOL: properties.Schema(
                        properties.Schema.STRING,
                        "The load balancer transport protocol to use.",
                        required=True,
                        constraints=[constraints.AllowedValues(["TCP", "HTTP"])],
                    ),
                    SSL_CERTIFICATE_ID: properties.Schema(
                        properties.Schema.STRING, "Not Implemented.", implemented=False
                    ),
                    POLICY_NAMES: properties.Schema(
                        properties.Schema.LIST, "Not Implemented.", implemented=False
                    ),
                },
            ),
            required=True,
        ),
        APP_COOKIE_STICKINESS_POLICY: properties.Schema(
            properties.Schema.STRING, "Not Implemented.", implemented=False
        ),
        LBCOOKIE_STICKINESS_POLICY: properties.Schema(
            properties.Schema.STRING, "Not Implemented.", implemented=False
        ),
        SECURITY_GROUPS: properties.Schema(
            properties.Schema.LIST,
            "List of Security Groups assigned on current LB.",
            update_allowed=True,
        ),
        SUBNETS: properties.Schema(properties.Schema.LIST, "Not Implemented.", implemented=False),
    }

    attributes_schema = {
        CANONICAL_HOSTED_ZONE_NAME: attributes.Schema(
            "The name of the hosted zone that is associated with the LoadBalancer.",
            type=attributes.Schema.STRING,
        ),
        CANONICAL_HOSTED_ZONE_NAME_ID: attributes.Schema(
            "The ID of the hosted zone name that is associated with the LoadBalancer.",
            type=attributes.Schema.STRING,
        ),
        DNS_NAME: attributes.Schema(
            "The DNS name for the LoadBalancer.", type=attributes.Schema.STRING
        ),
        SOURCE_SECURITY_GROUP_GROUP_NAME: attributes.Schema(
            "The security group that you can use as part of your inbound rules for your LoadBalancer's "
            "back-end instances.",
            type=attributes.Schema.STRING,
        ),
        SOURCE_SECURITY_GROUP_OWNER_ALIAS: attributes.Schema(
            "Owner of the source security group.", type=attributes.Schema.STRING
        ),
    }

    # -- the child's template ------------------------------------------------------------

    def custom_template_path(self) -> str | None:
        """The operator's ``loadbalancer_template``, when set."""
        try:
            plugin = self.client_plugin("nova")
        except StokerError:
            plugin = None
        settings = getattr(plugin, "settings", None) or {}
        environ = getattr(plugin, "environ", None) or os.environ
        return settings.get(TEMPLATE_SETTING) or environ.get(TEMPLATE_VARIABLE) or None

    def parsed_template(self) -> dict[str, Any]:
        custom = self.custom_template_path()
        if custom:
            LOG.info("Using custom loadbalancer template %s", custom)
            path = Path(custom)
        else:
            path = DEFAULT_TEMPLATE
        data = loader.load(path.read_text(), str(path)).data
        if not isinstance(data, dict):
            raise ValidationError(
                f"The loadbalancer template {path} is not a template (a mapping)",
                path=f"resources.{self.name}",
                hint="the operator's loadbalancer_template setting must name a CFN or HOT template file",
            )
        return copy.deepcopy(data)

    def _parent_parameters(self) -> Mapping[str, Any]:
        """The parent's parameter values (the resolution context's: the running
        stack's, or the one being validated)."""
        for holder in (self.context, self.stack):
            params = getattr(holder, "params", None)
            if isinstance(params, Mapping):
                return params
        return {}

    def child_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {}
        groups = self.properties[self.SECURITY_GROUPS]
        if self.properties.data.get(self.SECURITY_GROUPS) is not None:
            params["SecurityGroups"] = list(groups)
        parent = self._parent_parameters()
        for name in PASSED_PARAMETERS:
            if name in parent:
                params[name] = parent[name]
        return params

    def child_template(self, members: list[str] | None = None) -> dict[str, Any]:
        """The child's template with the HAProxy configuration for ``members`` (default:
        ``Instances``; when neither gives any, the configuration the child has now)."""
        template = self.parsed_template()
        # Without a KeyName of the parent's, the instance gets no key (as in Heat).
        if "KeyName" not in self._parent_parameters():
            (template.get("Resources", {}).get(INSTANCE, {}).get("Properties") or {}).pop(
                "KeyName", None
            )
            (template.get("Parameters") or {}).pop("KeyName", None)
        files = _config_files(template)
        if files is None:
            return template
        if members is None and self.properties.data.get(self.INSTANCES) is not None:
            members = list(self.properties[self.INSTANCES] or [])
        if members is not None and (members or self.resource_id is not None):
            files[CONFIG_FILE]["content"] = self.haproxy_config(members)
        elif self.resource_id is not None:
            current = self._current_config()
            if current is not None:
                files[CONFIG_FILE]["content"] = current
        return template

    def _current_config(self) -> Any:
        """The HAProxy configuration in the child's instance now (None before there is one)."""
        if self.nested_stacks().state(self) is None:
            return None
        view = self.nested_view()
        definition = view.definition(INSTANCE) if view is not None else None
        metadata = (definition or {}).get("metadata") or (definition or {}).get("Metadata")
        files = _config_files({"Resources": {INSTANCE: {"Metadata": metadata}}})
        return files[CONFIG_FILE].get("content") if files is not None else None

    # -- HAProxy's configuration (Heat's, with one listener, HTTP) ------------------------

    def _frontend(self) -> str:
        port = self.properties[self.LISTENERS][0][self.LOAD_BALANCER_PORT]
        return f"\nfrontend http\n    bind *:{port}\n    default_backend servers\n"

    def _backend(self) -> str:
        health = self.properties[self.HEALTH_CHECK]
        check = f"    timeout check {int(health[self.TIMEOUT])}s" if health else ""
        return (
            "\nbackend servers\n    balance roundrobin\n    option http-server-close\n"
            f"    option forwardfor\n    option httpchk\n{check}\n"
        )

    def _servers(self, members: list[str]) -> str:
        port = self.properties[self.LISTENERS][0][self.INSTANCE_PORT]
        health = self.properties[self.HEALTH_CHECK]
        check = (
            f" check inter {health[self.INTERVAL]}s fall {health[self.UNHEALTHY_THRESHOLD]}"
            f" rise {health[self.HEALTHY_THRESHOLD]}"
            if health
            else ""
        )
        lines = []
        for number, member in enumerate(members, start=1):
            address = self.member_address(member) or "0.0.0.0"  # noqa: S104 - Heat's placeholder
            lines.append(f"    server server{number} {address}:{port}{check}")
        return "\n".join(lines)

    def member_address(self, server_id: str) -> str | None:
        """A member's address (Heat's server_to_ipaddress); None for a server not found."""
        plugin = self.client_plugin("nova")
        try:
            server = plugin.get_server(server_id)
        except Exception as error:
            plugin.ignore_not_found(error)
            return None
        return first_address(getattr(server, "addresses", None)) or None

    def haproxy_config(self, members: list[str]) -> str:
        return f"{_GLOBAL}{self._frontend()}{self._backend()}{self._servers(members)}\n"

    # -- what an autoscaling group calls (Heat's lbutils.reconfigure_loadbalancers) --------

    def reconfigure(self, members: list[str]) -> None:
        """Start giving the child the configuration for ``members`` (a group's), unless
        it has it already; ``reconfigured`` says when the child's update has ended."""
        template = self.child_template(members)
        files = _config_files(template)
        if files is not None and files[CONFIG_FILE].get("content") == self._current_config():
            return
        self.update_with_template(template, self.child_params(), self.child_timeout_mins())

    def reconfigured(self) -> bool:
        state = self.nested_stacks().state(self)
        return state is None or state[1] != self.IN_PROGRESS

    # -- validation and attributes ---------------------------------------------------------

    def validate(self) -> None:
        super().validate()
        place = f"resources.{self.name}.properties"
        custom = self.custom_template_path()
        if custom and not os.access(custom, os.R_OK):
            raise ValidationError(
                "Custom LoadBalancer template can not be found",
                path=f"resources.{self.name}",
                hint=f"the operator's loadbalancer_template setting names {custom}, which cannot be read",
            )
        if not self.properties[self.LISTENERS]:
            raise ValidationError(
                "Listeners: one listener is needed (HAProxy serves the first)",
                path=f"{place}.{self.LISTENERS}",
            )
        health = self.properties[self.HEALTH_CHECK]
        if health and float(health[self.INTERVAL]) < float(health[self.TIMEOUT]):
            raise ValidationError(
                "Interval must be larger than Timeout",
                path=f"{place}.{self.HEALTH_CHECK}",
                hint="give an Interval of at least the Timeout",
            )

    def get_reference_id(self) -> str:
        return str(self.name)

    def _resolve_attribute(self, name: str) -> Any:
        if name == self.DNS_NAME:
            if self.resource_id is None:
                return None
            try:
                return self.get_output("PublicIp")
            except InvalidTemplateAttribute:
                raise InvalidTemplateAttribute(self.name, name) from None
        # Heat gives the others as empty strings: they have no meaning here.
        return ""


def resource_mapping() -> dict[str, type[StackResource]]:
    return {"AWS::ElasticLoadBalancing::LoadBalancer": LoadBalancer}
