"""The Gmail connector: the owner's mail threads, read-only, into `learn()` (seed 001; LIBRARY_NOTES §4).

Three parts:
- authorisation: `authorize()` runs google-auth-oauthlib's installed-app flow for `twin connect gmail` (the
  owner's own client file, `gmail.readonly`, a local redirect port, PKCE) and saves the token 0600;
  `fresh_credentials()` reloads it, refreshes it when expired and saves it back. `invalid_grant` raises
  `GmailAuthRevoked`: the connector stops syncing, tells the owner once and waits for a new token file;
- fetch (`GmailSync`, blocking, google-api-python-client): a bounded full sync (threads of the last
  `gmail_first_sync_days`, at most `gmail_max_threads`) that starts from `getProfile`'s historyId, then
  incremental syncs with `history.list`; a 404 for an expired historyId is `HistoryExpired`, answered with
  one bounded full sync. Threads come in batches of `BATCH_SIZE` `threads.get(format=full)`, paced to
  `UNITS_PER_MINUTE` of the per-user quota; a part of a batch refused for quota or a server error is fetched
  again on its own with the library's retries (`num_retries`: backoff on 5xx, 429 and rate-limit 403s);
- push (`GmailConnector.sync_once`): each new or changed thread (`twin.connectors.email_text`) goes to the learn
  queue as one `learn_email_threads` item, source `email:<threadId>`, with its label ids and, from one
  `labels.list` per sync that reads threads, their names (what a project's `gmail_label` binding matches); the
  `email_threads` rows and the historyId cursor are written only after the push (invariant 3), so a crash
  re-reads, never skips.

Email text is untrusted data: it reaches a model only fenced by `twin.llm.provider.quote_data` under DATA_RULE.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import httplib2
from google.auth.exceptions import RefreshError, TransportError
from google.auth.transport.requests import Request
from google.oauth2.credentials import Credentials
from google_auth_httplib2 import AuthorizedHttp
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError
from googleapiclient.http import BatchHttpRequest

from twin import ingest
from twin.connectors import OwnStoreConnector, stopped_within
from twin.connectors.email_summary import heuristic_summary
from twin.connectors.email_text import EmailThread, MalformedThread, parse_thread, thread_text
from twin.exceptions import ConnectorAuthFailed
from twin.ingest import Ingest
from twin.memory import utc_now
from twin.outside_text import strip_controls
from twin.store import Store, email_threads, state
from twin.store.project_sources import LABEL_MAX_CHARS
from twin.store.signals import ProposedSignal, record_signal

if TYPE_CHECKING:
    from twin.settings import Settings

log = logging.getLogger(__name__)

CONNECTOR = "gmail"
SCOPES = ["https://www.googleapis.com/auth/gmail.readonly"]
"""Read-only mail (LIBRARY_NOTES §4: `gmail.metadata` cannot read bodies)."""
BATCH_SIZE = 25
"""`threads.get` calls per batch request (Google allows 100 and advises ≤ 50; 25 keeps a batch of big threads
well under the per-user concurrency limit)."""
UNITS_PER_MINUTE = 12_000
"""Quota units a sync spends per minute at most: Gmail allows 15,000 per user per minute (LIBRARY_NOTES §4);
the rest is left to the owner's other mail clients."""
THREAD_GET_UNITS = 10
"""Quota cost of one `threads.get` (Gmail's published cost; `messages.get` is 5)."""
NUM_RETRIES = 5
"""`execute(num_retries=…)`: the library's own exponential backoff on 5xx, 429 and rate-limit 403s."""
LABELS_NUM_RETRIES = 2
"""Retries of `labels.list` (at most about 6 s of backoff): a sync goes on without the names when it fails."""
HTTP_TIMEOUT_S = 60
THREAD_TEXT_CHARS = 12_000
"""A thread's text for the model is cut to this (newest messages kept); the provider cuts it further if its
`llm_max_input_chars` is lower."""
AUTH_RECHECK_S = 5.0
"""While the token is revoked, how often the connector looks for a new token file (no network call)."""


class GmailAuthError(ConnectorAuthFailed):
    """The saved token cannot be used: missing, unreadable or not a token file. The message says what to do.
    `GmailConnector.run` handles it itself (waits for a new token file); raised anywhere else it means "stop and
    tell the owner" (`twin.exceptions.ConnectorAuthFailed`)."""


class GmailAuthRevoked(GmailAuthError):
    """Google refused the refresh token (`invalid_grant`: revoked, expired, or a 7-day "Testing" consent
    screen; LIBRARY_NOTES §4). Only `twin connect gmail` helps; never retried in a loop."""


class HistoryExpired(Exception):
    """`history.list` answered 404: the stored historyId is too old (kept for about a week, sometimes hours)."""


# -- authorisation -------------------------------------------------------------------------------------------
def save_token(path: Path, creds: Credentials) -> None:
    """Write `creds.to_json()` to `path` atomically with mode 0600 (created so, never widened afterwards);
    raises `OSError` if the data dir is not writable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(creds.to_json())
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def authorize(settings: Settings, port: int, open_browser: bool, timeout_s: int,
              say: Callable[[str], None] = print) -> Credentials:
    """`twin connect gmail`: the installed-app flow on `localhost:port` (google-auth-oauthlib; PKCE, offline
    access), then the token saved 0600 at `settings.gmail_token_path`. `say` gets the instructions (the URL to
    open and, for a headless machine, the SSH tunnel to use). Raises `GmailAuthError` for a missing or
    malformed client file, and lets the flow's own errors through (a timeout, a refused consent)."""
    from google_auth_oauthlib.flow import InstalledAppFlow

    secrets = settings.gmail_client_secrets
    if secrets is None:
        raise GmailAuthError("set TWIN_GMAIL_CLIENT_SECRETS (or gmail_client_secrets in twin.toml) to the OAuth "
                             "client file you downloaded from Google Cloud (type: Desktop app)")
    try:
        flow = InstalledAppFlow.from_client_secrets_file(str(secrets), SCOPES)
    except (OSError, ValueError, KeyError) as exc:
        raise GmailAuthError(f"cannot use the OAuth client file {secrets}: {exc}") from exc
    prompt = ("Open this URL in a browser and allow read-only access to your mail:\n{url}\n\n"
              f"On a headless machine, first run on the machine with the browser:  ssh -N -L {port}:localhost:{port} "
              f"<this machine>\nGoogle then sends your browser back to http://localhost:{port}/ and twin takes it "
              f"from there (waiting {timeout_s} s).")
    creds = flow.run_local_server(host="localhost", bind_addr="127.0.0.1", port=port, open_browser=open_browser,
                                  timeout_seconds=timeout_s, authorization_prompt_message=prompt,
                                  success_message="twin may now read your mail. You can close this tab.")
    save_token(settings.gmail_token_path, creds)
    say(f"Saved the Gmail token to {settings.gmail_token_path} (mode 600).")
    return creds


def fresh_credentials(path: Path, token_url: str) -> Credentials:
    """The saved token, refreshed at `token_url` (Google's token endpoint, `gmail_token_url`; google-auth
    ignores the file's own `token_uri`) and saved back when it is expired: the HTTP layer's own refreshes are
    not persisted (LIBRARY_NOTES §4). Raises `GmailAuthError` when the file is missing or not a token,
    `GmailAuthRevoked` when Google refuses the refresh (`invalid_grant` and other non-retryable answers), and
    `TransportError` / a retryable `RefreshError` when the token endpoint is unreachable or failing."""
    try:
        saved = Credentials.from_authorized_user_file(str(path), SCOPES)
    except FileNotFoundError as exc:
        raise GmailAuthError(f"no Gmail token at {path}: run `twin connect gmail`") from exc
    except (OSError, ValueError, AttributeError, TypeError, KeyError) as exc:  # unreadable, not JSON, wrong shape
        raise GmailAuthError(f"the Gmail token at {path} is not usable ({type(exc).__name__}: {exc}): run "
                             "`twin connect gmail`") from exc
    creds = saved.with_token_uri(token_url)
    creds.expiry = saved.expiry  # the copy forgets it, and would pass an expired token as valid
    if creds.valid:
        return creds
    if not creds.refresh_token:
        raise GmailAuthRevoked("the Gmail token has no refresh token")
    try:
        creds.refresh(Request())
    except RefreshError as exc:
        if exc.retryable:  # the token endpoint's 5xx / "temporarily_unavailable": the next poll retries
            raise
        raise GmailAuthRevoked(_refresh_reason(exc)) from exc
    save_token(path, creds)
    return creds


def _refresh_reason(exc: RefreshError) -> str:
    """`invalid_grant: Token has been expired or revoked.` from google-auth's RefreshError arguments."""
    first = exc.args[0] if exc.args else str(exc)
    return str(first).strip()[:200]


# -- fetch -----------------------------------------------------------------------------------------------------
class GmailSync:
    """The Gmail API calls of one sync (blocking; httplib2 is not thread-safe, so one instance per thread).

    `http` is an authorised `httplib2.Http` (see `for_credentials`; an `HttpMockSequence` in tests), `api_url`
    the API root (`https://gmail.googleapis.com/`; a local server in tests): requests and batches both go there.
    The discovery document is the one shipped with the library (no network for it)."""

    def __init__(self, http: httplib2.Http, api_url: str):
        self.api_url = api_url
        self.service = build("gmail", "v1", http=http, static_discovery=True, cache_discovery=False,
                             client_options={"api_endpoint": api_url})
        self.users = self.service.users()

    @classmethod
    def for_credentials(cls, creds: Credentials, api_url: str) -> GmailSync:
        """A sync whose requests carry `creds` (refreshed on a 401 by google-auth-httplib2)."""
        return cls(AuthorizedHttp(creds, http=httplib2.Http(timeout=HTTP_TIMEOUT_S)), api_url)

    def profile(self) -> tuple[str, str]:
        """`(email address lower-cased, current historyId)`. Raises `HttpError`."""
        answer = self.users.getProfile(userId="me").execute(num_retries=NUM_RETRIES)
        return str(answer["emailAddress"]).lower(), str(answer["historyId"])

    def recent_thread_ids(self, days: int, limit: int) -> list[str]:
        """Ids of threads with mail in the last `days` days, newest first, at most `limit` (a bounded full sync).
        Raises `HttpError`."""
        ids: list[str] = []
        token = None
        while len(ids) < limit:
            answer = self.users.threads().list(userId="me", q=f"newer_than:{days}d", pageToken=token,
                                               maxResults=min(500, limit - len(ids))).execute(num_retries=NUM_RETRIES)
            ids.extend(t["id"] for t in answer.get("threads", []))
            token = answer.get("nextPageToken")
            if not token:
                break
        return list(dict.fromkeys(ids))[:limit]

    def labels(self) -> dict[str, str]:
        """The account's labels, system and user, as `{id: name}` (`labels.list`: one call, no paging). A name is
        untrusted text, cleaned as a subject is (controls dropped, whitespace collapsed: `strip_controls`); a label
        without a string id and name, or whose name is empty or longer than `LABEL_MAX_CHARS`, is left out.
        Raises `HttpError`."""
        answer = self.users.labels().list(userId="me").execute(num_retries=LABELS_NUM_RETRIES)
        names: dict[str, str] = {}
        for label in answer.get("labels", []) if isinstance(answer, dict) else []:
            if isinstance(label, dict) and isinstance(label.get("id"), str) and isinstance(label.get("name"), str):
                name = " ".join(strip_controls(label["name"]).split())
                if 0 < len(name) <= LABEL_MAX_CHARS:
                    names[label["id"]] = name
        return names

    def changed_thread_ids(self, start_history_id: str) -> tuple[list[str], str]:
        """Threads with messages added since `start_history_id`, oldest change first, and the historyId to save
        after them. Raises `HistoryExpired` on a 404, `HttpError` otherwise."""
        ids: list[str] = []
        token = None
        latest = start_history_id
        while True:
            try:
                answer = self.users.history().list(userId="me", startHistoryId=start_history_id, pageToken=token,
                                                   historyTypes=["messageAdded"], maxResults=500
                                                   ).execute(num_retries=NUM_RETRIES)
            except HttpError as exc:
                if exc.resp.status == 404:
                    raise HistoryExpired(f"historyId {start_history_id} is no longer kept") from exc
                raise
            for record in answer.get("history", []):
                ids.extend(added["message"]["threadId"] for added in record.get("messagesAdded", [])
                           if isinstance(added.get("message"), dict) and "threadId" in added["message"])
            latest = str(answer.get("historyId", latest))
            token = answer.get("nextPageToken")
            if not token:
                return list(dict.fromkeys(ids)), latest

    def threads(self, thread_ids: list[str]) -> list[dict]:
        """`threads.get(format=full)` for each id, `BATCH_SIZE` per batch request, in the order given. A thread
        gone meanwhile (404) is left out; one refused for quota or a server error is fetched again alone with
        the library's retries. Batches are paced to `UNITS_PER_MINUTE`. Raises `HttpError` when a single fetch
        fails too."""
        found: dict[str, dict] = {}
        again: list[str] = []
        window_start, spent = time.monotonic(), 0

        def collect(request_id: str, response: dict | None, exc: HttpError | None) -> None:
            if exc is None:
                found[request_id] = response
            elif exc.resp.status == 404:
                log.info("gmail: thread %s is gone", request_id)
            else:
                again.append(request_id)

        for start in range(0, len(thread_ids), BATCH_SIZE):
            cost = THREAD_GET_UNITS * len(thread_ids[start:start + BATCH_SIZE])
            if spent + cost > UNITS_PER_MINUTE:  # this minute's share is spent: wait for the next one
                time.sleep(max(0.0, 60.0 - (time.monotonic() - window_start)))
                window_start, spent = time.monotonic(), 0
            spent += cost
            batch = BatchHttpRequest(callback=collect, batch_uri=f"{self.api_url}batch/gmail/v1")
            for thread_id in thread_ids[start:start + BATCH_SIZE]:
                batch.add(self.users.threads().get(userId="me", id=thread_id, format="full"), request_id=thread_id)
            batch.execute()
        for thread_id in again:
            try:
                found[thread_id] = self.users.threads().get(userId="me", id=thread_id, format="full"
                                                            ).execute(num_retries=NUM_RETRIES)
            except HttpError as exc:
                if exc.resp.status != 404:
                    raise
        return [found[t] for t in thread_ids if t in found]

    def close(self) -> None:
        """Close the HTTP connections."""
        self.service.close()


# -- push ------------------------------------------------------------------------------------------------------
@dataclass
class SyncReport:
    """What one sync did: threads read (new / changed), how many need a reply, whether it was a full sync."""

    full: bool = False
    new: int = 0
    updated: int = 0
    needs_reply: int = 0
    skipped: list[str] = field(default_factory=list)

    def line(self) -> str:
        """The diary line (seed 001): "Read 3 new email thread(s); 1 needs a reply."."""
        text = f"Read {self.new} new email thread(s)"
        if self.updated:
            text += f" and {self.updated} updated one(s)"
        if self.needs_reply:
            text += f"; {self.needs_reply} {'needs' if self.needs_reply == 1 else 'need'} a reply"
        if self.skipped:
            text += f"; skipped {len(self.skipped)} that could not be read"
        return text + "."


def thread_item(being: str, thread: EmailThread, label_names: Mapping[str, str] | None = None) -> Ingest:
    """The ingest item for one thread (source `email:<thread id>`): its `text` is what a model reads, its
    `extra.summary` what the offline extractor reads (seed 001: a sync without a model uses its heuristic),
    `extra.labels` its Gmail label ids and `extra.label_names` the names `label_names` (`GmailSync.labels`:
    `{id: name}`) gives them, in the ids' order, ids without a name left out: what a project's `gmail_label`
    binding matches (`twin.ingest.bound_namespace`, applied by `twin.ingest.stage`). Pure."""
    names = [label_names[i] for i in thread.labels if i in label_names] if label_names else []
    return Ingest(being, f"email:{thread.thread_id}", thread_text(thread, THREAD_TEXT_CHARS), "email",
                  extra={"summary": heuristic_summary(thread), "labels": list(thread.labels), "label_names": names})


class GmailConnector(OwnStoreConnector):
    """Polls Gmail every `gmail_poll_s` while the daemon runs, once a token file exists. The constructor only
    stores what it is given; `open()` (which `run` calls) opens a store connection of the connector's own
    (`OwnStoreConnector`: its syncs run in worker threads and hold transactions), closed when `run` returns or by
    `close()`."""

    labels_failing = False
    """Whether the last `labels.list` failed (one log line when that starts, one when it ends)."""

    def state(self, store: Store) -> dict:
        """What `twin status` shows of Gmail (`twin.connectors.source_state.gmail_state`; read-only)."""
        from twin.connectors.source_state import gmail_state

        return gmail_state(self.settings, store)

    async def run(self, stop: asyncio.Event) -> None:
        """Open, sync, then wait `gmail_poll_s`, until `stop`; close. A revoked token pauses syncing until the
        token file changes (a new `twin connect gmail`); any other failure is logged (diary line once per kind)
        and the next poll tries again. Without a token file yet, it waits for `twin connect gmail` to write one."""
        self.open()
        try:
            await self._poll(stop)
        finally:
            self.close()

    async def _poll(self, stop: asyncio.Event) -> None:
        if not self.settings.gmail_token_path.exists():
            await self._wait_for_new_token(stop)
        while not stop.is_set():
            delay = self.settings.gmail_poll_s
            try:
                report = await asyncio.to_thread(self.sync_once)
                self._recovered()
                log.log(logging.INFO if report.new or report.updated else logging.DEBUG, "gmail: %s", report.line())
            except GmailAuthError as exc:
                await asyncio.to_thread(self._auth_failed, exc)
                await self._wait_for_new_token(stop)
                continue
            except Exception as exc:  # noqa: BLE001 - the network, the API or Redis: log it, try at the next poll
                log.warning("gmail: sync failed (%s: %s); trying again in %.0f s", type(exc).__name__, exc, delay)
                self._failed(f"{type(exc).__name__}: {_short(exc)}")
            await stopped_within(stop, delay)

    def _failed(self, reason: str) -> None:
        """Note a failed sync in the `sync_error` cursor (`twin status` shows it until a sync works), with one
        diary line per kind of failure (a restart does not repeat it)."""
        noted = state.get_json(self.store, CONNECTOR, self.being, "sync_error") or {}
        if noted.get("reason", "").split(":", 1)[0] == reason.split(":", 1)[0]:
            return
        self.activity.record("error", f"Gmail sync failed ({reason}); trying again every "
                                      f"{self.settings.gmail_poll_s:.0f} s.")
        state.set_json(self.store, CONNECTOR, self.being, "sync_error", {"at": utc_now(), "reason": reason})

    def _recovered(self) -> None:
        """A sync worked: clear what `_failed` and `_auth_failed` left (also across a restart)."""
        if state.is_set(self.store, CONNECTOR, self.being, "sync_error"):
            self.activity.record("read_email", "Gmail sync works again.")
        for key in ("sync_error", "auth_error"):
            state.delete(self.store, CONNECTOR, self.being, key)

    def _auth_failed(self, exc: GmailAuthError) -> None:
        """Say once (diary, and Telegram through the signal outbox when configured) that Gmail needs a new
        `twin connect gmail`; `twin status` shows it from the `auth_error` cursor."""
        if state.is_set(self.store, CONNECTOR, self.being, "auth_error"):
            return
        revoked = isinstance(exc, GmailAuthRevoked)
        detail = f"Google refused the saved token ({exc})" if revoked else str(exc)
        state.set_json(self.store, CONNECTOR, self.being, "auth_error", {"at": utc_now(), "reason": detail})
        self.activity.record("degraded", f"Gmail stopped: {detail}. Run `twin connect gmail` to sign in again.")
        if revoked:
            notice = ProposedSignal(kind="reminder", title="Gmail needs you to sign in again",
                                    body="Google no longer accepts twin's Gmail token, so mail is not being read. "
                                         "Run `twin connect gmail` on your workstation.", priority=1.0)
            signal_id = record_signal(self.store, self.being, notice, "raised", None, utc_now())
            with contextlib.suppress(Exception):  # Redis away: the signal is in SQLite and is sent anyway
                self.bus.push_signal(signal_id, self.being)

    async def _wait_for_new_token(self, stop: asyncio.Event) -> None:
        path = self.settings.gmail_token_path
        before = _token_state(path)
        while not stop.is_set() and _token_state(path) == before:
            await stopped_within(stop, AUTH_RECHECK_S)
        if not stop.is_set() and state.is_set(self.store, CONNECTOR, self.being, "auth_error"):
            state.delete(self.store, CONNECTOR, self.being, "auth_error")
            self.activity.record("read_email", "Found a new Gmail token; syncing again.")

    def sync_once(self) -> SyncReport:
        """One sync (blocking; after `open()`): full when there is no historyId (or it expired), else incremental;
        stage the new and changed threads for learning in the transaction that saves their rows and the historyId,
        then queue them (a Redis that refuses leaves them waiting in SQLite). Raises `GmailAuthError`, `HttpError`,
        transport errors and store errors; nothing is saved unless everything was staged."""
        creds = fresh_credentials(self.settings.gmail_token_path, self.settings.gmail_token_url)
        sync = GmailSync.for_credentials(creds, self.settings.gmail_api_url)
        try:
            return self._sync(sync)
        except RefreshError as exc:  # the HTTP layer's own refresh, after a 401
            if exc.retryable:
                raise
            raise GmailAuthRevoked(_refresh_reason(exc)) from exc
        finally:
            sync.close()

    def _sync(self, sync: GmailSync) -> SyncReport:
        report = SyncReport()
        address, profile_history = sync.profile()
        history_id = self.store.get_cursor(CONNECTOR, self.being, "history_id")
        if history_id is not None:
            try:
                thread_ids, new_history = sync.changed_thread_ids(history_id)
            except HistoryExpired:
                self.activity.record("read_email", f"Gmail no longer keeps the changes since the last sync; reading "
                                                   f"the last {self.settings.gmail_first_sync_days} days again.")
                history_id = None
        if history_id is None:
            report.full = True
            new_history = profile_history  # taken before listing: nothing that arrives meanwhile is missed
            thread_ids = sync.recent_thread_ids(self.settings.gmail_first_sync_days, self.settings.gmail_max_threads)
        threads = self._changed(sync.threads(thread_ids), address, report)
        names = self._label_names(sync) if threads else {}
        now = utc_now()
        with self.store.atomic():  # the threads are handed over with the cursor that moves past them
            ids = ingest.stage(self.store, [thread_item(self.being, t, names) for t in threads])
            for thread in threads:
                self._save_thread(thread, now)
            self.store.set_cursor(CONNECTOR, self.being, "history_id", new_history)
            state.set_text(self.store, CONNECTOR, self.being, "address", address)
            state.set_time(self.store, CONNECTOR, self.being, "last_sync", now)
        if ids:
            self.bus.push(self.store, ids, self.being, "email")  # refused: they wait in SQLite, queued later
        if threads or report.skipped:
            self.activity.record("read_email", report.line())
        return report

    def _label_names(self, sync: GmailSync) -> dict[str, str]:
        """`sync.labels()`, or `{}` when Gmail or the network refuses it: the sync goes on and its threads carry
        their label ids alone (a binding by id still matches; a thread of a label bound by name is learned
        where it was until it changes and a later sync names it).
        Logs when that starts and when it ends; an auth failure (`RefreshError`) is raised, as every call's."""
        try:
            names = sync.labels()
        except (HttpError, TransportError, httplib2.HttpLib2Error, OSError) as exc:
            if not self.labels_failing:
                log.warning("gmail: could not list the labels (%s); threads carry their label ids alone until it "
                            "works", _short(exc))
            self.labels_failing = True
            return {}
        if self.labels_failing:
            log.info("gmail: listed the labels again")
        self.labels_failing = False
        return names

    def _changed(self, raw_threads: list[dict], address: str, report: SyncReport) -> list[EmailThread]:
        """Parse threads; keep those whose newest message is not the one already learned."""
        ids = [raw["id"] for raw in raw_threads if isinstance(raw, dict) and isinstance(raw.get("id"), str)]
        known = email_threads.last_message_ids(self.store, self.being, ids)  # the threads in hand, not all
        changed = []
        for raw in raw_threads:
            try:
                thread = parse_thread(raw, {address}, self.settings.gmail_skip_labels)
            except MalformedThread as exc:
                log.warning("gmail: skipped a thread the API sent malformed (%s)", exc)
                report.skipped.append(str(raw.get("id") if isinstance(raw, dict) else "?"))
                continue
            except Exception:  # mail is untrusted input: one thread that breaks the parser must not stop the sync
                log.exception("gmail: skipped a thread that could not be read")
                report.skipped.append(str(raw.get("id") if isinstance(raw, dict) else "?"))
                continue
            if thread is None or known.get(thread.thread_id) == thread.messages[-1].message_id:
                continue
            changed.append(thread)
            if thread.thread_id in known:
                report.updated += 1
            else:
                report.new += 1
            report.needs_reply += thread.needs_reply
        return changed

    def _save_thread(self, thread: EmailThread, now: str) -> None:
        last = thread.messages[-1]
        email_threads.save(self.store, self.being, email_threads.ThreadRow(
            thread.thread_id, thread.subject, last.message_id, "Owner" if last.from_owner else last.sender_name,
            last.sent_at, len(thread.messages), int(thread.needs_reply), thread.reply_reason), now)


def _token_state(path: Path) -> tuple[int, int, int] | None:
    """What changes when the token file is rewritten, replaced or chmod-ed: `(inode, mtime ns, ctime ns)`."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_ctime_ns


def _short(exc: BaseException) -> str:
    """An error for the diary: its first line, at most 160 characters (an HttpError carries the URL)."""
    if isinstance(exc, HttpError):
        return f"HTTP {exc.resp.status} {exc.resp.reason}"[:160]
    if isinstance(exc, TransportError | httplib2.HttpLib2Error | OSError):
        return str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
    return (str(exc).splitlines() or [""])[0][:160]
