"""Keystone: its client plugin and resource types."""
