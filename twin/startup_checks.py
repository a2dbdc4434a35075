"""What every entry point (the CLI, the workers, the daemon) checks before it runs, with one line per problem.

- twin's own data, config and runtime dirs are made 0700 when other users may read or enter them (DESIGN.md
  invariant 8: a dir made 0755 by hand, or by an older twin, is fixed by any command, not only `twin up`);
- the env file and the config file are reported when other users may read them (`exposed_secret_files`): they
  hold secrets, and twin does not chmod a file the owner wrote;
- a `TWIN_…` variable (in the environment or the env file) that is no setting is reported with the closest
  setting's name, as an unknown key in twin.toml is refused: a typo must not be silently ignored.

The CLI prints the lines to stderr once per command; the workers log them; the daemon writes them to the diary.
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from dotenv import dotenv_values

from twin.settings import ENV_PREFIX, Settings, env_file_path, exposed_secret_files

SELECTORS = ("CONFIG", "ENV_FILE")
"""`TWIN_…` variables that say where settings are read from (`twin.settings`), not settings themselves."""


def own_dirs(settings: Settings) -> tuple[Path, ...]:
    """twin's own directories: data, config and runtime (in that order, duplicates dropped)."""
    return tuple(dict.fromkeys((settings.data_dir, settings.config_dir, settings.runtime_dir)))


def secure_own_dirs(settings: Settings) -> list[str]:
    """Make each of `own_dirs` that exists 0700 when its mode lets other users in (mode & 0o077); a missing one is
    left to be created 0700 when it is needed (`twin.store.private_dir`). Returns one line per dir that stays
    open to others (another user's, or the chmod refused); never raises for a dir's sake."""
    problems = []
    for path in own_dirs(settings):
        try:
            st = path.stat()
        except OSError:
            continue
        mode = stat.S_IMODE(st.st_mode)
        if not stat.S_ISDIR(st.st_mode) or not mode & 0o077:
            continue
        try:
            os.chmod(path, 0o700)
        except OSError as exc:
            problems.append(f"{path} is open to other users (mode {mode:o}) and could not be made private "
                            f"({exc.strerror or exc}); run chmod 700 on it.")
    return problems


def unknown_variables(environ: Mapping[str, str] | None = None, env_file: Path | None = None) -> list[str]:
    """One line per `TWIN_…` name in `environ` (default `os.environ`) or in the env file (default
    `twin.settings.env_file_path()`; read with python-dotenv, as pydantic-settings does) that is no setting,
    naming the closest setting when one is near (difflib ratio >= 0.6): "TWIN_FILES_ROOT is not a setting of
    twin and is ignored (did you mean TWIN_FILES_ROOTS?)." Names are case-insensitive, as the settings read them."""
    environ = os.environ if environ is None else environ
    path = env_file_path() if env_file is None else env_file
    try:
        from_file = list(dotenv_values(path)) if path.is_file() else []
    except (OSError, UnicodeDecodeError):
        from_file = []  # load_settings reports an unreadable env file with its reason
    known = [f"{ENV_PREFIX}{name.upper()}" for name in Settings.model_fields]
    allowed = set(known) | {ENV_PREFIX + s for s in SELECTORS}
    lines = []
    for name in dict.fromkeys([*environ, *from_file]):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or upper in allowed:
            continue
        close = difflib.get_close_matches(upper, known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else " (see config/twin.example.toml)"
        where = "" if name in environ else f" in {path}"
        lines.append(f"{name}{where} is not a setting of twin and is ignored{hint}.")
    return lines


def startup_warnings(settings: Settings) -> list[str]:
    """Run every check of this module (dirs tightened first) and return its lines, in order: dirs, secret files,
    unknown variables. Costs a few `stat` calls and one read of the env file."""
    lines = secure_own_dirs(settings)
    lines += [f"{exposed} is readable by other users; run chmod 600 on it."
              for exposed in exposed_secret_files(settings.redis_tls_key_file)]
    return lines + unknown_variables()
