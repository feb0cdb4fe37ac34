"""Environments (parameters, parameter_defaults, resource_registry) and the type registry."""
