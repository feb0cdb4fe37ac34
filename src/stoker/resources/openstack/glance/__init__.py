"""Glance: its client plugin and resource types."""
