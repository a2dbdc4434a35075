"""twin: a personal memory daemon that learns from the owner's sources and recalls by meaning."""

__version__ = "0.1.0"
