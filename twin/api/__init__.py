"""The local HTTP API (seeds 000, 001 and 003's routes): a FastAPI app (`twin.api.app`) served by uvicorn in a
child process of the daemon (`python -m twin.api`), calling `twin.operations` only. Importing this package loads
nothing heavy."""

CANNOT_LISTEN = 3
"""`python -m twin.api`'s exit code when its address cannot be bound (1 is any crash, an import error among them):
the supervisor's diary line names the port only for this one."""
