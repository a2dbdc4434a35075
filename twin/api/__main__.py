"""`python -m twin.api`: the API server (the supervisor's `api` child; runs alone too)."""

import os
import sys

from twin.exceptions import SettingsError, TwinError
from twin.logs import configure_logging
from twin.settings import load_settings


def main() -> int:
    """Serve the API of the configured twin. Exit 2 on an invalid setting, 3 (`twin.exceptions.CANNOT_LISTEN`) when the
    port is taken, 1 when the store cannot be opened. The lanes start first, so the recall (the model, the index
    and its check) loads in the read lane while the server's own modules (FastAPI, the routes, the page) are
    imported: ~0.2-0.3 s of the cold start to READY (bench/daemon_rss.py)."""
    os.umask(0o077)
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"twin api: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.secret_values)
    from twin.api.lanes import DaemonBus, Lanes

    lanes = Lanes(settings, DaemonBus(settings))
    try:
        lanes.start(warm=True)
    except TwinError as exc:
        print(f"twin api: {exc}", file=sys.stderr)
        lanes.stop()
        return 1
    from twin.api.server import serve

    return serve(settings, lanes)


if __name__ == "__main__":
    sys.exit(main())
