"""Zun (containers): the ``zun`` client plugin and OS::Zun::Container."""
