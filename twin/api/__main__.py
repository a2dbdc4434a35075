"""`python -m twin.api`: the API server (the supervisor's `api` child; runs alone too)."""

import os
import sys

from twin.api.server import serve
from twin.exceptions import SettingsError
from twin.logs import configure_logging
from twin.settings import load_settings


def main() -> int:
    """Serve the API of the configured twin. Exit 2 on an invalid setting, 1 when the port is taken."""
    os.umask(0o077)
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"twin api: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.secret_values)
    return serve(settings)


if __name__ == "__main__":
    sys.exit(main())
