"""``HttpSystem``: a RAG service behind HTTP, asked once per query with a JSON request template.

    HttpSystem("http://localhost:8000/search",
               body={"q": "{query}", "k": "{top_k}"},      # the request template
               results="data.hits", answer="data.answer",  # where the reply keeps them
               metadata="metadata",                        # (default) e.g. its stages
               abstain="abstain", abstain_reason="reason", # (default) a deliberate no-answer
               fields={"id": "doc_id", "text": "content"}) # result field names, if not ours

Placeholders ``{query}``, ``{top_k}`` and ``{mode}`` are filled anywhere in ``body`` (a value that
is exactly ``"{top_k}"`` stays a number); with ``method="GET"`` the filled template is the query
string. A reply whose ``abstain`` value is true (or a reason text) is an abstention: no answer,
flagged, with the reply's ``abstain_reason`` (see ``Abstain``). A reply status other than
2xx (an error, or a redirect with no ``Location``) or a timeout fails that case with an error
naming the URL and the status.

Like a production client (``heta_notebook._util.http``): one connection pool per system,
``retries`` on connection failures and 502/503/504 (counted in each response's
``metadata["http_retries"]``), replies longer than ``max_reply_bytes`` refused, redirects not
followed unless ``follow_redirects=True`` (and then only to the same host or ``allowed_hosts``).

Its configuration is stored redacted (``redaction.redact_config``): header values but plain
ones, a template's ``key``/``api_key``..., URL credentials, cookies, ``auth``; those values and
``secrets=`` are declared secret, so a reply echoing them is redacted too.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from heta_notebook._util.http import DEFAULT_MAX_REPLY_BYTES, HttpClient
from heta_notebook._util.redaction import (
    config_secrets,
    declare_secrets,
    mark,
    redact_config,
    redact_text,
    url_secrets,
)
from heta_notebook.systems._normalize import NO_RESULTS

DEFAULT_BODY = {"query": "{query}", "top_k": "{top_k}"}


class HttpSystemError(RuntimeError):
    """The service answered with an error status or a reply without what was asked for."""


class HttpSystem:
    """A service that answers ``POST url`` (or GET) with JSON holding results and/or an answer."""

    def __init__(
        self,
        url: str,
        *,
        body: Mapping[str, Any] | None = None,
        method: str = "POST",
        headers: Mapping[str, str] | None = None,
        results: str | None = "results",
        answer: str | None = "answer",
        citations: str | None = None,
        metadata: str | None = "metadata",
        abstain: str | None = "abstain",
        abstain_reason: str | None = "reason",
        fields: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        name: str | None = None,
        query_modes: Sequence[str] = ("default",),
        secrets: Sequence[str] = (),
        auth: tuple[str, str] | None = None,
        cookies: Mapping[str, str] | None = None,
        retries: int = 5,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        follow_redirects: bool = False,
        allowed_hosts: Sequence[str] = (),
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"HttpSystem url must start with http:// or https://, got {url!r}")
        if method.upper() not in ("GET", "POST"):
            raise ValueError(f"HttpSystem method must be GET or POST, got {method!r}")
        self.url, self.method = url, method.upper()
        self.body = dict(DEFAULT_BODY if body is None else body)
        self.headers = dict(headers or {})
        self.paths = {
            "results": results,
            "answer": answer,
            "citations": citations,
            "metadata": metadata,
            "abstain": abstain,
            "abstain_reason": abstain_reason,
        }
        self.fields = dict(fields or {})
        self.timeout = timeout
        self.name = name or httpx.URL(url).host or "http"
        self.query_modes = tuple(query_modes)
        self.auth, self.cookies = auth, dict(cookies or {})
        if self.cookies:
            cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            self.headers = {**self.headers, "Cookie": cookie}
        self.client = HttpClient(
            timeout=timeout,
            retries=retries,
            max_reply_bytes=max_reply_bytes,
            follow_redirects=follow_redirects,
            allowed_hosts=allowed_hosts,
            auth=auth,
        )
        declare_secrets(*self._secrets(secrets))
        self.shown_url = redact_text(url)  # the URL as errors and reports show it

    def _secrets(self, given: Sequence[str]) -> list[str]:
        found = [*given, *url_secrets(self.url), *config_secrets(self._config())]
        found += [str(v) for v in self.cookies.values()]
        if self.auth:
            user, password = self.auth
            pair = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            found += [password, pair]
        return found

    def _config(self) -> dict[str, Any]:
        return {"url": self.url, "body": self.body, "headers": self.headers}

    async def query(self, text: str, *, mode: str = "default", top_k: int = 10) -> dict[str, Any]:
        """Send the filled template; return ``{"answer", "results", "citations"}`` from the reply."""
        filled = fill(self.body, {"query": text, "top_k": top_k, "mode": mode})
        request = {"params": filled} if self.method == "GET" else {"json": filled}
        try:
            reply = await self.client.request(
                self.method, self.url, headers=self.headers, **request
            )
        except httpx.TimeoutException as exc:
            raise TimeoutError(f"{self.shown_url} did not answer within {self.timeout} s") from exc
        except httpx.HTTPError as exc:
            raise HttpSystemError(f"{self.shown_url}: {type(exc).__name__}: {exc}") from exc
        if not 200 <= reply.status < 300:  # only a 2xx reply is an answer
            raise HttpSystemError(
                f"{self.shown_url} answered HTTP {reply.status}{_not_an_answer(reply.status)}: "
                f"{_head(reply.text)!r}"
                + (f" (after {reply.retries} retries)" if reply.retries else "")
            )
        try:
            data = json.loads(reply.content)
        except ValueError as exc:
            raise HttpSystemError(
                f"{self.shown_url} replied with no JSON: {_head(reply.text)!r}"
            ) from exc
        out = self._read(data)
        if reply.retries:  # counted in the report, case by case
            out["metadata"] = {**out.get("metadata", {}), "http_retries": reply.retries}
        return out

    async def aclose(self) -> None:
        """Close this event loop's connection pool."""
        await self.client.aclose()

    def _read(self, data: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, path in self.paths.items():
            if path:
                value = at_path(data, path, self.shown_url)
                out[key] = value
        if isinstance(out.get("results"), list) and self.fields:
            out["results"] = [self._renamed(item) for item in out["results"]]
        if not isinstance(out.get("metadata"), Mapping):  # e.g. {"stages": [...]}: kept
            out.pop("metadata", None)
        if not out.get("abstain"):  # a reason only means something with an abstention
            out.pop("abstain", None)
            out.pop("abstain_reason", None)
        if self.paths["results"] is None:
            out.pop("results", None)
        elif not out.get("results"):
            self._note_no_results(out, data)
        return out

    def _note_no_results(self, out: dict[str, Any], data: Any) -> None:
        """``out["results"] = []``, and ``metadata["no_results"]`` saying what the reply held
        when the results path matched nothing (or found no results and no answer came)."""
        found = "matched nothing" if out.get("results") is None else "held no results"
        out["results"] = []
        if found == "held no results" and out.get("answer") is not None:
            return  # an answer without results: said by the service, not a wrong path
        path = str(self.paths["results"])
        note = f"the reply's {path!r} {found}; {reply_keys(data, path)}"
        out["metadata"] = {**out.get("metadata", {}), NO_RESULTS: note}

    def _renamed(self, item: Any) -> Any:
        if not isinstance(item, Mapping):
            return item
        ours = {ours: item[theirs] for ours, theirs in self.fields.items() if theirs in item}
        return {**{k: v for k, v in item.items() if k not in self.fields.values()}, **ours}

    def manifest(self) -> dict[str, Any]:
        """The service's settings for the report, its secrets redacted (``redact_config``)."""
        client = self.client
        return {
            "name": self.name,
            "kind": "http",
            **redact_config(self._config()),
            "method": self.method,
            "paths": {k: v for k, v in self.paths.items() if v},
            "fields": self.fields,
            **({"auth": mark(list(self.auth))} if self.auth else {}),
            "retries": client.retries,
            "max_reply_bytes": client.max_reply_bytes,
            "follow_redirects": client.follow_redirects,
            **({"allowed_hosts": sorted(client.allowed_hosts)} if client.allowed_hosts else {}),
        }

    def __repr__(self) -> str:
        return f"HttpSystem({self.shown_url!r}, method={self.method!r})"


def _not_an_answer(status: int) -> str:
    """Why a non-error status other than 2xx is refused (a 3xx that still reaches here had no
    ``Location``: the client follows or refuses the others)."""
    if 300 <= status < 400:
        return ", a redirect with no Location header (its body is not an answer)"
    return ""


def _head(text: str) -> str:
    """The start of a reply for an error message, redacted before it is cut (a secret cut in
    half would escape the policy)."""
    return redact_text(text[:4000])[:300]


def fill(template: Any, values: Mapping[str, Any]) -> Any:
    """``template`` with ``{query}``/``{top_k}``/``{mode}`` filled (exact placeholders keep type)."""
    if isinstance(template, str):
        for key, value in values.items():
            if template == "{" + key + "}":
                return value
        for key, value in values.items():
            template = template.replace("{" + key + "}", str(value))
        return template
    if isinstance(template, Mapping):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    return template


def reply_keys(data: Any, path: str) -> str:
    """The reply's top-level keys, and those where ``path``'s parent leads (for a message)."""
    if not isinstance(data, Mapping):
        return f"the reply is a {type(data).__name__}"
    said = f"its top-level keys: {sorted(map(str, data))[:10]}"
    parent = path.rpartition(".")[0]
    inner = at_path(data, parent, "") if parent else None
    if isinstance(inner, Mapping):
        said += f"; {parent!r} holds {sorted(map(str, inner))[:10]}"
    return said


def at_path(data: Any, path: str, url: str) -> Any:
    """``data`` at a dotted ``path`` (``"data.hits"``, ``"choices.0.text"``); None when the
    last key is missing, an error naming the path when the reply has another shape."""
    current = data
    parts = path.split(".")
    for depth, part in enumerate(parts):
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        elif depth == len(parts) - 1 and isinstance(current, Mapping):
            return None
        else:
            keys = sorted(current)[:10] if isinstance(current, Mapping) else type(current).__name__
            raise HttpSystemError(
                f"the reply of {url} has no {path!r} (at {part!r} it holds {keys}); "
                "set HttpSystem(results=..., answer=...) to where the reply keeps them"
            )
    return current


__all__ = ["HttpSystem", "HttpSystemError", "at_path", "fill", "reply_keys"]
