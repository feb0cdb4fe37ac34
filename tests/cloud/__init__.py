"""stoker's test cloud: real Keystone, Placement, Neutron, Glance, Cinder and Nova from PyPI,
run on loopback for the tests (the ``openstack_cloud`` fixture) and by hand
(``python -m tests.cloud``). README.md in this folder says how it works and what it needs."""
