"""Specific error types of twin's core; each says what happens next."""


class TwinError(Exception):
    """Base class of twin's own errors."""


class SettingsError(TwinError):
    """A setting is invalid; start-up stops with exit code 2 and one line naming the setting."""


class StoreError(TwinError):
    """The SQLite store cannot be opened or migrated (disk full, wrong permissions, newer schema)."""


class EmbedderError(TwinError):
    """The embedding model cannot be loaded or used (missing or altered model file, used before open())."""


class IndexCorrupt(TwinError):
    """The vector index file is missing, stale or corrupt; the caller rebuilds it from SQLite."""


class RedisUnavailable(TwinError):
    """Redis cannot be reached or started; connectors back off, the CLI reports a degraded mode."""
