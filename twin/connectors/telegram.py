"""The Telegram connector: the owner chats with the twin (seeds 001, 002, 004; LIBRARY_NOTES §5).

An asyncio task inside the supervisor's loop, on python-telegram-bot's `ExtBot` (its protocol, its errors, its
`AIORateLimiter` for `RetryAfter` and the overall 30/s), with long polling driven here so that the update offset
is a cursor in SQLite (invariant 3): a message is stored (idempotent per update id), answered, then the cursor
moves; a restart neither loses nor re-answers it. Only owners are answered: user ids from
`TWIN_TELEGRAM_ALLOWED_USERS` or paired with `twin telegram pair` (optionally only in
`TWIN_TELEGRAM_ALLOWED_CHATS`), and the people the owner added who paired their account (`twin people pair`),
each in their private chat and as themselves (`PeopleChat`, handed in by `twin up`); anyone else is ignored, one
diary line per stranger per day. Each reply recalls
first (`twin.chat`); each owner message is then queued for `learn()` with source `telegram:<chatId>`. Raised
signals (SQLite, woken by the Redis outbox) are sent to the owner, at most 1 message/s per chat, split at 4096
characters. All store, recall and model work runs on one worker thread with its own SQLite connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Protocol

from redis import Redis
from telegram import Update
from telegram.error import Forbidden, InvalidToken, NetworkError, RetryAfter, TelegramError
from telegram.ext import AIORateLimiter, ExtBot
from telegram.request import HTTPXRequest

from twin import ingest
from twin.activity import Activity
from twin.chat import ChatReply, Conversation, owner_words, paired_owners, relevant_memories
from twin.connectors import stopped_within
from twin.connectors.telegram_message import plain_text, read_message
from twin.ingest import Ingest
from twin.llm.provider import provider_for
from twin.memory import KINDS, format_time, parse_time, utc_now
from twin.namespaces import DEFAULT_NAMESPACE
from twin.redis_client import open_redis
from twin.reflection.hush import project_subject
from twin.store import Store, state
from twin.store import chat as transcript
from twin.store.ids import INTEGER_MAX
from twin.store.people import paired_on_telegram, person_by_id
from twin.store.signals import OWNER_RECIPIENT, Signal, mark_delivered, still_theirs, undelivered
from twin.workers.bus import OUTBOX, Bus
from twin.workers.refusal import paused_since

log = logging.getLogger("twin.telegram")

MAX_MESSAGE_CHARS = 4096  # Bot API limit (LIBRARY_NOTES §5)
CATCH_UP_S = 10.0
"""How long a reply waits for the chat's earlier messages to be learned (ours: the learn worker takes ~0.1 s a
message once up, ~2-5 s to start after a restart on 2 cores)."""
PER_CHAT_INTERVAL_S = 1.0
SIGNAL_RETRY_S = 60.0  # after a failed signal send (ours)  # FloodLimit: 1 message/s per chat (LIBRARY_NOTES §5)
CONNECTOR = "telegram"
PAIR_CODE_TTL_S = 600
MAX_MEMORY_ID = INTEGER_MAX
HELP = """I'm your twin: I remember what you tell me and what I read for you.
Just talk to me, or:
/remember TEXT – remember this now
/recall QUERY – what I remember about it
/forget – forget the memories in my last answer (/forget 12 40 by id)
/memories [kind] – the newest memories
/project [NAME|off] – make a project active: /remember goes into it, /recall looks in it too
/reflect – reflect now
/activity – what I did lately
/quiet [hours] – no signals for a while (/quiet 0 ends it)
/help – this"""


def split_message(text: str, limit: int = MAX_MESSAGE_CHARS) -> list[str]:
    """`text` in pieces of at most `limit` characters, cut at the last newline (else space) of each piece when
    there is one in its second half; never an empty piece."""
    pieces = []
    while len(text) > limit:
        cut = max(text.rfind("\n", limit // 2, limit), text.rfind(" ", limit // 2, limit))
        cut = cut if cut > 0 else limit
        pieces.append(text[:cut])
        text = text[cut:].lstrip("\n ")
    if text:
        pieces.append(text)
    return pieces


def pair_code_hash(code: str) -> str:
    """How a pairing code is kept (only its SHA-256, so the store never holds a usable code)."""
    return hashlib.sha256(code.strip().encode()).hexdigest()


class PeopleChat(Protocol):
    """How the bot talks with the people the owner added (`twin.operations.member_chat.TelegramPeople`, which sits
    above this layer and is handed in by `twin up`): each call runs on the connector's store thread."""

    def pair(self, store: Store, activity: Activity, user_id: int, code: str) -> str | None:
        """Pair `user_id` with the person whose live one-time code is `code`: their name, or None."""

    def is_person(self, store: Store, user_id: int) -> bool:
        """True when `user_id` is a live person's paired account."""

    def reply(self, store: Store, activity: Activity, recall, bus, user_id: int, chat_id: int,
              text: str) -> str | None:
        """The answer to a paired person's `text`, run as that person; None when `user_id` is no live person's."""

    def owner_reach(self, store: Store) -> tuple[tuple[str, ...], str | None, str | None]:
        """The owner's `(reads, write, refusal)`: the stored namespaces the owner's chat recalls from, the one
        `/remember` writes to (None, with `refusal` saying why, when the active project is out of reach)."""

    def owner_project(self, store: Store, activity: Activity, rest: str) -> str:
        """The answer to the owner's `/project [NAME|off]` (lists, activates, deactivates)."""


class TelegramConnector:
    """Runs the bot until `stop` is set. Built by the supervisor with `(settings, store, bus, activity)` and, from
    `twin up`, `people` (`PeopleChat`; None: only owners are answered), which the constructor only stores; `run`
    opens what the bot needs (its one store thread, its own store connection: the supervisor's `store` is not
    shared across threads; the model provider, recall, the outbox client). Its pushes
    never wait for a Redis that refuses writes (`Bus.impatient`): a chat is answered meanwhile, and what it staged
    waits in SQLite for the supervisor to queue it."""

    def __init__(self, settings, store: Store, bus: Bus, activity: Activity, people: PeopleChat | None = None):
        self.settings, self.bus, self.people = settings, bus, people
        self.being = settings.being
        self.work: ThreadPoolExecutor | None = None
        self.store: Store | None = None
        self.activity: Activity | None = None
        self.recall = None
        self.provider = None
        self.outbox: Redis | None = None
        self.last_sent: dict[int, float] = {}
        self.answered = self.queued = 0

    def state(self, store: Store) -> dict:
        """What `twin status` shows of the bot (`twin.connectors.source_state.telegram_state`; read-only)."""
        from twin.connectors.source_state import telegram_state

        return telegram_state(self.settings, store)

    # -- plumbing --------------------------------------------------------------------------------------
    async def _in_store(self, fn, *args):
        """Run `fn(*args)` on the connector's one store thread."""
        return await asyncio.get_running_loop().run_in_executor(self.work, fn, *args)

    def _open(self) -> None:
        from twin.wiring import open_recall  # loads the model: only when the connector runs

        self.store = Store(self.settings.db_path).open()
        self.activity = Activity(self.store, self.being)
        self.provider = provider_for(self.settings, self.store)
        self.recall = open_recall(self.settings, self.store)

    def _close(self) -> None:
        if self.recall is not None:
            self.recall.close()
        if self.provider is not None:
            self.provider.close()
        if self.store is not None:
            self.store.close()

    @staticmethod
    async def _until_stopped(coro, stop: asyncio.Event):
        """Await `coro` unless `stop` is set first (then cancel it and return None)."""
        task = asyncio.ensure_future(coro)
        stopper = asyncio.ensure_future(stop.wait())
        done, _ = await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            stopper.cancel()
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, TelegramError):
            await task
        return None

    async def _pause(self, seconds: float, stop: asyncio.Event) -> None:
        await stopped_within(stop, seconds)

    # -- run ---------------------------------------------------------------------------------------------
    async def run(self, stop: asyncio.Event) -> None:
        """Poll, answer and deliver signals until `stop`; the bot token never reaches a log or diary line."""
        self.work = ThreadPoolExecutor(max_workers=1, thread_name_prefix="telegram-store")
        self.bus = self.bus.impatient()
        # the outbox wake-up gets its own client without retries: a blocking pop must end within ~1 s at a stop
        self.outbox = open_redis(self.settings, connect_timeout_s=2, answer_timeout_s=5)
        await self._in_store(self._open)
        poll_s = self.settings.telegram_poll_timeout_s
        bot = ExtBot(self.settings.telegram_bot_token.get_secret_value(), base_url=self.settings.telegram_base_url,
                     request=HTTPXRequest(connect_timeout=10, read_timeout=20, write_timeout=20),
                     get_updates_request=HTTPXRequest(connect_timeout=10, read_timeout=poll_s + 15),
                     rate_limiter=AIORateLimiter(max_retries=5))
        delivery = None
        try:
            try:
                await bot.initialize()  # getMe: checks the token
            except (InvalidToken, Forbidden) as exc:
                await self._in_store(state.set_time, self.store, CONNECTOR, self.being, "token_refused", utc_now())
                await self._in_store(self.activity.record, "degraded", "Telegram refused the bot token "
                                     f"({type(exc).__name__}); fix TWIN_TELEGRAM_BOT_TOKEN and restart twin.")
                await stop.wait()
                return
            await self._in_store(state.delete, self.store, CONNECTOR, self.being, "token_refused")
            await bot.delete_webhook()
            owners = await self._in_store(self._owners)
            if not owners:
                await self._in_store(self.activity.record, "degraded", "Telegram: no owner yet, so the bot answers "
                                     "no one; run `twin telegram pair` (or set TWIN_TELEGRAM_ALLOWED_USERS).")
            log.info("telegram: polling as @%s for %d owner(s)", bot.username, len(owners))
            delivery = asyncio.create_task(self._deliver_signals(bot, stop), name="telegram-signals")
            await self._poll(bot, stop, poll_s)
        finally:
            if delivery is not None:
                delivery.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await delivery
            with contextlib.suppress(TelegramError, RuntimeError):
                await bot.shutdown()
            if self.activity is not None:
                await self._in_store(self._say_counts)
            await self._in_store(self._close)
            self.work.shutdown(wait=True)
            # self.outbox is not closed here: a blocking pop may still be running in its thread (≤ 1 s); the
            # client closes with the object

    async def _poll(self, bot: ExtBot, stop: asyncio.Event, poll_s: int) -> None:
        backoff_s = 1.0
        while not stop.is_set():
            last = int(await self._in_store(self.store.get_cursor, CONNECTOR, self.being, "update_id") or 0)
            try:
                updates = await self._until_stopped(
                    bot.get_updates(offset=last + 1 if last else None, timeout=poll_s, allowed_updates=["message"]),
                    stop)
            except RetryAfter as exc:
                wait_s = _seconds(exc.retry_after)
                log.warning("telegram: flood control on getUpdates; waiting %.0f s", wait_s)
                await self._pause(wait_s, stop)
                continue
            except NetworkError as exc:  # TimedOut included; the library already retried nothing: we back off
                log.warning("telegram: getUpdates failed (%s); retrying in %.0f s", exc, backoff_s)
                await self._pause(backoff_s, stop)
                backoff_s = min(backoff_s * 2, 60.0)
                continue
            backoff_s = 1.0
            if updates is None:
                return
            for update in updates:
                if not await self._handle_safely(bot, update):
                    await self._pause(backoff_s, stop)  # a transient send failure: this update again, later
                    backoff_s = min(backoff_s * 2, 60.0)
                    break
                await self._in_store(self.store.set_cursor, CONNECTOR, self.being, "update_id", str(update.update_id))
            if not updates:
                await self._in_store(self._push_unlearned)
                await self._in_store(self._say_counts)

    async def _handle_safely(self, bot: ExtBot, update: Update) -> bool:
        """Handle one update; True when its cursor may move. A network failure while answering returns False
        (the update is tried again); anything else — a message no code path expected, a reply Telegram refuses
        for good — is logged with its traceback, answered with an apology when possible, and skipped, so one bad
        message can never stop the bot. A stop waits for the update in hand (the supervisor cancels the connector
        only after `TWIN_STOP_GRACE_S`)."""
        try:
            await self._handle(bot, update)  # not cancelled by a stop: a reply sent must also be recorded
            return True
        except NetworkError as exc:  # TimedOut included; BadRequest and Forbidden are not NetworkErrors
            log.warning("telegram: could not answer update %d (%s); will try again", update.update_id,
                        exc)
            return False
        except Exception as exc:
            log.exception("telegram: update %d could not be handled; skipping it", update.update_id)
            await self._in_store(self.activity.record, "error", "Telegram: a message could not be handled "
                                 f"({type(exc).__name__}); skipped it. The journal has the details.")
            chat = update.effective_chat
            if chat is not None and await self._in_store(self._owner_chat, chat.id):
                with contextlib.suppress(TelegramError):
                    await bot.send_message(chat.id, "Sorry, I could not handle that message.")
            return True

    def _owner_chat(self, chat_id: int) -> bool:
        return chat_id in self._owners() or chat_id in self.settings.telegram_allowed_chats

    # -- who may talk ----------------------------------------------------------------------------------
    def _owners(self) -> set[int]:
        return paired_owners(self.store, CONNECTOR, self.being) | set(self.settings.telegram_allowed_users)

    def _allowed(self, user_id: int, chat_id: int, chat_type: str) -> bool:
        if user_id not in self._owners():
            return False
        if self.settings.telegram_allowed_chats:
            return chat_id in self.settings.telegram_allowed_chats
        return chat_type == "private"

    def _try_pairing(self, user_id: int, text: str) -> bool:
        """`/start CODE` with the unexpired code of `twin telegram pair` makes `user_id` an owner."""
        parts = text.split()
        if len(parts) != 2 or parts[0].split("@")[0] != "/start":
            return False
        code = state.get_json(self.store, CONNECTOR, self.being, "pair_code")
        if not code:
            return False
        if code["sha256"] != pair_code_hash(parts[1]) or parse_time(code["expires_at"]) < datetime.now(UTC):
            return False
        with self.store.atomic():
            transcript.pair_owner(self.store, CONNECTOR, self.being, user_id)
            state.delete(self.store, CONNECTOR, self.being, "pair_code")
        self.activity.record("system", f"Telegram: paired user {user_id} as the owner.")
        return True

    def _is_person(self, user_id: int) -> bool:
        return self.people is not None and self.people.is_person(self.store, user_id)

    def _try_person_pairing(self, user_id: int, text: str) -> str | None:
        """`/start CODE` with a person's live code of `twin people pair`: that person's name (the account is now
        theirs), else None."""
        parts = text.split()
        if self.people is None or len(parts) != 2 or parts[0].split("@")[0] != "/start":
            return None
        return self.people.pair(self.store, self.activity, user_id, parts[1])

    def _person_reply(self, user_id: int, chat_id: int, text: str) -> str | None:
        return self.people.reply(self.store, self.activity, self.recall, self.bus, user_id, chat_id, text)

    async def _answer_person(self, bot: ExtBot, message, user_id: int, chat_id: int) -> None:
        """Answer a paired person in their private chat, as themselves (`PeopleChat.reply`). A forwarded message
        is someone else's words: never run as a command. Their messages are neither kept in the owner's
        transcript nor learned into the owner's twin."""
        text = "" if message.forward_origin is not None else plain_text(message.text)
        reply = await self._in_store(self._person_reply, user_id, chat_id, text or "/help")
        if reply is not None:  # None: removed meanwhile; a stranger from now on
            await self._send(bot, chat_id, reply)

    def _note_stranger(self, user_id: int, chat_id: int) -> None:
        today = utc_now()[:10]
        key = f"stranger:{user_id}"
        if state.get_text(self.store, CONNECTOR, self.being, key) != today:
            state.set_text(self.store, CONNECTOR, self.being, key, today)
            if user_id in self._owners():
                self.activity.record("system", f"Telegram: ignored your message in chat {chat_id}: the twin answers "
                                               "in private chats unless TWIN_TELEGRAM_ALLOWED_CHATS lists the chat.",
                                     subject=f"telegram:{chat_id}")
            else:
                self.activity.record("system", f"Telegram: ignored a message from a stranger (user {user_id}); "
                                               "the twin answers only its owner and the people paired with it.")

    # -- messages ---------------------------------------------------------------------------------------
    async def _handle(self, bot: ExtBot, update: Update) -> None:
        message = update.message
        if message is None or message.from_user is None:
            return
        user_id, chat = message.from_user.id, message.chat
        if not await self._in_store(self._allowed, user_id, chat.id, chat.type):
            if chat.type == "private" and await self._in_store(self._is_person, user_id):
                await self._answer_person(bot, message, user_id, chat.id)
            elif message.forward_origin is None and await self._in_store(self._try_pairing, user_id,
                                                                         plain_text(message.text)):
                await self._send(bot, chat.id, "Paired: I'll answer only you here.\n\n" + HELP)
            elif (chat.type == "private" and message.forward_origin is None
                  and (name := await self._in_store(self._try_person_pairing, user_id, plain_text(message.text)))):
                await self._send(bot, chat.id, f"Paired: I'll answer you here as {name}, with your own memories "
                                               "and the projects shared with you. /help lists what I do.")
            else:
                await self._in_store(self._note_stranger, user_id, chat.id)
            return
        said = read_message(message, await self._in_store(self._owners), bot.id)
        text = said.transcript  # what the reply reads: others' words marked as theirs (`twin.chat.Voice`)
        if not text.strip():
            await self._send(bot, chat.id, "I can only read text for now.")
            return
        conversation = await self._in_store(self._conversation, chat.id)
        row_id, state = await self._in_store(conversation.receive, said.own, update.update_id, not said.is_command,
                                             said.voices)
        if state != "received":
            return  # answered before a restart; `_push_unlearned` sees to its learning
        if said.is_command:  # only the owner's own words: a forwarded or quoted "/forget yes" is data
            reply = await self._in_store(self._command, conversation, said.own)
            await self._send(bot, chat.id, reply.text)
            await self._in_store(conversation.answered, row_id, reply)
            await self._in_store(conversation.learned, row_id)  # commands are not taught
            return
        await self._caught_up(conversation)
        reply = await self._in_store(conversation.reply_to, text)
        await self._send(bot, chat.id, reply.text)
        await self._in_store(self._after_reply, conversation, row_id, reply)

    async def _caught_up(self, conversation: Conversation) -> None:
        """Wait (at most `CATCH_UP_S`) until what the owner said earlier in this chat is learned, so a reply recalls
        it (seed 004: recall wired to the chat): after a restart, messages answered before it may still wait for
        the learn worker. A worker that is down or slow costs one bounded wait, not a lost answer."""
        deadline = time.monotonic() + CATCH_UP_S
        while time.monotonic() < deadline:
            if not await self._in_store(ingest.waiting, self.store, self.being, conversation.source):
                return
            await asyncio.sleep(0.1)
        log.info("telegram: replying before earlier messages of chat %s are learned (the learn worker is slow)",
                  conversation.chat_id)

    def _scope(self, chat_id: int) -> tuple[tuple[str, ...], str | None, str | None]:
        """`(reads, write, refusal)` of the owner's chat `chat_id`: the stored namespaces its replies, `/recall`,
        `/memories` and `/forget` reach, where `/remember` writes, and why `/remember` and `/recall` are refused
        (None: they are not). A chat bound to a project (`twin project bind --telegram-chat`) reaches the project
        alone (`ingest.source_namespace`: the rule its messages are learned by); any other chat the owner's
        user-global memories and their active project (`PeopleChat.owner_reach`: seed 003's union, `/remember`
        into the project), or `default` alone without `people`."""
        source = f"telegram:{chat_id}"
        bound = ingest.source_namespace(self.store, self.being, source)
        if bound != DEFAULT_NAMESPACE or self.people is None:
            return (bound,), bound, None
        return self.people.owner_reach(self.store)

    def _conversation(self, chat_id: int) -> Conversation:
        """The chat's `Conversation`, recalling from what `_scope` reaches; its messages are learned by the
        source's rule (`ingest.bound_namespace`), never into the active project: only `/remember` is."""
        reads, _, _ = self._scope(chat_id)
        return Conversation(self.store, self.being, str(chat_id), self.settings, self.recall, self.provider,
                            source=f"telegram:{chat_id}", namespace=reads[0], include_namespaces=reads[1:])

    def _after_reply(self, conversation: Conversation, row_id: int, reply: ChatReply) -> None:
        """Record the answer and hand the owner's message to `learn()` (seed 001: every turn teaches): its staged
        item is released and queued (if Redis refuses, the supervisor queues it later: it is in SQLite), then
        compact."""
        released = conversation.answered(row_id, reply)
        state.set_text(self.store, CONNECTOR, self.being, "owner_chat", str(conversation.chat_id))
        self.answered += 1
        if released:
            self.bus.push(self.store, released, self.being, "text")
        conversation.learned(row_id)
        self.queued += 1
        self._push_unlearned()
        conversation.compact_if_due()

    def _push_unlearned(self) -> None:
        """Hand to `learn()` the answered owner messages of a twin that kept the whole text in the transcript
        (before staging): staged from their rows (nothing else holds them), then marked learned."""
        for row_id, chat_id, _, text in transcript.answered_owner_rows(self.store, self.being):
            conversation = self._conversation(int(chat_id))
            own = owner_words(text)  # a line someone else wrote is never learned as the owner's
            with self.store.atomic():
                ids = ingest.stage(self.store, [Ingest(self.being, conversation.source, own, "text",
                                                       conversation.message_ref(row_id))] if own.strip() else [])
                conversation.learned(row_id)
            self.bus.push(self.store, ids, self.being, "text")
            self.queued += 1

    def _say_counts(self) -> None:
        if self.answered or self.queued:
            self.activity.record("learned", f"Telegram: answered {self.answered} message(s), "
                                            f"{self.queued} sent to learn.")
            self.answered = self.queued = 0

    # -- commands (run on the store thread) ----------------------------------------------------------------
    def _command(self, conversation: Conversation, text: str) -> ChatReply:
        name, _, rest = text.strip().partition(" ")
        name = name.split("@")[0].lower()
        rest = rest.strip()
        handlers = {"/start": self._help, "/help": self._help, "/remember": self._remember, "/recall": self._recall,
                    "/forget": self._forget, "/memories": self._memories, "/reflect": self._reflect,
                    "/activity": self._activity, "/quiet": self._quiet, "/project": self._project}
        handler = handlers.get(name)
        if handler is None:
            return ChatReply(f"I don't know {name}.\n\n{HELP}")
        return handler(conversation, rest)

    def _help(self, conversation: Conversation, rest: str) -> ChatReply:
        return ChatReply(HELP)

    def _project(self, conversation: Conversation, rest: str) -> ChatReply:
        """The owner's `/project [NAME|off]`: their active project, the one their CLI, API and MCP use too
        (`PeopleChat.owner_project`). A chat bound to a project keeps to that project whatever is active."""
        if ingest.source_namespace(self.store, self.being, conversation.source) != DEFAULT_NAMESPACE:
            return ChatReply("This chat is bound to a project: here I keep to that project alone, whatever is "
                             "active (twin project unbind to change it).")
        if self.people is None:
            return ChatReply("Projects are answered by the daemon that twin up starts.")
        return ChatReply(self.people.owner_project(self.store, self.activity, rest))

    def _remember(self, conversation: Conversation, rest: str) -> ChatReply:
        from twin.learn.learning import as_memories, learn

        if not rest:
            return ChatReply("What should I remember? /remember I'm allergic to penicillin.")
        source = f"telegram:{conversation.chat_id}"
        _, write, refusal = self._scope(int(conversation.chat_id))  # a bound chat's project, else the active one
        if write is None:
            return ChatReply(f"I can't: {refusal}")
        result = learn(self.store, self.activity, self.being, rest, source, provider=self.provider, namespace=write)
        if result.created:
            with contextlib.suppress(Exception):
                self.bus.notify_embed()
        stored = as_memories(self.store, result.created + result.reinforced)
        if not stored:
            return ChatReply("I found nothing to remember in that.")
        lines = "\n".join(f"• #{m.id} {m.content}" for m in stored)
        return ChatReply(f"Remembered:\n{lines}", [m.id for m in stored])

    def _recall(self, conversation: Conversation, rest: str) -> ChatReply:
        if not rest:
            return ChatReply("Recall what? /recall coffee")
        _, _, refusal = self._scope(int(conversation.chat_id))
        if refusal is not None:
            return ChatReply(f"I can't: {refusal}")
        hits = relevant_memories(self.recall, self.being, rest, 10, conversation.namespace,
                                 conversation.include_namespaces)
        if not hits:
            return ChatReply(f"I remember nothing about “{rest}”.")
        return ChatReply("\n".join(f"#{h.memory.id} {h.memory.content}" for h in hits), [h.memory.id for h in hits])

    def _forget(self, conversation: Conversation, rest: str) -> ChatReply:
        from twin.lifecycle.forgetting import forget

        if rest.lower() == "yes":
            ids = state.get_json(self.store, CONNECTOR, self.being, f"forget:{conversation.chat_id}") or []
            if not ids:
                return ChatReply("There is nothing waiting to be forgotten.")
        elif rest:
            try:
                ids = [int(part.lstrip("#")) for part in rest.replace(",", " ").split()]
            except ValueError:
                ids = []
            if not ids or not all(0 < i <= MAX_MEMORY_ID for i in ids):
                return ChatReply("Forget which? /forget 12 40, or /forget to forget what I just showed you.")
        else:
            ids = conversation.last_shown()
            if not ids:
                return ChatReply("My last answer showed no memories. /forget 12 40 forgets by id.")
            shown = self.store.get_many(ids)
            state.set_json(self.store, CONNECTOR, self.being, f"forget:{conversation.chat_id}", ids)
            lines = "\n".join(f"• #{i} {shown[i].content}" for i in ids if i in shown)
            return ChatReply(f"Forget these?\n{lines}\nSend /forget yes to forget them.")
        done = forget(self.store, self.activity, self.being, ids,
                      namespaces=(conversation.namespace, *conversation.include_namespaces))
        gone = [m.id for m in done.memories]
        state.delete(self.store, CONNECTOR, self.being, f"forget:{conversation.chat_id}")
        if gone:
            with contextlib.suppress(Exception):
                self.bus.request_checkpoint()
                self.bus.rewrite_append_only_file()
        missing = sorted(set(ids) - set(gone))
        answer = (f"Forgot {len(gone)} memory(ies): " + ", ".join(f"#{i}" for i in gone) + f". Removed {done.line()}."
                  if gone else "Nothing was forgotten.")
        return ChatReply(answer + (f" No memory {', '.join(f'#{i}' for i in missing)}." if missing else ""))

    def _memories(self, conversation: Conversation, rest: str) -> ChatReply:
        kind = rest.lower() or None
        if kind is not None and kind not in KINDS:
            return ChatReply(f"Kinds are: {', '.join(KINDS)}.")
        memories = self.store.list_memories(self.being, kind=kind, limit=10, include_sensitive=False,
                                            namespaces=(conversation.namespace, *conversation.include_namespaces))
        if not memories:
            return ChatReply("No memories yet.")
        return ChatReply("\n".join(f"#{m.id} {m.kind}: {m.content}" for m in memories), [m.id for m in memories])

    def _reflect(self, conversation: Conversation, rest: str) -> ChatReply:
        from twin.reflection.hush import HushGate, HushRules
        from twin.reflection.second_pass import reflect

        gate = HushGate(self.store, self.being, HushRules.from_settings(self.settings))
        result = reflect(self.store, self.activity, self.being, self.provider, gate, force=True,
                         outbox=lambda signal_id: self.bus.push_signal(signal_id, self.being))
        if not result.ran:
            return ChatReply(f"I didn't reflect: {result.note}.")
        lines = [f"Reflected on {result.new_memories} new memories."]
        lines += [f"• {s['title']} ({'raised' if s['status'] == 'raised' else 'held back: ' + s['reason']})"
                  for s in result.signals]
        if result.thought:
            lines.append(result.thought)
        return ChatReply("\n".join(lines))

    def _activity(self, conversation: Conversation, rest: str) -> ChatReply:
        lines = self.activity.recent(10)
        return ChatReply("\n".join(f"{a.at[11:16]} {a.text}" for a in lines) or "Nothing yet.")

    def _quiet(self, conversation: Conversation, rest: str) -> ChatReply:
        try:
            hours = float(rest.split()[0]) if rest else 8.0
        except ValueError:
            hours = math.nan
        if not math.isfinite(hours) and hours != math.inf:
            return ChatReply("/quiet 3 keeps signals back for 3 hours; /quiet 0 ends it.")
        if hours <= 0:
            state.delete(self.store, CONNECTOR, self.being, "quiet_until")
            return ChatReply("Signals are on again.")
        until = datetime.now(UTC) + timedelta(hours=min(hours, 24 * 30))
        state.set_time(self.store, CONNECTOR, self.being, "quiet_until", format_time(until))
        return ChatReply(f"Quiet until {format_time(until)}; signals wait until then.")

    # -- sending ------------------------------------------------------------------------------------------
    async def _send(self, bot: ExtBot, chat_id: int, text: str) -> None:
        """Send `text` in pieces of ≤ 4096 characters, ≥ 1 s apart per chat; `RetryAfter` is waited out by the
        rate limiter (up to 5 times)."""
        for piece in split_message(text):
            wait = self.last_sent.get(chat_id, 0.0) + PER_CHAT_INTERVAL_S - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                await bot.send_message(chat_id, piece)
            finally:
                self.last_sent[chat_id] = time.monotonic()

    def _signals_due(self) -> list[tuple[Signal, list[int]]]:
        """`(signal, chats)` of every raised, undelivered signal with the chats it goes to: the owner's to the
        owner's chats (none while `/quiet` holds them), and a project member's (issue 19: drawn from a shared
        project, through that member's own Hush gate when it was raised) to the private chat of the Telegram account
        they paired, while they are still a member of that project."""
        due: list[tuple[Signal, list[int]]] = []
        quiet = state.get_time(self.store, CONNECTOR, self.being, "quiet_until")
        if not (quiet and parse_time(quiet) > datetime.now(UTC)):
            chats = list(self.settings.telegram_allowed_chats) or sorted(self._owners())
            due += [(signal, chats) for signal in undelivered(self.store, self.being)] if chats else []
        for person_id, user_id in sorted(paired_on_telegram(self.store).items()):
            due += [(signal, [user_id]) for signal in still_theirs(
                self.store, undelivered(self.store, self.being, recipient=person_id), person_id)]
        return due

    def _delivered(self, signal: Signal) -> None:
        if not mark_delivered(self.store, signal.id, utc_now()):
            return
        if signal.recipient == OWNER_RECIPIENT:
            self.activity.record("signal", f"Sent signal “{signal.title}” on Telegram.")
        else:  # the title came from the project's memories: erasing the project rewrites the line
            person = person_by_id(self.store, signal.recipient)
            name = person.name if person else "a member"
            self.activity.record("signal", f"Sent signal “{signal.title}” to {name} on Telegram.",
                                 subject=project_subject(signal.project_id))

    def _pause_notice(self) -> tuple[str, str | None, list[int]] | None:
        """The notice about learning's pause the owner's chats have not had yet (`twin.workers.refusal.LearningPause`
        keeps the pause in SQLite): `(text, marker, owner chats)`, the marker (the pause's start, None once it
        resumed) saved with `_pause_told` once sent; None when there is nothing new to tell. Once when learning
        pauses, once when it resumes; a pause that ended before it was told is not told."""
        paused = paused_since(self.store, self.being)
        told = state.get_text(self.store, CONNECTOR, self.being, "pause_told")
        chats = sorted(self._owners())
        if paused is not None and told != paused["at"]:
            return (f"⏸ Learning is paused since {paused['at']}: {paused['reason']}. What changes meanwhile waits "
                    "and is learned when Redis takes writes again; I still answer here."), paused["at"], chats
        if paused is None and told is not None:
            return "▶ Learning resumed: Redis takes writes again, and what waited is being learned.", None, chats
        return None

    def _pause_told(self, marker: str | None) -> None:
        if marker is None:
            state.delete(self.store, CONNECTOR, self.being, "pause_told")
        else:
            state.set_text(self.store, CONNECTOR, self.being, "pause_told", marker)

    async def _tell_pause(self, bot: ExtBot) -> None:
        """Send `_pause_notice`, if there is one, to the owner's chats; told once it reached one of them."""
        notice = await self._in_store(self._pause_notice)
        if notice is None:
            return
        reached = 0
        for chat_id in notice[2]:
            try:
                await self._send(bot, chat_id, notice[0])
                reached += 1
            except TelegramError as exc:
                log.warning("telegram: could not tell chat %d about the learning pause (%s)", chat_id, exc)
        if reached:
            await self._in_store(self._pause_told, notice[1])

    async def _deliver_signals(self, bot: ExtBot, stop: asyncio.Event) -> None:
        """Send raised, undelivered signals (`_signals_due`: the owner's and paired project members'; SQLite is the
        truth, the Redis outbox only wakes this up sooner), and tell the owner's chats when learning pauses or
        resumes (`_pause_notice`)."""
        while not stop.is_set():
            due = await self._in_store(self._signals_due)
            await self._tell_pause(bot)
            failed = False
            for signal, chats in due:
                reached = 0
                for chat_id in chats:  # delivered once it reached one owner chat; a chat that refuses is skipped
                    try:
                        await self._send(bot, chat_id, f"💡 {signal.title}\n{signal.body}".strip())
                        reached += 1
                    except TelegramError as exc:
                        failed = True
                        log.warning("telegram: could not send signal #%d to chat %d (%s)", signal.id, chat_id,
                                    exc)
                if reached:
                    await self._in_store(self._delivered, signal)
            if failed:  # back off before trying the rest again
                await self._pause(SIGNAL_RETRY_S, stop)
                continue
            with contextlib.suppress(Exception):  # Redis away: fall back to the pause below
                await self._until_stopped(asyncio.to_thread(self.outbox.blpop, [OUTBOX], 1), stop)
                continue
            await self._pause(1.0, stop)


def _seconds(value: float | timedelta) -> float:
    """A `RetryAfter.retry_after` in seconds (an int today, a `timedelta` in later python-telegram-bot)."""
    return value.total_seconds() if isinstance(value, timedelta) else float(value)
