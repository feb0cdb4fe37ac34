"""Swift: its client plugin and resource types (OS::Swift::Container, and the signals over Swift temp URLs)."""
