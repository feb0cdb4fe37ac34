"""Ironic (bare metal): the ``ironic`` client plugin and Heat's OS::Ironic::Port."""
