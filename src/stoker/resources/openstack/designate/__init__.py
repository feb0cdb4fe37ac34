"""Designate (DNS as a service): the ``designate`` client plugin and Heat's OS::Designate::*
types, one module per type."""
