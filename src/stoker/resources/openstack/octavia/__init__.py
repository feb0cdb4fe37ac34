"""Octavia's resource types (``OS::Octavia::*``), one module each, with the ``octavia``
client plugin and Heat's Octavia constraints in ``client_plugin.py``."""
