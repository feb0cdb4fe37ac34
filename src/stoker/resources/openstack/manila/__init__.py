"""Manila (shared file systems): the ``manila`` client plugin and Heat's OS::Manila::* types,
one module per type."""
