"""Nova: its client plugin and resource types."""
