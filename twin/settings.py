"""Settings: `TWIN_…` environment variables, an env file for secrets, and the TOML config file.

Precedence, highest first: init arguments, environment (`TWIN_…`), the env file
(`~/.config/twin/env`, for secrets), the TOML file (`~/.config/twin/twin.toml`, or `TWIN_CONFIG`),
then the defaults below. Paths follow XDG (DESIGN.md "Running it"). Every default states its unit
and where it comes from; `config/twin.example.toml` documents each one for owners.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import unquote, urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from twin.exceptions import SettingsError
from twin.weights import RECALL_WEIGHTS

ENV_PREFIX = "TWIN_"
SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
"""Settings whose values are secrets: an error about one never repeats its value."""
DEFAULT_FILES_IGNORE = ("LICENSE*", "LICENCE*", "COPYING*", "copyright", "changelog*", "ChangeLog*", "CHANGELOG*",
                        "*.lock", "Makefile", "makefile", "GNUmakefile", "Dockerfile", "Containerfile", "Vagrantfile",
                        "Jenkinsfile", "Rakefile", "Gemfile", "Justfile", "justfile", "Procfile")
"""File names the files connector does not read by default (case-sensitive `fnmatch` globs): licence texts and
changelogs are boilerplate, extensionless build files are code; each is counted as "ignored name" in the scan's
diary line."""


def _xdg(var: str, fallback: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value else Path.home() / fallback


def default_config_dir() -> Path:
    """`$XDG_CONFIG_HOME/twin`, else `~/.config/twin`."""
    return _xdg("XDG_CONFIG_HOME", ".config") / "twin"


def default_data_dir() -> Path:
    """`$XDG_DATA_HOME/twin`, else `~/.local/share/twin`: the SQLite store, index and Redis AOF."""
    return _xdg("XDG_DATA_HOME", ".local/share") / "twin"


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/twin`, else `~/.cache/twin`: what twin can make again (the optimised local model)."""
    return _xdg("XDG_CACHE_HOME", ".cache") / "twin"


def default_runtime_dir() -> Path:
    """`$XDG_RUNTIME_DIR/twin`, else `<data dir>/run`: the private Redis socket and the pid file."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return Path(runtime) / "twin" if runtime else default_data_dir() / "run"


def _config_dir() -> Path:
    """Where the env file and `twin.toml` are looked for: `TWIN_CONFIG_DIR` when set in the environment (the
    setting `config_dir` moves them with the token, as a second twin on one machine needs), else
    `default_config_dir()`."""
    explicit = os.environ.get(f"{ENV_PREFIX}CONFIG_DIR")
    return Path(explicit).expanduser() if explicit else default_config_dir()


def env_file_path() -> Path:
    """The env file for secrets: `TWIN_ENV_FILE` if set, else `<config dir>/env` (may not exist)."""
    explicit = os.environ.get(f"{ENV_PREFIX}ENV_FILE")
    return Path(explicit).expanduser() if explicit else _config_dir() / "env"


def exposed_secret_files(*more: Path | None) -> list[str]:
    """The env file, the config file and each of `more` that is not None (the Redis client key), when they exist and
    other users may read them (mode & 0o077): secrets are never world-readable (invariant 8). Each entry names the
    file and its mode."""
    exposed = []
    for path in (env_file_path(), config_file_path(), *[p for p in more if p is not None]):
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            continue
        if mode & 0o077:
            exposed.append(f"{path} (mode {mode:o})")
    return exposed


def config_file_path() -> Path:
    """The TOML config file: `TWIN_CONFIG` if set, else `<config dir>/twin.toml` (may not exist)."""
    explicit = os.environ.get(f"{ENV_PREFIX}CONFIG")
    return Path(explicit).expanduser() if explicit else _config_dir() / "twin.toml"


class Settings(BaseSettings):
    """Every setting of twin, validated at start-up.

    Raises `pydantic.ValidationError` on construction with a bad value; entry points use
    `load_settings()`, which turns that into one `SettingsError` line.
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, extra="ignore", env_file_encoding="utf-8", validate_default=True,
        allow_inf_nan=False,  # "nan" is not a number of seconds: said so, not as a range (a breaker run)
    )

    # -- identity and paths --------------------------------------------------------------
    being: str = Field("owner", min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$",
                       description="The being whose memories this daemon keeps.")
    config_dir: Path = Field(default_factory=default_config_dir)
    data_dir: Path = Field(default_factory=default_data_dir)
    runtime_dir: Path = Field(default_factory=default_runtime_dir)
    cache_dir: Path = Field(default_factory=default_cache_dir, description="Files twin can make again (the "
                            "local model as onnxruntime optimises it, ~90 MB); deleting it costs the next start ~1 s.")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    # -- Redis (the bus) -------------------------------------------------------------------
    redis_url: str | None = Field(None, description="External Redis; unset = start a private redis-server.")
    redis_server_bin: str = "redis-server"
    redis_username: str | None = Field(None, min_length=1, max_length=128, pattern=r"^[^\s@:/]+$",
                                       description="ACL user for an external Redis (`ACL SETUSER`); unset = default.")
    redis_password: SecretStr | None = Field(None, description="Its password: in the env file (mode 0600) or the "
                                             "environment as TWIN_REDIS_PASSWORD, never in twin.toml; never logged.")
    redis_tls_ca_file: Path | None = Field(None, description="CA bundle that signed a rediss:// server's "
                                           "certificate; unset = the system's trusted CAs.")
    redis_tls_cert_file: Path | None = Field(None, description="Client certificate for a rediss:// server that "
                                             "asks for one (tls-auth-clients); with redis_tls_key_file.")
    redis_tls_key_file: Path | None = Field(None, description="The client certificate's private key (mode 0600).")
    redis_allow_plaintext: bool = Field(False, description="Allow a plain redis:// URL to a host that is not "
                                        "loopback (credentials and job ids then cross the network unencrypted).")

    # -- model provider: one OpenAI-compatible endpoint (OpenRouter, OpenAI, Ollama, llama.cpp) --------
    # Unset base URL = no provider: offline extraction, no reflection (seed 001: degrade, never fail).
    llm_base_url: str | None = Field(None, description="e.g. https://openrouter.ai/api/v1 or http://127.0.0.1:11434/v1")
    llm_api_key: SecretStr | None = Field(None, description="Put it in the env file as TWIN_LLM_API_KEY; never logged.")
    llm_model_cheap: str = Field("openai/gpt-4o-mini", min_length=1,
                                 description="The `cheap` tier: extraction and reflection (seed 000/001).")
    llm_model_embed: str = Field("text-embedding-3-small", min_length=1,
                                 description="The `embed` tier, used when TWIN_EMBED_BACKEND=openai.")
    llm_timeout_s: float = Field(60.0, gt=0, le=600, description="Per HTTP request to the provider, seconds.")
    llm_max_retries: int = Field(2, ge=0, le=10, description="Retries (with jitter) on 429, 5xx and timeouts.")
    llm_daily_calls: int = Field(500, ge=0, description="Model calls per UTC day; 0 = no limit. Beyond it: offline.")
    llm_max_input_chars: int = Field(12_000, ge=1000, le=200_000,
                                     description="Text sent per extraction call; longer text is cut.")

    # -- reflection and the Hush gate (seed 001) ------------------------------------------------------
    tick_s: float = Field(600.0, ge=5, le=86400, description="Reflection tick (seed 001: TWIN_TICK_MS 600000).")
    reflect_first_after_s: float = Field(20.0, ge=0, le=3600, description="The early pass after boot (seed 001).")
    reflect_min_new: int = Field(3, ge=1, le=1000, description="New memories needed before a model call (seed 001).")
    # -- memory lifecycle (seed 003: decay every 6 h, a daily dream cycle) -----------------------------------
    decay_every_s: float = Field(21600.0, ge=60, le=7 * 86400, description="Warm/cold decay pass (seed 003: 6 h).")
    dream_every_s: float = Field(86400.0, ge=600, le=30 * 86400, description="Dream cycle (seed 003: daily).")
    hush_quiet_start: str = Field("22:00", pattern=r"^([01]\d|2[0-3]):[0-5]\d$", description="Local time, HH:MM.")
    hush_quiet_end: str = Field("08:00", pattern=r"^([01]\d|2[0-3]):[0-5]\d$", description="Local time, HH:MM.")
    hush_timezone: str | None = Field(None, description="IANA zone of the owner, e.g. Europe/Berlin; unset = system.")
    hush_daily_ceiling: int = Field(3, ge=0, le=100, description="Signals raised per local day at most.")
    hush_dedup_days: float = Field(7.0, ge=0, le=365, description="No signal like one raised this recently (seed 001).")

    # -- Telegram: the owner's chat with the twin (seeds 001, 002, 004; LIBRARY_NOTES §5) ---------------
    telegram_bot_token: SecretStr | None = Field(None, description="From @BotFather; put it in the env file as "
                                                 "TWIN_TELEGRAM_BOT_TOKEN. Unset = no Telegram connector.")
    telegram_allowed_users: Annotated[list[int], NoDecode] = Field(
        default_factory=list, description="Telegram user ids the twin answers (besides `twin telegram pair`).")
    telegram_allowed_chats: Annotated[list[int], NoDecode] = Field(
        default_factory=list, description="Chat ids the twin answers in; empty = the owners' private chats.")
    telegram_base_url: str = Field("https://api.telegram.org/bot", description="Bot API base (a local server).")
    telegram_poll_timeout_s: int = Field(30, ge=0, le=50, description="getUpdates long-poll, seconds.")
    chat_working_messages: int = Field(20, ge=1, le=200, description="Working memory (seed 002: last 20).")
    chat_compact_after: int = Field(50, ge=10, le=10_000, description="Compaction threshold (seed 002: 50).")
    chat_keep_recent: int = Field(10, ge=1, le=1000, description="Messages kept as they are (seed 002: 10).")
    chat_recall_limit: int = Field(5, ge=1, le=20, description="Memories recalled into each reply (seed 002: 5-10).")

    # -- Gmail connector (LIBRARY_NOTES §4): on once `twin connect gmail` saved a token -----------------
    gmail_client_secrets: Path | None = Field(None, description="The OAuth client file (Desktop app) downloaded from "
                                              "Google Cloud, for `twin connect gmail`.")
    gmail_api_url: str = Field("https://gmail.googleapis.com/", description="Gmail API root (a local server in tests).")
    gmail_token_url: str = Field("https://oauth2.googleapis.com/token",
                                 description="Google's OAuth token endpoint, where the token is refreshed.")
    gmail_poll_s: float = Field(90.0, ge=10, le=86400, description="Seconds between syncs (LIBRARY_NOTES §4: 60-120).")
    gmail_first_sync_days: int = Field(30, ge=1, le=3650, description="How far back a full sync reads, days.")
    gmail_max_threads: int = Field(500, ge=1, le=100_000, description="Threads read by one full sync at most.")
    gmail_skip_labels: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["SPAM", "TRASH", "DRAFT", "CATEGORY_PROMOTIONS"],
        description="Messages with any of these Gmail label ids (not names) are never read.")

    # -- browser history connector (seed 001; LIBRARY_NOTES §6) -------------------------------------------
    browser_enabled: bool = Field(True, description="Read Chrome/Chromium/Brave/Edge/Vivaldi/Firefox history.")
    browser_interval_s: float = Field(86400.0, ge=60, description="At most one import this often (seed 001: 24 h).")
    browser_first_days: int = Field(7, ge=1, le=365, description="How far back the first import of a profile reads.")
    browser_max_visits: int = Field(5000, ge=10, le=100_000, description="Visits read per profile per import.")
    browser_deny: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="More URL globs never learned (matched on host + path, case-insensitive).")

    # -- embedding (seed 000 batching; LIBRARY_NOTES §8) -----------------------------------
    embed_backend: Literal["local", "multilingual", "openai", "none"] = "local"
    embed_threads: int = Field(0, ge=0, le=64, description="onnxruntime intra-op threads; 0 = min(4, cores).")
    embed_batch_max: int = Field(96, ge=1, le=1024, description="Memories per embedding call (seed 000: 96).")
    embed_flush_delay_s: float = Field(0.6, ge=0, le=60, description="Flush delay after the first pending memory.")
    embed_reschedule_s: float = Field(0.2, ge=0, le=60, description="Pause between flushes while more remain.")
    embed_rest_s: float = Field(300.0, ge=0, le=86400, description=(
        "Seconds without an embedding job after which the embedding worker lets go of the model and its copy of "
        "the index, checkpointed first, until the next job (~270 MiB at 100k memories: bench/daemon_rss.py); "
        "0 keeps them."))

    # -- index (LIBRARY_NOTES §2) ----------------------------------------------------------
    index_m: int = Field(16, ge=4, le=64)
    index_ef_construction: int = Field(200, ge=16, le=2000)
    index_ef_search: int = Field(64, ge=64, le=2000, description="Query ef; hnswlib's default of 10 misses too much.")
    index_checkpoint_s: float = Field(300.0, ge=1, le=86400, description=(
        "Seconds between checkpoints while dirty (readers search newer vectors exactly, so this only bounds "
        "catch-up work; a whole-index write at 100k memories is ~160 MB)."))

    # -- recall: seed 000's formula; the weights are the most robust of a grid on the shared eval set
    # (seed 000's 0.5/0.18/0.12 scored R@5 0.724; these 0.770 — bench/eval_recall.py --grid) --------
    recall_keyword_weight: float = Field(RECALL_WEIGHTS.keyword, ge=0, le=1,
                                         description="Keyword share of the fused keyword/vector score.")
    recall_importance_weight: float = Field(RECALL_WEIGHTS.importance, ge=0, le=1)
    recall_recency_weight: float = Field(RECALL_WEIGHTS.recency, ge=0, le=1)
    recall_half_life_days: float = Field(RECALL_WEIGHTS.half_life_days, gt=0, le=3650)
    recall_candidates: int = Field(50, ge=10, le=1000, description="Candidates taken from each of FTS and index.")

    # -- files connector -------------------------------------------------------------------
    files_roots: Annotated[list[Path], NoDecode] = Field(default_factory=list)
    files_max_bytes: int = Field(2_000_000, ge=1, description="Larger files are skipped (bytes, uncompressed).")
    files_max_memories: int = Field(36, ge=1, le=1000, description="Memories kept per file (3 calls of 12).")
    files_poll_delay_ms: int = Field(2000, ge=100, description="Polling interval when inotify watches run out.")
    files_settle_s: float = Field(2.0, ge=0, le=3600, description="A changed file is learned once its size and "
                                  "mtime stayed the same this long (seconds; 0: at once).")
    files_settle_max_s: float = Field(60.0, gt=0, le=86400, description="A file that never stops changing (a log) "
                                      "is learned at least this often all the same (seconds).")
    files_ignore: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_FILES_IGNORE),
        description="File-name globs never learned (licence texts, changelogs, build files: not memories).")

    # -- the local HTTP API (seeds 000, 001, 003; DESIGN.md invariant 8: loopback and a token) -------------
    api_enabled: bool = Field(True, description="Serve the HTTP API from the daemon (`twin up`).")
    api_host: str = Field("127.0.0.1", min_length=1, max_length=253,
                          description="Address the API listens on; a non-loopback one needs api_allow_remote.")
    api_port: int = Field(7821, ge=1, le=65535, description="TCP port of the API.")
    api_allow_remote: bool = Field(False, description="Allow a non-loopback api_host (the API is then reachable "
                                   "from other machines, behind its token; the diary and `twin status` say so).")
    api_socket: bool = Field(False, description="Also serve the API on a unix socket in the runtime dir.")

    # -- supervisor ------------------------------------------------------------------------
    restart_backoff_max_s: float = Field(30.0, ge=1, description="Cap of the crashed-child restart backoff.")
    stop_grace_s: float = Field(20.0, ge=1, description="How long workers may finish their job on SIGTERM.")
    workers_nice: int = Field(10, ge=0, le=19, description=(
        "Niceness added to the learn and embedding workers under `twin up` (0: none), so what "
        "the owner types (`twin status`, `twin recall`, the API) gets the CPU first during a first index (issue 18)."))

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, value: object, info: ValidationInfo) -> object:
        """A number setting given `true`/`false` in twin.toml is refused (pydantic took `api_port = true` as port 1
        and `files_max_bytes = true` as 1 byte); the environment's strings are parsed as before."""
        annotation = cls.model_fields[info.field_name].annotation
        if isinstance(value, bool) and annotation in (int, float, int | None, float | None):
            raise ValueError("must be a number, not true or false")
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _level_any_case(cls, value: object) -> object:
        """`TWIN_LOG_LEVEL=debug` is DEBUG (a log level's case does not matter)."""
        return value.upper() if isinstance(value, str) else value

    @field_validator("files_roots", mode="before")
    @classmethod
    def _split_roots(cls, value: object) -> object:
        """Accept a list, or a string of paths separated by ':' or ',' (as in `TWIN_FILES_ROOTS=a:b`)."""
        if isinstance(value, str):
            return [p for p in value.replace(",", ":").split(":") if p.strip()]
        return value

    @field_validator("telegram_allowed_users", "telegram_allowed_chats", mode="before")
    @classmethod
    def _split_ids(cls, value: object) -> object:
        """Accept a list, or ids separated by ',' or ':' (as in `TWIN_TELEGRAM_ALLOWED_USERS=123,456`)."""
        if isinstance(value, str):
            return [p.strip() for p in value.replace(":", ",").split(",") if p.strip()]
        if isinstance(value, int):
            return [value]
        return value

    @field_validator("telegram_bot_token")
    @classmethod
    def _token_shape(cls, token: SecretStr | None) -> SecretStr | None:
        """None, or `<digits>:<letters, digits, _ and ->` as @BotFather issues them (its value is never echoed)."""
        value = _stripped(token)
        if value is None:
            return None
        if not re.fullmatch(r"\d{1,20}:[A-Za-z0-9_-]{1,200}", value):
            raise ValueError("is not a bot token (expected digits, ':', then letters, digits, _ or -)")
        return SecretStr(value)

    @field_validator("files_ignore", "gmail_skip_labels", "browser_deny", mode="before")
    @classmethod
    def _split_globs(cls, value: object) -> object:
        """Accept a list, or a comma-separated string of globs (as in `TWIN_FILES_IGNORE=*.log,copyright`)."""
        if isinstance(value, str):
            return [g.strip() for g in value.split(",") if g.strip()]
        return value

    @field_validator("files_roots")
    @classmethod
    def _expand_roots(cls, roots: list[Path]) -> list[Path]:
        """Each root `~`-expanded and resolved; a relative one is refused (it would be read from whatever directory
        twin was started in: the shell's at `twin up`, `/` under systemd)."""
        expanded = [Path(os.path.expanduser(str(r))) for r in roots]
        if relative := [str(r) for r in expanded if not r.is_absolute()]:
            raise ValueError(f"must be absolute paths ({', '.join(relative[:3])} is not)")
        return [r.resolve() for r in expanded]

    @field_validator("config_dir", "data_dir", "runtime_dir", "cache_dir")
    @classmethod
    def _expand(cls, path: Path) -> Path:
        """`~` expanded; the result must be absolute (an empty or relative value would put the store in
        whatever directory twin happens to be started from: seed 004's split-store failure)."""
        expanded = Path(os.path.expanduser(str(path)))
        if not str(path).strip() or not expanded.is_absolute():
            raise ValueError("must be an absolute path")
        return expanded

    @field_validator("redis_url")
    @classmethod
    def _redis_scheme(cls, url: str | None) -> str | None:
        """None, or a URL redis-py understands: `redis://`, `rediss://` or `unix://`."""
        if url is not None and not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must start with redis://, rediss:// or unix://")
        return url

    @field_validator("redis_password")
    @classmethod
    def _password_given(cls, password: SecretStr | None) -> SecretStr | None:
        """None for a blank password (an env file line `TWIN_REDIS_PASSWORD=`), else the password as written."""
        return None if password is None or not password.get_secret_value() else password

    @field_validator("redis_tls_ca_file", "redis_tls_cert_file", "redis_tls_key_file")
    @classmethod
    def _tls_file(cls, path: Path | None) -> Path | None:
        """None, or an existing file (`~` expanded): a TLS file that is not there fails at start, not at the first
        connection."""
        if path is None or not str(path).strip():
            return None
        path = path.expanduser()
        if not path.is_file():
            raise ValueError(f"{path} is not a file")
        return path

    @field_validator("llm_base_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        """None (no provider), or an http(s) URL with a host (and a valid port, if any), no spaces and no
        user:password part (the key belongs in TWIN_LLM_API_KEY: a URL is shown in status and diary lines);
        returned without a trailing slash."""
        if url is None or not url.strip():
            return None
        url = url.strip()
        if not url.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number in 0-65535
        except ValueError as exc:
            raise ValueError(f"is not a valid URL ({exc})") from exc
        if not parts.hostname or any(ch.isspace() for ch in url):
            raise ValueError("must name a host and contain no spaces")
        if parts.username or parts.password:
            raise ValueError("must not contain a user or password: put the key in TWIN_LLM_API_KEY (env file)")
        return url.rstrip("/")

    @field_validator("llm_api_key")
    @classmethod
    def _header_safe_key(cls, key: SecretStr | None) -> SecretStr | None:
        """None, or a key of printable ASCII without spaces (it is sent as an HTTP header)."""
        value = _stripped(key)
        if value is None:
            return None
        if not value.isascii() or not value.isprintable() or " " in value:
            raise ValueError("must be printable ASCII without spaces (check the env file for a stray character)")
        return SecretStr(value)

    @field_validator("hush_timezone")
    @classmethod
    def _known_zone(cls, zone: str | None) -> str | None:
        """An IANA time-zone name this machine knows (`zoneinfo`), or None for the system's zone."""
        if zone is None or not zone.strip():
            return None
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {zone!r} (use an IANA name such as Europe/Berlin)") from exc
        return zone

    @field_validator("telegram_base_url", "gmail_token_url")
    @classmethod
    def _service_url(cls, url: str, info: ValidationInfo) -> str:
        """An http(s) URL validated like the provider's; blank means the field's default."""
        return cls._http_url(url) or cls.model_fields[info.field_name].default

    @field_validator("gmail_api_url")
    @classmethod
    def _gmail_api_url(cls, url: str) -> str:
        """An http(s) URL (validated like the provider's), returned with one trailing slash."""
        return (cls._http_url(url) or "https://gmail.googleapis.com") + "/"

    @field_validator("gmail_client_secrets")
    @classmethod
    def _expand_secrets_file(cls, path: Path | None) -> Path | None:
        return path.expanduser() if path is not None else None

    @model_validator(mode="after")
    def _keep_fewer_than_compacted(self) -> Settings:
        if self.chat_keep_recent >= self.chat_compact_after:
            raise ValueError("TWIN_CHAT_KEEP_RECENT must be below TWIN_CHAT_COMPACT_AFTER")
        return self

    @model_validator(mode="after")
    def _openai_embedder_needs_provider(self) -> Settings:
        if self.embed_backend == "openai" and self.llm_base_url is None:
            raise ValueError("TWIN_EMBED_BACKEND=openai needs TWIN_LLM_BASE_URL (the provider's base URL)")
        return self

    @model_validator(mode="after")
    def _redis_reached_safely(self) -> Settings:
        """The rules of an external Redis (issue 18, "Beyond one machine"): a plain `redis://` URL only to a loopback
        host unless `redis_allow_plaintext`; TLS files only with `rediss://`, the client certificate and its key
        together; each of the user and the password given once (the URL or its own setting); credentials only
        for an external Redis (the private one is reached by its 0700 unix socket)."""
        if self.redis_url is None:
            if self.redis_username or self.redis_password or self.redis_tls_files:
                raise ValueError("TWIN_REDIS_USERNAME, TWIN_REDIS_PASSWORD and TWIN_REDIS_TLS_* are for a Redis you "
                                 "run: set TWIN_REDIS_URL too (the private Redis needs none of them)")
            return self
        parts = urlsplit(self.redis_url)
        if parts.scheme == "redis" and not is_loopback_host(parts.hostname) and not self.redis_allow_plaintext:
            raise ValueError(f"TWIN_REDIS_URL={shown_url(self.redis_url)} is plain redis:// to a host that is not "
                             "loopback: use rediss:// (TLS, TWIN_REDIS_TLS_CA_FILE), or set "
                             "TWIN_REDIS_ALLOW_PLAINTEXT=true for a network you trust")
        if self.redis_tls_files and parts.scheme != "rediss":
            raise ValueError("TWIN_REDIS_TLS_* files need a rediss:// TWIN_REDIS_URL")
        if (self.redis_tls_cert_file is None) != (self.redis_tls_key_file is None):
            raise ValueError("TWIN_REDIS_TLS_CERT_FILE and TWIN_REDIS_TLS_KEY_FILE go together")
        if parts.username and self.redis_username:
            raise ValueError("the Redis user is in TWIN_REDIS_URL and in TWIN_REDIS_USERNAME: give it once")
        if url_password(self.redis_url) and self.redis_password:
            raise ValueError("the Redis password is in TWIN_REDIS_URL and in TWIN_REDIS_PASSWORD: give it once "
                             "(TWIN_REDIS_PASSWORD, in the env file)")
        return self

    @property
    def redis_tls_files(self) -> list[Path]:
        """The TLS files that are set (CA, client certificate, key), in that order."""
        return [p for p in (self.redis_tls_ca_file, self.redis_tls_cert_file, self.redis_tls_key_file) if p]

    @property
    def redis_shown_url(self) -> str:
        """`effective_redis_url` with any password replaced by `***` (`shown_url`): what logs, the diary and `twin
        status` print."""
        return shown_url(self.effective_redis_url)

    @property
    def secret_values(self) -> list[str]:
        """The values of the secret settings that are set (bot token, API key, the Redis password, in its setting or
        in the URL), for log redaction."""
        secrets = [s.get_secret_value() for s in (self.telegram_bot_token, self.llm_api_key, self.redis_password)
                   if s is not None]
        in_url = url_password(self.redis_url or "")
        return secrets + ([in_url, unquote(in_url)] if in_url else [])

    @property
    def has_provider(self) -> bool:
        """True when a model provider is configured (`llm_base_url` set)."""
        return self.llm_base_url is not None

    @model_validator(mode="after")
    def _weights_leave_room(self) -> Settings:
        if self.recall_importance_weight + self.recall_recency_weight >= 1:
            raise ValueError("TWIN_RECALL_IMPORTANCE_WEIGHT + TWIN_RECALL_RECENCY_WEIGHT must be below 1")
        return self

    @model_validator(mode="after")
    def _remote_api_is_explicit(self) -> Settings:
        if not self.api_is_loopback and not self.api_allow_remote:
            raise ValueError(f"TWIN_API_HOST={self.api_host} is not a loopback address: set TWIN_API_ALLOW_REMOTE=true "
                             "to serve the API beyond this machine")
        return self

    @property
    def api_is_loopback(self) -> bool:
        """True when `api_host` is `localhost` or a loopback address (127.0.0.0/8, ::1)."""
        return is_loopback_host(self.api_host)

    @property
    def api_token_path(self) -> Path:
        """The API's bearer token: `<config dir>/api-token`, mode 0600 (created at the API's first start)."""
        return self.config_dir / "api-token"

    @property
    def api_socket_path(self) -> Path:
        """The API's unix socket (with `api_socket`): `<runtime dir>/api.sock`."""
        return self.runtime_dir / "api.sock"

    @property
    def db_path(self) -> Path:
        """The SQLite store: `<data dir>/twin.db`."""
        return self.data_dir / "twin.db"

    @property
    def gmail_token_path(self) -> Path:
        """The Gmail OAuth token `twin connect gmail` saved: `<data dir>/gmail-token.json`, mode 0600."""
        return self.data_dir / "gmail-token.json"

    @property
    def index_path(self) -> Path:
        """The hnswlib checkpoint: `<data dir>/index/memories.hnsw` (a sidecar, rebuilt when missing)."""
        return self.data_dir / "index" / "memories.hnsw"

    @property
    def redis_socket(self) -> Path:
        """The private redis-server's unix socket (used only when `redis_url` is unset)."""
        return self.runtime_dir / "redis.sock"

    @property
    def effective_redis_url(self) -> str:
        """`redis_url`, or the private server's `unix://` URL."""
        return self.redis_url or f"unix://{self.redis_socket}?db=0"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Sources, highest first: init arguments, environment, env file, TOML file (pydantic-settings hook)."""
        toml = TomlConfigSettingsSource(settings_cls, toml_file=config_file_path())
        return init_settings, env_settings, dotenv_settings, toml


def is_loopback_host(host: str | None) -> bool:
    """True for `localhost` and a loopback address (127.0.0.0/8, ::1, bracketed or not); False for any other name,
    which is not resolved (a name may lead anywhere)."""
    import ipaddress

    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def url_password(url: str) -> str | None:
    """The password a Redis URL carries, in its user part (`redis://user:PASSWORD@host`) or as redis-py's
    `?password=` query argument; None when it has none."""
    parts = urlsplit(url)
    if parts.password:
        return parts.password
    found = re.search(r"[?&]password=([^&#]*)", url)
    return found.group(1) or None if found else None


def shown_url(url: str) -> str:
    """`url` with its password (user part or `?password=`) replaced by `***`, the user kept: how a Redis URL is
    printed anywhere (logs, diary, `twin status`, an error about a setting)."""
    url = re.sub(r"(//[^/@:?#]*):[^/?#]*@", r"\1:***@", url)
    return re.sub(r"([?&]password=)[^&#]*", r"\1***", url)


def _stripped(secret: SecretStr | None) -> str | None:
    """A secret's value without surrounding whitespace (an env file line often ends in a space), None if blank."""
    value = secret.get_secret_value().strip() if secret is not None else ""
    return value or None


def _check_file_there(path: Path, variable: str, explicit: bool) -> bool:
    """True when `path` is a file to read; False when it is absent and may be (the default path, not named by
    `variable`). Raises `SettingsError` for a file named by `variable` that does not exist, a symlink that
    leads nowhere (a dotfile manager's broken link) and a directory: a settings file the owner meant must never
    be skipped in silence, with its secrets or its roots lost."""
    if path.is_symlink() and not path.exists():
        raise SettingsError(f"invalid setting {variable}: {path} is a symlink to nothing (a missing or looping target)")
    if not path.exists():
        if explicit:
            raise SettingsError(f"invalid setting {variable}: {path} does not exist")
        return False
    if path.is_dir():
        raise SettingsError(f"invalid setting {variable}: {path} is a directory, not a file")
    return True


def _check_config_file(path: Path, explicit: bool) -> None:
    """Raise `SettingsError` for a config file that cannot be used (`_check_file_there`), for keys in
    the file that are not settings (a typo such as `file_roots` must not be silently ignored), and for a Redis
    password in it (`redis_password`, or one in `redis_url`): twin.toml is a config file, not a secrets file."""
    if not _check_file_there(path, f"{ENV_PREFIX}CONFIG", explicit):
        return
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return  # reported with its reason by the settings source below
    unknown = sorted(set(data) - set(Settings.model_fields))
    if unknown:
        raise SettingsError(f"invalid config file {path}: unknown setting(s) {', '.join(unknown)} "
                            "(see config/twin.example.toml)")
    if "redis_password" in data or (isinstance(data.get("redis_url"), str) and url_password(data["redis_url"])):
        raise SettingsError(f"invalid config file {path}: a Redis password does not belong in twin.toml; put it in the "
                            f"env file ({env_file_path()}, mode 0600) as TWIN_REDIS_PASSWORD")


def load_settings(**overrides: object) -> Settings:
    """Read and validate settings from every source.

    The env file is `TWIN_ENV_FILE` or `<config dir>/env`. Raises `SettingsError` with one line
    naming the first bad setting (as its `TWIN_…` variable) and the problem; entry points print it
    and exit 2 (issue 2: "not a traceback").
    """
    env_file = str(env_file_path())
    _check_file_there(Path(env_file), f"{ENV_PREFIX}ENV_FILE", explicit=False)  # twin writes it (pair, connect)
    try:
        Path(env_file).read_bytes().decode("utf-8")
    except FileNotFoundError:
        pass
    except UnicodeDecodeError as exc:
        raise SettingsError(f"invalid env file {env_file}: not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise SettingsError(f"cannot read the env file {env_file}: {exc.strerror or exc}") from exc
    _check_config_file(config_file_path(), explicit=bool(os.environ.get(f"{ENV_PREFIX}CONFIG")))
    try:
        return Settings(_env_file=env_file, **overrides)  # type: ignore[call-arg]
    except ValidationError as exc:
        err = exc.errors()[0]
        if not err["loc"]:  # a rule across settings: its message names them
            raise SettingsError(f"invalid settings: {err['msg'].removeprefix('Value error, ')}") from exc
        key = str(err["loc"][0])
        name = f"{ENV_PREFIX}{key.upper()}"
        got = "hidden" if name.endswith(SECRET_SUFFIXES) else repr(err.get("input"))
        got = re.sub(r"//[^/@\s]*@", "//…@", got)  # a user:password in a URL is a secret too
        said = err["msg"].removeprefix("Value error, ")
        raise SettingsError(f"invalid setting {_where_set(name, key, env_file)}: {said} (got {got})") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SettingsError(f"invalid config file {config_file_path()}: {exc}") from exc
    except OSError as exc:
        raise SettingsError(f"cannot read the configuration ({exc.filename or config_file_path()}): "
                            f"{exc.strerror or exc}") from exc


def _where_set(name: str, key: str, env_file: str) -> str:
    """Where the bad value of setting `key` came from, as its owner would look for it: the variable `name` when
    the environment has it, else `key` in the config file that holds it, else `name` in the env file."""
    if name in os.environ:
        return name
    path = config_file_path()
    try:
        if key in tomllib.loads(path.read_text(encoding="utf-8")):
            return f"{key} in {path}"
    except (OSError, ValueError):
        pass
    return f"{name} (in {env_file})" if Path(env_file).exists() else name
