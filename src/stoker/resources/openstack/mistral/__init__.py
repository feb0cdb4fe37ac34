"""Mistral (workflow service) resource types, as Heat has them, and the ``mistral`` client plugin."""
