"""Neutron: its client plugin and resource types."""
