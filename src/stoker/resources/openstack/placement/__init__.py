"""Placement: its client plugin and resource types."""
