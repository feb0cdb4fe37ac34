"""The HOT template language: loading, versions, functions, parameters, definitions."""
