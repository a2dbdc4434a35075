"""Commands that run the daemon, a server of it or a piece of its work now: up, mcp, backfill, reflect, dream."""

from __future__ import annotations

import argparse
import sys

from twin.activity import Activity
from twin.cli.output import emit, show
from twin.cli.queues import reachable_bus
from twin.settings import Settings
from twin.store import Store


def cmd_up(settings: Settings, args: argparse.Namespace) -> int:
    """Run the supervisor in the foreground (what systemd runs). The Telegram connector is handed the people's chat
    (`twin.operations.member_chat.TelegramPeople`): the bot answers the people the owner paired, as themselves."""
    import asyncio

    from twin.daemon.supervisor import Supervisor
    from twin.logs import configure_logging

    if args.files:
        settings.files_roots = args.files
    configure_logging(settings.log_level, settings.secret_values)
    return asyncio.run(Supervisor(settings, connector_extras(settings)).run())


def connector_extras(settings: Settings) -> dict[str, dict]:
    """What `twin up` hands a connector besides the registry's arguments: the Telegram connector, when a bot
    token is set, the people's chat (`TelegramPeople`). Without Telegram nothing is imported for it (the
    operations and numpy: +19 MiB of the supervisor's RSS, tests/test_process_weight.py)."""
    if settings.telegram_bot_token is None:
        return {}
    from twin.operations.member_chat import TelegramPeople

    return {"telegram": {"people": TelegramPeople(settings)}}


def cmd_mcp(settings: Settings, args: argparse.Namespace) -> int:
    """Serve twin's memory tools over MCP on stdin/stdout (what a desktop agent host starts: see the README's
    Claude Desktop and Claude Code configurations). stdout carries the protocol alone; logs go to stderr. Calls
    go to the running daemon's API when it answers, else to the store directly (the daemon embeds later)."""
    from twin.mcp_server.server import serve_stdio

    return serve_stdio(settings, bus=lambda: reachable_bus(settings))


def cmd_backfill(settings: Settings, args: argparse.Namespace) -> int:
    """Give every memory a vector of the current embedding model (after switching `embed_backend` or the
    remote model): embedded in batches, saved to SQLite after each (every 200), with a progress line each time.
    Interrupted, it resumes where it stopped when run again. Writes only SQLite: the daemon's embedding worker
    brings its index up to date. Run it with the daemon stopped or already restarted with the new setting."""
    from twin.vectors.backfill import backfill
    from twin.wiring import open_embedder

    with Store(settings.db_path) as store:
        embedder = None
        try:
            if (embedder := open_embedder(settings, store)) is None:
                show("twin: TWIN_EMBED_BACKEND=none: there is no embedding model to backfill with", file=sys.stderr)
                return 1
            pending = store.count_pending_embeddings(embedder.model_id)
            show(f"backfill: {pending} of {store.embedding_count(embedder.model_id) + pending} memories need a "
                  f"vector of {embedder.model_id}", flush=True)
            report = backfill(store, embedder, batch=args.batch, progress=lambda p: show(p.line(), flush=True),
                              activity=Activity(store, settings.being))
        except KeyboardInterrupt:
            show("backfill: interrupted; what was embedded is saved: run `twin backfill` again to resume",
                  file=sys.stderr)
            return 130
        finally:
            if hasattr(embedder, "close"):
                embedder.close()
    show(report.line())
    bus = reachable_bus(settings)
    if bus is not None and report.embedded:
        bus.request_checkpoint()  # a running daemon catches its index up now, not at its next checkpoint
    return 0


def cmd_reflect(settings: Settings, args: argparse.Namespace) -> int:
    """Reflect now (forced: no 3-new-memories gate) and print `{ran, signals, widgets, thought}`."""
    from twin.operations import Context
    from twin.operations.writes import reflect

    ctx = Context.open(settings, bus=lambda: reachable_bus(settings))
    try:
        result = reflect(ctx)
    finally:
        ctx.close()

    def plain() -> None:
        show(f"ran: {str(result.ran).lower()} ({result.new_memories} new memories)"
             + (f"; {result.note}" if result.note else ""))
        for signal in result.signals:
            line = f"signal #{signal['id']} {signal['status']}: {signal['title']}"
            show(line + (f" ({signal['reason']})" if signal["reason"] else ""))
        for widget in result.widgets:
            show(f"widget suggested: {widget['type']} ({widget['reason']})")
        if result.thought:
            show(f"thought: {result.thought}")

    return emit(args, result.model_dump(), plain)


def cmd_dream(settings: Settings, args: argparse.Namespace) -> int:
    """Run seed 003's dream cycle now: merge near-duplicate memories (cosine >= 0.97 and word overlap >= 0.5),
    then link memories that share 3 graph neighbours. Runs here, whether or not the daemon runs: the vectors come
    from SQLite and top-k from the index reader recall uses (the last checkpoint plus an exact search of newer
    vectors), and every write is to SQLite; a running daemon's index writer is then asked to scrub the merged
    memories' vectors, as after `twin forget`."""
    from twin.operations import Context
    from twin.operations.writes import dream_cycle
    from twin.vectors.embedder import model_id_of

    ctx = Context.open(settings, bus=lambda: reachable_bus(settings))
    try:
        model_id = model_id_of(settings)
        vectors = bool(model_id and ctx.store.embedding_dim(model_id))
        result = dream_cycle(ctx, namespace=args.namespace).model_dump()
    finally:
        ctx.close()
    return emit(args, result, lambda: show(
        f"walked {result['walked']} memories, merged {result['merged']}, promoted {result['edgesPromoted']} edges in "
        f"{result['durationMs']} ms" + ("" if vectors else " (no vectors: nothing to merge)")))
