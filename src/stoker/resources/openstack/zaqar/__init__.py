"""Zaqar (messaging) resource types, as Heat has them, and the ``zaqar`` client plugin."""
