"""The one redaction policy: what counts as a secret, and how it is hidden wherever we store text.

Used for recipe and KB manifests (ours and heta-framework's), judge manifests, judge cache
entries, and every error message recorded in a report (``EvaluationScore.error_score``,
``EvaluationError.from_exception``). Three rules:

- **Keys.** A value is secret when its key names a credential: ``api_key``, ``x-api-key``,
  ``openai_api_key``, ``password``, ``secret``, ``secret_key``, ``token``, ``access_token``,
  ``authorization``, ``credentials``... Counts and limits are not secrets: ``max_tokens``,
  ``token_start``, ``num_tokens`` stay readable (a recipe's ``max_tokens`` changes its results
  and must show in its manifest).
- **URLs.** In any text, the user info of a URL (``https://user:pass@host``) and the values of
  secret-named query parameters (``?api-key=...``, ``&token=...``, a bare ``?key=...``) are
  replaced.
  Both also in their percent-encoded forms (a URL inside a URL: ``https%3A%2F%2Fu%3Ap%40h``,
  ``%3Fkey%3D...``).
- **Headers.** ``Basic`` / ``Bearer`` credentials (``Authorization: Basic dXNlcjpwYXNz``, an
  endpoint echoing the header) are replaced.
- **Known secrets.** A known secret (the judge's API key, a password from its base URL, the
  Basic credential an HTTP client builds from that URL's user info) is replaced in every form
  it can be echoed in: as is, JSON-escaped, and percent-encoded (``/``, ``+`` and ``=`` in
  keys come back as ``%2F``, ``%2B``, ``%3D``).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit, urlunsplit

REDACTED = "***redacted***"

_SECRET_KEY = re.compile(
    r"(^|[_-])(api[_-]?key|apikey|secret|password|passwd|pwd|credentials?|authorization|"
    r"(access|private|secret|client)[_-]?(key|secret)|"
    r"(auth|access|refresh|bearer|api|session|id|security|oauth|sas)[_-]?token|signature|sig)$"
    r"|^(token|code)$",
    re.IGNORECASE,
)
# scheme://userinfo@ : everything up to the last "@" before the host's path part
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<info>[^\s/?#@\"'<>]+)@")
_QUERY_PARAM = re.compile(r"(?P<sep>[?&;])(?P<key>[^=&#\s\"'<>]+)=(?P<value>[^&#\s\"'<>]*)")
# the same two, percent-encoded (a URL carried inside another URL or a form body)
_USERINFO_ENCODED = re.compile(
    r"(?i)(?P<scheme>\b[a-z][a-z0-9+.-]*%3A%2F%2F)(?P<info>(?:(?!%2F|%3F|%23|%40)[^\s/?#@\"'<>])+)%40"
)
_QUERY_PARAM_ENCODED = re.compile(
    r"(?i)(?P<sep>%3F|%26|%3B)(?P<key>(?:(?!%3D|%26)[A-Za-z0-9_.~%-])+?)%3D"
    r"(?P<value>(?:(?!%26|%23|%20)[^&#\s\"'<>])*)"
)
# HTTP credentials: "Basic dXNlcjpw..." (base64 of "user:password"), "Bearer sk-..." (a
# token of 8+ characters with a digit): "basic Navier-Stokes", "Bearer token" stay readable
_AUTH_HEADER = re.compile(
    r"\b(?P<scheme>[Bb]asic|[Bb]earer|BASIC|BEARER)(?P<gap>\s+|%20|\+)"
    r"(?P<cred>[A-Za-z0-9._~+/-]{6,}(?:=|%3D){0,2})"
)


def is_secret_key(key: Any) -> bool:
    """Whether a mapping key names a credential (``api_key``: yes; ``max_tokens``: no)."""
    return bool(_SECRET_KEY.search(str(key)))


def is_secret_param(name: Any) -> bool:
    """Whether a URL query parameter carries a credential: a secret key name, or a bare
    ``key`` (``?key=...``: Google-style API keys; a mapping's ``key`` is kept readable)."""
    return is_secret_key(name) or str(name).lower() == "key"


def redact(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A copy of ``value`` (dicts, lists, text) with secret-keyed values and credentials hidden."""
    secrets = tuple(secrets)
    if isinstance(value, Mapping):
        return {
            key: REDACTED
            if is_secret_key(key) and item not in (None, "")
            else redact(item, secrets)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact(item, secrets) for item in value]
    if isinstance(value, str):
        return redact_text(value, secrets)
    return value


def redact_strings(value: Any) -> Any:
    """A copy of JSON-like ``value`` with every string passed through :func:`redact_text`
    (keys and types kept: for stored records, where a key's name says nothing)."""
    if isinstance(value, Mapping):
        return {key: redact_strings(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_strings(item) for item in value]
    return redact_text(value) if isinstance(value, str) else value


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with URL user info, secret query values and every form of ``secrets`` hidden."""
    for secret in secrets:
        for form in secret_forms(secret):
            text = text.replace(form, REDACTED)
    if "://" in text:
        text = _USERINFO.sub(lambda m: f"{m['scheme']}{REDACTED}@", text)
    if "=" in text:
        text = _QUERY_PARAM.sub(_hide_param, text)
    if "%" in text:
        text = _USERINFO_ENCODED.sub(lambda m: f"{m['scheme']}{REDACTED}%40", text)
        text = _QUERY_PARAM_ENCODED.sub(_hide_param, text)
    lowered = text.lower()
    if "basic" in lowered or "bearer" in lowered:
        text = _AUTH_HEADER.sub(_hide_credential, text)
    return text


def _hide_credential(match: re.Match[str]) -> str:
    cred = unquote(match["cred"])
    if match["scheme"].lower() == "basic":
        try:
            secret = ":" in base64.b64decode(cred, validate=True).decode("utf-8")
        except ValueError:  # not base64 (binascii.Error) or not text: an ordinary word
            secret = False
    else:
        secret = len(cred) >= 8 and any(c.isdigit() for c in cred)
    return f"{match['scheme']}{match['gap']}{REDACTED}" if secret else match[0]


def url_secrets(url: str | None) -> tuple[str, ...]:
    """The credentials a URL carries (user info password/user, secret query values), to hide
    their echoes elsewhere (e.g. in an HTTP library's error message)."""
    if not url:
        return ()
    try:
        parts = urlsplit(url)
    except ValueError:
        return ()
    found = [unquote(p) for p in (parts.password, parts.username) if p]
    if parts.username or parts.password:  # the Basic credential an HTTP client builds from them
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        found.append(base64.b64encode(pair.encode("utf-8")).decode("ascii"))
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=False) if is_secret_param(k)]
    return tuple(found)


def secret_forms(secret: str | None) -> list[str]:
    """The ways ``secret`` can be echoed: as is, JSON-escaped, percent-encoded (longest first)."""
    if not secret or len(secret) < 4:  # too short to replace without mangling ordinary text
        return []
    forms = {
        secret,
        json.dumps(secret)[1:-1],
        quote(secret, safe=""),
        quote(secret, safe="/"),
        quote_plus(secret),
        re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), quote(secret, safe="")),
    }
    return sorted(forms, key=len, reverse=True)


def _hide_param(match: re.Match[str]) -> str:
    if not is_secret_param(unquote(match["key"])) or not match["value"]:
        return match[0]
    equals = "=" if match["sep"] in "?&;" else "%3D"
    return f"{match['sep']}{match['key']}{equals}{REDACTED}"


def strip_url(url: str) -> str:
    """The URL with no user info and no query string at all (for identities and manifests)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


__all__ = [
    "REDACTED",
    "is_secret_key",
    "is_secret_param",
    "redact",
    "redact_strings",
    "redact_text",
    "secret_forms",
    "strip_url",
    "url_secrets",
]
