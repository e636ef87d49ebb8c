"""The HTTP client for a user's service: one connection pool per owner and event loop, bounded
retries with backoff, a reply size limit, and redirects refused unless allowed.

- **Pool.** One ``httpx.AsyncClient`` per :class:`HttpClient` and running event loop (a client is
  bound to the loop it was made on), so 2,000 queries reuse a few keep-alive connections
  instead of opening 2,000.
- **Retries.** Connection-level failures (refused, reset, closed before a reply) and replies
  502/503/504 are retried up to ``retries`` times, waiting ``backoff * 2**n`` seconds (capped
  at 2 s, or the reply's ``Retry-After``); each reply says how many retries it took. Timeouts
  are not retried here (the run's ``query_timeout`` bounds the whole query).
- **Size.** A reply longer than ``max_reply_bytes`` is an error, read no further than the limit.
- **Redirects.** Not followed by default (a 3xx is an error saying where it pointed); with
  ``follow_redirects=True`` at most 5 hops, never to another host unless it is in
  ``allowed_hosts``. From the first hop to another origin (host, port or scheme) on, no
  credentials travel: no ``auth`` (the client would re-apply it to every request it sends)
  and no header but plain ones (``redaction.is_plain_header``): ``Authorization``,
  ``Cookie``, ``X-Api-Key`` and any other header that may carry a secret are dropped, as
  browsers and requests do.
"""

from __future__ import annotations

import asyncio
import dataclasses
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from heta_notebook._util.chat import retry_after, ssl_context
from heta_notebook._util.redaction import is_plain_header, redact_text

RETRY_STATUS = frozenset({502, 503, 504})
MAX_REDIRECTS = 5
DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024
_RETRY_ERRORS = (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ConnectTimeout)


class HttpReplyError(RuntimeError):
    """A reply the client refuses: too large, or a redirect not allowed."""


class HttpConnectionError(HttpReplyError, ConnectionError):
    """The connection failed on every attempt (refused, reset, closed before a reply)."""


@dataclass(frozen=True)
class Reply:
    """A reply read whole (within the size limit), and how many retries it took."""

    status: int
    headers: httpx.Headers
    content: bytes
    url: str
    retries: int

    @property
    def text(self) -> str:
        """The body decoded as UTF-8 (undecodable bytes replaced)."""
        return self.content.decode("utf-8", errors="replace")


class HttpClient:
    """Pooled requests with bounded retries, a size limit and a redirect policy (module doc)."""

    def __init__(
        self,
        *,
        timeout: float = 30.0,
        retries: int = 5,
        backoff: float = 0.05,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        follow_redirects: bool = False,
        allowed_hosts: Sequence[str] = (),
        max_connections: int = 100,
        auth: tuple[str, str] | None = None,
    ) -> None:
        if retries < 0 or isinstance(retries, bool):
            raise ValueError(f"retries must be a whole number >= 0, got {retries!r}")
        if max_reply_bytes <= 0 or isinstance(max_reply_bytes, bool):
            raise ValueError(f"max_reply_bytes must be > 0, got {max_reply_bytes!r}")
        self.timeout, self.retries, self.backoff = timeout, int(retries), float(backoff)
        self.max_reply_bytes = int(max_reply_bytes)
        self.follow_redirects, self.allowed_hosts = follow_redirects, frozenset(allowed_hosts)
        self.max_connections, self.auth = max_connections, auth
        self._clients: weakref.WeakKeyDictionary[Any, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )

    def __getstate__(self) -> dict[str, Any]:  # pools stay with their process (Ray ships a copy)
        return {**self.__dict__, "_clients": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _clients=weakref.WeakKeyDictionary())

    def _client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None or client.is_closed:
            limits = httpx.Limits(
                max_connections=self.max_connections,
                max_keepalive_connections=self.max_connections,
            )
            client = httpx.AsyncClient(
                timeout=self.timeout, verify=ssl_context(), limits=limits, auth=self.auth
            )
            self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        """Close this loop's pool (a later request opens a new one)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    async def request(self, method: str, url: str, **options: Any) -> Reply:
        """Send one request (``json=``, ``params=``, ``headers=``...) with the policy above."""
        retries = 0
        while True:
            try:
                reply = await self._follow(self._client().build_request(method, url, **options))
            except _RETRY_ERRORS as exc:
                if retries >= self.retries:
                    raise HttpConnectionError(
                        f"{redact_text(url)}: the connection failed ({type(exc).__name__}: "
                        f"{redact_text(str(exc)) or 'no detail'}) on each of {retries + 1} attempts"
                    ) from exc
                wait = None
            else:
                if reply.status not in RETRY_STATUS or retries >= self.retries:
                    return dataclasses.replace(reply, retries=retries)
                wait = retry_after(httpx.Response(reply.status, headers=reply.headers), 2.0)
            await asyncio.sleep(wait if wait is not None else min(self.backoff * 2**retries, 2.0))
            retries += 1

    async def _follow(self, request: httpx.Request) -> Reply:
        origin = request.url.host
        credentials = True  # until the first hop to another origin, then never again
        for _ in range(MAX_REDIRECTS + 1):
            reply = await self._read(request, credentials)
            location = reply.headers.get("location")
            if not (300 <= reply.status < 400 and location):
                return reply
            target = request.url.join(location)
            shown = redact_text(str(target))
            if not self.follow_redirects:
                raise HttpReplyError(
                    f"{redact_text(str(request.url))} answered HTTP {reply.status}, a redirect to "
                    f"{shown}; redirects are not followed (pass follow_redirects=True)"
                )
            if target.host != origin and target.host not in self.allowed_hosts:
                raise HttpReplyError(
                    f"{redact_text(str(request.url))} redirected to another host ({shown}); "
                    f"add {target.host!r} to allowed_hosts to follow it"
                )
            headers = request.headers
            if _origin(target) != _origin(request.url):  # credentials stay with their origin
                credentials = False
                headers = httpx.Headers(
                    {k: v for k, v in headers.items() if is_plain_header(k) and k.lower() != "host"}
                )
            keep_body = reply.status in (307, 308)
            if not keep_body:  # 301/302/303: the body is not sent again
                body_headers = ("content-length", "content-type", "transfer-encoding")
                headers = httpx.Headers(
                    {k: v for k, v in headers.items() if k.lower() not in body_headers}
                )
            method = request.method if keep_body or request.method == "GET" else "GET"
            content = request.content if keep_body else None
            request = self._client().build_request(method, target, headers=headers, content=content)
        raise HttpReplyError(
            f"{redact_text(str(request.url))}: more than {MAX_REDIRECTS} redirects"
        )

    async def _read(self, request: httpx.Request, credentials: bool = True) -> Reply:
        """Send ``request`` and read its reply within the size limit; with ``credentials``
        False the client's ``auth`` is not applied."""
        auth = httpx.USE_CLIENT_DEFAULT if credentials else None
        response = await self._client().send(
            request, stream=True, follow_redirects=False, auth=auth
        )
        try:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_reply_bytes:
                raise self._too_large(request, f" (it declared {int(declared):,})")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > self.max_reply_bytes:
                    raise self._too_large(request, "")
        finally:
            await response.aclose()
        return Reply(response.status_code, response.headers, bytes(body), str(request.url), 0)

    def _too_large(self, request: httpx.Request, size: str) -> HttpReplyError:
        return HttpReplyError(
            f"{redact_text(str(request.url))} replied with more than max_reply_bytes="
            f"{self.max_reply_bytes:,} bytes{size}; raise the limit to accept larger replies"
        )


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """A URL's origin: scheme, host and port (the default port spelled out)."""
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


__all__ = [
    "DEFAULT_MAX_REPLY_BYTES",
    "HttpClient",
    "HttpConnectionError",
    "HttpReplyError",
    "RETRY_STATUS",
    "Reply",
]
