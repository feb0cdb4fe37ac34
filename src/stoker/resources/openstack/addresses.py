"""Heat's custom constraints on network addresses and DNS names (``ip_addr``,
``net_cidr``, ``ip_or_cidr``, ``mac_addr``, ``dns_name``, ``rel_dns_name``,
``dns_domain``): checked locally, no cloud asked."""

from __future__ import annotations

import ipaddress
import re
from typing import Any, ClassVar

__all__ = ["constraint_mapping"]

_MAC = re.compile(r"^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$")
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")


class _LocalConstraint:
    name: ClassVar[str] = ""
    expected: ClassVar[str] = ""

    def validate(self, value: Any, context: Any = None, template: Any = None) -> bool:
        return isinstance(value, str) and self.check(value)

    def check(self, value: str) -> bool:
        raise NotImplementedError

    def error(self, value: Any) -> str:
        return f'"{value}" is not {self.expected}'


class IPAddress(_LocalConstraint):
    name, expected = "ip_addr", "a valid IP address"

    def check(self, value: str) -> bool:
        try:
            ipaddress.ip_address(value)
        except ValueError:
            return False
        return True


class CIDR(_LocalConstraint):
    name, expected = "net_cidr", "a valid CIDR (e.g. 10.0.0.0/24)"

    def check(self, value: str) -> bool:
        if "/" not in value:
            return False
        try:
            ipaddress.ip_network(value, strict=False)
        except ValueError:
            return False
        return True


class IPOrCIDR(_LocalConstraint):
    name, expected = "ip_or_cidr", "a valid IP address or CIDR"

    def check(self, value: str) -> bool:
        return IPAddress().check(value) or CIDR().check(value)


class MACAddress(_LocalConstraint):
    name, expected = "mac_addr", "a valid MAC address"

    def check(self, value: str) -> bool:
        return _MAC.match(value) is not None


class DNSName(_LocalConstraint):
    name, expected = "dns_name", "a valid DNS name"

    def check(self, value: str) -> bool:
        name = value[:-1] if value.endswith(".") else value
        return 0 < len(name) <= 255 and all(_LABEL.match(label) for label in name.split("."))


class RelativeDNSName(DNSName):
    name, expected = "rel_dns_name", "a valid relative DNS name (no trailing dot)"

    def check(self, value: str) -> bool:
        return not value.endswith(".") and super().check(value)


class DNSDomain(DNSName):
    name, expected = "dns_domain", "a valid DNS domain"


def constraint_mapping() -> dict[str, type[_LocalConstraint]]:
    return {c.name: c for c in (IPAddress, CIDR, IPOrCIDR, MACAddress, DNSName, RelativeDNSName, DNSDomain)}
