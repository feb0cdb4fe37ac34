"""Intrinsic functions: one module per family, versioned tables in ``stoker.template.versions``."""

from stoker.template.functions.base import Function, dependencies, parse, resolve

__all__ = ["Function", "dependencies", "parse", "resolve"]
