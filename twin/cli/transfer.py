"""Commands that move memories and the profile in and out: export, import, profile show/edit."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from pathlib import Path

from twin.activity import Activity
from twin.cli.output import emit, show
from twin.cli.queues import reachable_bus
from twin.exceptions import TwinError
from twin.settings import Settings
from twin.store import Store


def cmd_export(settings: Settings, args: argparse.Namespace) -> int:
    """Write the whole twin as JSON lines (`twin.operations.transfer.export_twin`): the people (names, never a
    token), the projects with their members and bound sources, then every memory (all fields, all statuses, every
    scope), oldest first; with `--namespace`, that namespace's memories alone."""
    from twin.operations import Context
    from twin.operations.transfer import export_twin

    with args.output as out:
        if out is sys.stdout:
            _private_stdout()  # a file of -o is made 0600 when opened (`twin.cli.arguments.private_output`)
        ctx = Context.open(settings)
        try:
            n = export_twin(ctx, out, args.namespace)
        finally:
            ctx.close()
    also = "" if args.namespace is not None else (
        f", {n['people']} people, {n['projects']} projects, {n['bindings']} bound sources")
    show(f"exported {n['memories']} memories{also}", file=sys.stderr)
    return 0


def _private_stdout() -> None:
    """`twin export > FILE`: the shell made FILE with the umask's mode (0644 as a rule), readable by others, and an
    export holds every memory, secrets too. A regular file on stdout that others may read is made 0600 (as `-o`
    makes its file), said on stderr; a pipe or a terminal is left alone. Never raises."""
    try:
        fd = sys.stdout.fileno()
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode) and mode & 0o077:
            os.fchmod(fd, 0o600)
            show("note: made the export file on stdout private (mode 0600): it holds every memory", file=sys.stderr)
    except (OSError, ValueError, AttributeError):  # no real file descriptor (a test's stdout), or not ours to change
        pass


def cmd_import(settings: Settings, args: argparse.Namespace) -> int:
    """Read a twin export (`twin.operations.transfer.import_twin`: people, projects, bound sources, then memories
    through the dedup path) or any file of memory lines; every bad line is reported (line number and why) and
    skipped, every good line is imported (`twin.learn.import_lines` has the rules), and a line imported otherwise
    than it says gets a note. A person added needs a new token (`twin people token NAME`), said here. Exit 1 when
    any line was skipped (the good ones are imported all the same)."""
    from twin.learn.import_lines import bounded_lines
    from twin.operations import Context
    from twin.operations.transfer import import_twin

    if args.capture:
        return _capture_import(settings, args)
    with args.input as source:
        ctx = Context.open(settings)
        try:
            report = import_twin(ctx, bounded_lines(source), args.namespace)
        finally:
            ctx.close()
    bus = reachable_bus(settings)
    if bus is not None and report["created"]:
        bus.notify_embed()
    noted = f" ({len(report['notes'])} imported with a note)" if report["notes"] else ""
    if report.get("renumbered"):
        noted += f" ({report['renumbered']} under new ids: theirs are, or were, used here)"
    made = {kind: n["created"] for kind, n in report["records"].items()}
    records = f"; {made['person']} people, {made['project']} projects, {made['binding']} bound sources new" if any(
        n["created"] + n["known"] for n in report["records"].values()) else ""
    show(f"imported {report['created']} new, {report['known']} already known, skipped {report['skipped']}{noted}"
         f"{records}")
    for name in report["tokens_needed"]:
        show(f"  {name} has no token here (an export holds none): give them one with `twin people token {name}`")
    for problem in report["problems"]:
        show(f"  {problem}", file=sys.stderr)
    for note in report["notes"]:
        show(f"  {note} (imported)", file=sys.stderr)
    return 1 if report["skipped"] else 0


def _capture_import(settings: Settings, args: argparse.Namespace) -> int:
    """`twin import --capture`: every fact through capture at its own time (`twin.learn.capture_import`); exit 1
    when a bad line was skipped (the good ones are captured all the same)."""
    from twin.learn.capture_import import capture_import
    from twin.learn.import_lines import bounded_lines

    with args.input as source, Store(settings.db_path) as store:
        report = capture_import(store, Activity(store, settings.being), settings.being, bounded_lines(source),
                                args.namespace)
        if report.updated:  # an updated memory's old wording leaves the database files now
            from twin.lifecycle.forgetting import scrub_if_due

            scrub_if_due(store)
    bus = reachable_bus(settings)
    if bus is not None and (report.created or report.updated):
        bus.notify_embed()
    show(f"captured {report.created} new, {report.deduplicated} already known, {report.updated} updated, "
         f"{report.superseded} superseded, {report.rejected} rejected; skipped {report.skipped} bad")
    for problem in report.problems:
        show(f"  {problem}", file=sys.stderr)
    for note in report.notes:
        show(f"  {note}", file=sys.stderr)
    return 1 if report.skipped else 0


MAX_PROFILE_BYTES = 256 * 1024
"""A hand-edited profile larger than this is refused (4 lists of at most 40 short items fit many times over)."""


def cmd_profile(settings: Settings, args: argparse.Namespace) -> int:
    """Show the profile, or edit it by hand (`edit`: in $VISUAL/$EDITOR, or from `--file`)."""
    from twin.profile import Profile, load_profile, save_profile

    with Store(settings.db_path) as store:
        profile = load_profile(store, settings.being)
        if args.action == "show":
            return emit(args, profile.model_dump(), lambda: show(profile.to_toml(), newlines=True, end=""))
        if args.file is not None:
            with args.file:  # opened by argparse; closed here, not left to the garbage collector
                raw = args.file.read(MAX_PROFILE_BYTES + 1)
        else:
            raw = _edit_text(profile.to_toml(), settings)
        if len(raw) > MAX_PROFILE_BYTES:
            raise TwinError(f"the new profile is larger than {MAX_PROFILE_BYTES} bytes; it was not changed")
        try:
            edited = Profile.from_toml(raw.decode("utf-8"))
        except ValueError as exc:  # UnicodeDecodeError included
            show(f"twin: the profile was not changed: {str(exc).splitlines()[0]}", file=sys.stderr)
            return 1
        if edited == profile:
            show("profile unchanged")
            return 0
        from twin.memory import utc_now

        with store.atomic():
            save_profile(store, settings.being, edited, utc_now())
        Activity(store, settings.being).record("profile", "You edited your profile by hand.")
    show("profile saved")
    return 0


def _edit_text(text: str, settings: Settings) -> bytes:
    """Open `text` in the owner's editor ($VISUAL, $EDITOR, else nano or vi) in a private temporary file in the
    data dir, and return the bytes saved (up to `MAX_PROFILE_BYTES` + 1: the caller refuses more). Raises
    `TwinError` when no editor runs, it fails, or the file it leaves cannot be read."""
    import shlex
    import shutil
    import subprocess
    import tempfile

    from twin.store import private_dir

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or shutil.which("nano") or shutil.which("vi")
    if not editor:
        raise TwinError("no editor found: set $EDITOR, or use `twin profile edit --file FILE`")
    with tempfile.TemporaryDirectory(prefix="profile-", dir=private_dir(settings.data_dir)) as folder:
        path = Path(folder) / "profile.toml"
        path.write_text(text, encoding="utf-8")
        try:
            code = subprocess.call([*shlex.split(editor), str(path)])
        except OSError as exc:
            raise TwinError(f"cannot run the editor {editor!r}: {exc.strerror or exc}") from exc
        if code != 0:
            raise TwinError(f"the editor exited with code {code}; the profile was not changed")
        try:
            with open(path, "rb") as edited:
                return edited.read(MAX_PROFILE_BYTES + 1)
        except OSError as exc:
            raise TwinError(f"the edited profile cannot be read ({exc.strerror or exc}); it was not changed") from exc
