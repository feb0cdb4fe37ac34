"""Barbican (the key manager): its client plugin and resource types."""
