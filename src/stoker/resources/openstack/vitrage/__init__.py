"""Vitrage (retired): only Heat's HIDDEN placeholder for its type, no client plugin."""
