"""Blazar (reservations): the ``blazar`` client plugin, OS::Blazar::Host and OS::Blazar::Lease."""
