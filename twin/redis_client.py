"""How every twin process reaches Redis: one client factory built from the settings (the supervisor, the workers,
the connectors, the API and the CLI all call `open_redis`), so the ACL user, the password and TLS are applied alike.

- The private Redis (no `TWIN_REDIS_URL`) is reached by its unix socket in the 0700 runtime dir, without credentials.
- An external Redis (`TWIN_REDIS_URL`) may take an ACL user (`TWIN_REDIS_USERNAME`) and a password
  (`TWIN_REDIS_PASSWORD`, from the env file or the environment; `twin.settings` refuses it in twin.toml), and TLS
  with `rediss://` (the CA of `TWIN_REDIS_TLS_CA_FILE`, else the system's; a client certificate and key when the
  server asks for one). The server's certificate and host name are always checked.
- A client that retries (the workers', the supervisor's) retries lost connections with capped backoff, but never a
  refused login: a wrong password is said at once, not after half a minute of retries (`RetryUnlessRefused`).

Nothing here prints the URL: what is printed is `Settings.redis_shown_url`, with the password replaced.
"""

from __future__ import annotations

import ssl

from redis import Redis
from redis.backoff import ExponentialBackoff
from redis.exceptions import AuthenticationError, NoPermissionError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from twin.exceptions import RedisRefused
from twin.settings import Settings

RETRY_BACKOFF = dict(cap=5.0, base=0.2)
"""A retrying client's backoff between attempts, seconds (exponential from 0.2 s, capped at 5 s)."""
RETRY_TIMES = 8
"""How often a retrying client tries again after a lost connection before it raises (~26 s in all)."""


def untrusted_certificate(error: BaseException) -> bool:
    """True for the `ConnectionError` redis-py raises when the server's TLS certificate failed verification (not
    signed by the CA in use, or issued for another host name): the original `ssl.SSLCertVerificationError` is its
    context."""
    return isinstance(error, RedisConnectionError) and isinstance(error.__context__, ssl.SSLCertVerificationError)


class RetryUnlessRefused(Retry):
    """redis-py's `Retry` for connection errors and timeouts, except a refused login (`AuthenticationError`, a
    subclass of `ConnectionError`: a wrong password or user, or none given to a server that wants one) and a server
    certificate that is not trusted (`untrusted_certificate`), which are raised at the first attempt: trying again
    cannot fix a setting."""

    def call_with_retry(self, do, fail, is_retryable=None, with_failure_count=False):
        """As `Retry.call_with_retry`, with a refused login or certificate never retried."""
        def retryable(error: Exception) -> bool:
            refused = isinstance(error, AuthenticationError) or untrusted_certificate(error)
            return not refused and (is_retryable is None or is_retryable(error))

        return super().call_with_retry(do, fail, retryable, with_failure_count)


def connection_options(settings: Settings) -> dict:
    """The keyword arguments of `Redis.from_url` that come from the settings: `username` and `password` when set,
    and for a `rediss://` URL the TLS files with the server's certificate and host name checked. Empty for the
    private Redis. Values from the URL itself (a user or password in it) take precedence in redis-py; the settings
    refuse a URL and a setting that both give one."""
    options: dict = {}
    if settings.redis_username:
        options["username"] = settings.redis_username
    if settings.redis_password is not None:
        options["password"] = settings.redis_password.get_secret_value()
    if settings.effective_redis_url.startswith("rediss://"):
        options.update(ssl_cert_reqs="required", ssl_check_hostname=True)
        files = {"ssl_ca_certs": settings.redis_tls_ca_file, "ssl_certfile": settings.redis_tls_cert_file,
                 "ssl_keyfile": settings.redis_tls_key_file}
        options.update({option: str(path) for option, path in files.items() if path is not None})
    return options


def open_redis(settings: Settings, connect_timeout_s: float | None = None, answer_timeout_s: float | None = None,
               retry: bool = False) -> Redis:
    """A Redis client for `settings` (nothing connects until its first command).

    `connect_timeout_s` and `answer_timeout_s` bound connecting and each answer (seconds; None: no bound, as a
    blocking worker needs). With `retry`, lost connections and timeouts are retried `RETRY_TIMES` times with
    `RETRY_BACKOFF` and the connection is health-checked every 30 s (the workers, the supervisor); without, the
    first failure is raised (redis-py's default: no retry_on_error; a probe, the CLI). A refused login is never
    retried (`RetryUnlessRefused`)."""
    options = connection_options(settings)
    if retry:
        options.update(retry=RetryUnlessRefused(ExponentialBackoff(**RETRY_BACKOFF), RETRY_TIMES),
                       retry_on_error=[RedisConnectionError, RedisTimeoutError], health_check_interval=30)
    return Redis.from_url(settings.effective_redis_url, socket_connect_timeout=connect_timeout_s,
                          socket_timeout=answer_timeout_s, **options)


def check_access(client: Redis, settings: Settings) -> None:
    """Ping Redis through `client`. Raises `RedisRefused` (a `SettingsError`: exit code 2, no restart) when the
    server refuses the login or the user may not run commands, refuses the URL's database (out of range), or its
    TLS certificate is not trusted;
    `redis.ConnectionError` or `redis.TimeoutError` when it cannot be reached (which passes: the caller retries or
    degrades). The message names the URL without its password and the settings to check, never a secret."""
    try:
        client.ping()
    except (AuthenticationError, NoPermissionError) as exc:
        raise refusal(settings, exc) from None
    except ResponseError as exc:  # e.g. "DB index is out of range": the SELECT of the URL's database, refused
        raise RedisRefused(f"Redis at {settings.redis_shown_url} refused to open the database the URL names "
                           f"({exc}): check the database number at the end of TWIN_REDIS_URL") from None
    except RedisConnectionError as exc:
        if untrusted_certificate(exc):
            raise refusal(settings, exc) from None
        raise


def refusal(settings: Settings, exc: RedisConnectionError | NoPermissionError) -> RedisRefused:
    """The `RedisRefused` that says what a refused login (`AuthenticationError`), a command the ACL user may not run
    (`NoPermissionError`) or an untrusted server certificate (`untrusted_certificate`) means for `settings`: the URL
    without its password, and what to check."""
    if untrusted_certificate(exc):
        return RedisRefused(f"Redis at {settings.redis_shown_url} presented a TLS certificate this machine does not "
                            f"trust ({exc.__context__.verify_message}): check TWIN_REDIS_TLS_CA_FILE and the host "
                            "name in TWIN_REDIS_URL")
    if isinstance(exc, NoPermissionError):
        return RedisRefused(f"Redis at {settings.redis_shown_url} lets the user in but refuses a command ({exc}): give "
                            "the ACL user the commands of the README's example (\"Workers on another machine\")")
    return RedisRefused(f"Redis at {settings.redis_shown_url} refused the login ({exc}): check TWIN_REDIS_USERNAME "
                        "and TWIN_REDIS_PASSWORD (in the env file)")
