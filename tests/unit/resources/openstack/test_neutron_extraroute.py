"""OS::Neutron::ExtraRoute's physical id, as Heat writes it: "<router>:<destination>:<nexthop>"."""

from __future__ import annotations

import pytest

from stoker.resources.openstack.neutron.extraroute import route_of_id


@pytest.mark.parametrize(
    ("physical_id", "parts"),
    [
        ("r-1:10.0.0.0/24:192.168.1.20", ("r-1", "10.0.0.0/24", "192.168.1.20")),
        # IPv6 addresses hold colons: the destination is what ends in its prefix length.
        ("r-1:2001:db8::/64:2001:db8::1", ("r-1", "2001:db8::/64", "2001:db8::1")),
        ("r-1", None),
        ("r-1:10.0.0.0:192.168.1.20", None),
    ],
)
def test_an_extra_routes_id_is_read_as_heat_writes_it(physical_id, parts):
    assert route_of_id(physical_id) == parts
