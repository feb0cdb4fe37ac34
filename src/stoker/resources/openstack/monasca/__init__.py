"""Monasca (retired): only Heat's HIDDEN placeholders for its types, no client plugin."""
