"""The local HTTP API (seeds 000, 001 and 003's routes): a FastAPI app (`twin.api.app`) served by uvicorn in a
child process of the daemon (`python -m twin.api`), calling `twin.operations` only. Importing this package loads
nothing heavy."""
