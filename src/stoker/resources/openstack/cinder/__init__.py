"""Cinder: its client plugin and resource types."""
