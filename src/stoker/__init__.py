"""stoker: a standalone orchestration engine implementing OpenStack Heat's model."""

__version__ = "0.1.0"
