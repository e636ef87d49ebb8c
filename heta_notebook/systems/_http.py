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
flagged, with the reply's ``abstain_reason`` (see ``Abstain``). A reply status >= 400 or a timeout fails that case with an error naming the URL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from heta_notebook._util.chat import ssl_context
from heta_notebook._util.redaction import redact
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

    async def query(self, text: str, *, mode: str = "default", top_k: int = 10) -> dict[str, Any]:
        """Send the filled template; return ``{"answer", "results", "citations"}`` from the reply."""
        filled = fill(self.body, {"query": text, "top_k": top_k, "mode": mode})
        request = {"params": filled} if self.method == "GET" else {"json": filled}
        try:
            async with httpx.AsyncClient(timeout=self.timeout, verify=ssl_context()) as client:
                reply = await client.request(self.method, self.url, headers=self.headers, **request)
        except httpx.TimeoutException as exc:
            raise TimeoutError(f"{self.url} did not answer within {self.timeout} s") from exc
        if reply.status_code >= 400:
            raise HttpSystemError(
                f"{self.url} answered HTTP {reply.status_code}: {reply.text[:200]!r}"
            )
        try:
            data = reply.json()
        except ValueError as exc:
            raise HttpSystemError(f"{self.url} replied with no JSON: {reply.text[:200]!r}") from exc
        return self._read(data)

    def _read(self, data: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, path in self.paths.items():
            if path:
                value = at_path(data, path, self.url)
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
        """The service's settings for the report (header values that look secret redacted)."""
        return {
            "name": self.name,
            "kind": "http",
            "url": self.url,
            "method": self.method,
            "body": self.body,
            "headers": redact(self.headers),
            "paths": {k: v for k, v in self.paths.items() if v},
            "fields": self.fields,
        }

    def __repr__(self) -> str:
        return f"HttpSystem({self.url!r}, method={self.method!r})"


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
