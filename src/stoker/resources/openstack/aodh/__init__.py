"""Aodh (alarming) resource types and the ``aodh`` client plugin."""
