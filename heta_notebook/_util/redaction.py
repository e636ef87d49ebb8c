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
- **Pairs in text.** ``"X-Api-Key": "..."``, ``api_key=...``, ``Cookie: ...``: a secret-named
  key followed by its value in free text (a 500 reply echoing the request headers).
- **Known secrets.** A known secret (the judge's API key, a password from its base URL, the
  Basic credential an HTTP client builds from that URL's user info) is replaced in every form
  it can be echoed in: as is, JSON-escaped, and percent-encoded (``/``, ``+`` and ``=`` in
  keys come back as ``%2F``, ``%2B``, ``%3D``).
- **Declared secrets.** Values a user declares (``HttpSystem(secrets=...)``), the secret parts
  of a system's configuration and API keys read from the environment are *declared* for the
  process (:func:`declare_secrets`): every later :func:`redact_text` hides them too, in every
  form, wherever they are echoed.

A hidden value becomes ``***redacted:1a2b3c4d***``: the first 8 hex digits of its SHA-256, so
two runs against the same service (same key) still compare equal and two keys stay distinct;
redacting twice changes nothing. A system's whole configuration (its request template,
headers, URL, cookies, ``auth``) goes through :func:`redact_config`, stricter than
:func:`redact`: a bare ``key`` and every header value but a few plain ones are hidden.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit, urlunsplit

REDACTED = "***redacted***"  # the marker of reports written before fingerprints
_MARK = re.compile(r"\*\*\*redacted(?::[0-9a-f]{8})?\*\*\*")

_SECRET_KEY = re.compile(
    r"(^|[_-])(api[_-]?key|apikey|secret|password|passwd|pwd|credentials?|authorization|"
    r"(access|private|secret|client)[_-]?(key|secret)|"
    r"(auth|access|refresh|bearer|api|session|id|security|oauth|sas)[_-]?token|signature|sig|"
    r"subscription[_-]?key|cookies?|set[_-]cookie|auth|x[_-]auth|sessionid|sid)$"
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
# token of 8+ characters with a digit): "basic Navier-Stokes", "Bearer token" stay readable.
# RFC 6750 puts "=" only at a token's end; a key with one inside ("sk-a/b+c=d-7731"), or
# percent-encoded, is hidden whole, not cut at its "=" or "%3D".
_AUTH_HEADER = re.compile(
    r"\b(?P<scheme>[Bb]asic|[Bb]earer|BASIC|BEARER)(?P<gap>\s+|%20|\+)"
    r"(?P<cred>(?:[A-Za-z0-9._~+/=-]|%[0-9A-Fa-f]{2}){6,})"
)


def is_secret_key(key: Any) -> bool:
    """Whether a mapping key names a credential (``api_key``: yes; ``max_tokens``: no)."""
    return _secret_name(key if type(key) is str else str(key))


@functools.lru_cache(maxsize=4096)
def _secret_name(name: str) -> bool:
    # a run's results repeat a handful of keys (source, metadata) a hundred thousand times
    return bool(_SECRET_KEY.search(name))


def is_secret_param(name: Any) -> bool:
    """Whether a URL query parameter carries a credential: a secret key name, or a bare
    ``key`` (``?key=...``: Google-style API keys; a mapping's ``key`` is kept readable)."""
    return is_secret_key(name) or str(name).lower() == "key"


def redact(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A copy of ``value`` (dicts, lists, text) with secret-keyed values and credentials hidden."""
    kind = type(value)
    if kind is str:  # the common cases first, by exact type (an ABC check costs ~0.3 µs)
        return redact_text(value, secrets) if secrets else redact_text(value)
    if kind in _PLAIN_SCALARS:
        return value
    secrets = tuple(secrets)
    if kind is dict or isinstance(value, Mapping):
        return {
            key: mark(item)
            if is_secret_key(key) and item not in (None, "")
            else redact(item, secrets)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact(item, secrets) for item in value]
    if isinstance(value, str):
        return redact_text(value, secrets)
    return value


_PLAIN_SCALARS = frozenset({int, float, bool, type(None)})


def is_clean(value: Any) -> bool:
    """Whether ``redact(value)`` (no secrets given, none declared) is ``value`` unchanged, for
    JSON-like data; False when it cannot tell at a glance. A check without the copy."""
    kind = type(value)
    if kind is str:
        return not _maybe_secret(value)
    if kind in _PLAIN_SCALARS:
        return True
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                return False
            if _secret_name(key):
                if item not in (None, ""):
                    return False
            elif not is_clean(item):
                return False
        return True
    if kind is list:
        return all(map(is_clean, value))
    return False


def clean_values(keys: list[Any], values: list[Any]) -> bool:
    """Whether ``redact`` leaves every value of dicts with these ``keys`` (and these
    ``values``) as it is, no secrets declared: each distinct key checked once, the values
    scanned joined when all are text. A False may be a false alarm (a secret key with an
    empty value): callers then take the full pass."""
    for key in set(keys):
        if type(key) is not str or _secret_name(key):
            return False
    try:
        joined = "\n".join(values)
    except TypeError:  # numbers, lists, dicts among them: one by one
        return all(map(is_clean, values))
    return not _maybe_secret(joined)


# headers whose values are plain settings, shown as they are in a system's configuration
_PLAIN_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "content-type",
        "content-language",
        "user-agent",
        "cache-control",
        "connection",
        "host",
        "origin",
        "referer",
        "x-request-id",
    }
)
_HEADER_SECRETS = frozenset({"x-functions-key", "x-api-token", "x-amz-security-token"})
_CONFIG_KEY = re.compile(r"(^|[_-])(key|auth)$", re.IGNORECASE)  # a template's key, auth=


def is_plain_header(name: Any) -> bool:
    """Whether a header's value is a plain setting (``Accept``, ``Content-Type``...): shown in a
    system's configuration, and the only kind sent on a redirect to another origin; any other
    header may carry a credential."""
    return str(name).lower() in _PLAIN_HEADERS


def is_config_secret(key: Any) -> bool:
    """Whether a key of a system's configuration holds a secret: a secret key name, a bare or
    suffixed ``key`` (``key``, ``x-functions-key``), ``auth``."""
    name = str(key)
    return is_secret_key(name) or bool(_CONFIG_KEY.search(name)) or name.lower() in _HEADER_SECRETS


def redact_config(config: Any, secrets: Iterable[str] = ()) -> Any:
    """A system's configuration (URL, request template, headers, cookies, ``auth``) with its
    secrets hidden: values under config-secret keys, every header value but plain ones
    (``Content-Type``, ``Accept``...), URL credentials, and ``secrets``."""
    secrets = tuple(secrets)
    if isinstance(config, Mapping):
        out = {}
        for key, item in config.items():
            if item in (None, "") or isinstance(item, bool):
                out[key] = item
            elif is_config_secret(key):
                out[key] = mark(item)
            elif str(key).lower() == "headers" and isinstance(item, Mapping):
                out[key] = {
                    name: value if is_plain_header(name) else mark(value)
                    for name, value in item.items()
                }
            else:
                out[key] = redact_config(item, secrets)
        return out
    if isinstance(config, (list, tuple)):
        return [redact_config(item, secrets) for item in config]
    if isinstance(config, str):
        return redact_text(config, secrets)
    return config


def config_secrets(config: Any) -> tuple[str, ...]:
    """The values :func:`redact_config` hides in ``config`` (as text), to declare them secret
    so that their echoes (an error reply quoting a header) are hidden too."""
    found: list[str] = []

    def walk(value: Any, secret: bool) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                headers = str(key).lower() == "headers" and isinstance(item, Mapping)
                if headers:  # a secret-named header, or a long value of an unknown one
                    for name, v in item.items():
                        plain = is_plain_header(name)
                        named = is_config_secret(name)
                        walk(v, secret or named or (not plain and len(str(v)) >= 12))
                else:
                    walk(item, secret or is_config_secret(key))
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item, secret)
        elif isinstance(value, str):
            found.extend([value] if secret else url_secrets(value) if "://" in value else ())
        elif secret and isinstance(value, (int, float)) and not isinstance(value, bool):
            found.append(str(value))

    walk(config, False)
    return tuple(found)


def redact_strings(value: Any) -> Any:
    """A copy of JSON-like ``value`` with every string passed through :func:`redact_text`
    (keys and types kept: for stored records, where a key's name says nothing)."""
    if isinstance(value, Mapping):
        return {key: redact_strings(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_strings(item) for item in value]
    return redact_text(value) if isinstance(value, str) else value


def mark(value: Any) -> str:
    """The stable fingerprint that replaces a secret: ``***redacted:<sha256[:8]>***`` (a marker
    already is one stays as it is)."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    if _MARK.fullmatch(text):
        return text
    return f"***redacted:{hashlib.sha256(text.encode('utf-8')).hexdigest()[:8]}***"


def is_redacted(text: str) -> bool:
    """Whether ``text`` holds a redaction marker (a fingerprint, or the older fixed one)."""
    return bool(_MARK.search(text))


def _in_mark(value: str) -> bool:  # a marker, or a piece of one (a URL's hidden user info)
    return "***redacted" in value or bool(re.fullmatch(r"[0-9a-f]{8}\*\*\*", value))


_declared: tuple[str, ...] = ()
_declared_lock = threading.Lock()


def declare_secrets(*values: Any) -> None:
    """Declare ``values`` secret for this process: every later :func:`redact_text` hides them
    (in every form) wherever they are echoed. Values under 4 characters are ignored."""
    global _declared
    new = [v for v in values if isinstance(v, str) and len(v) >= 4 and not _in_mark(v)]
    if not new:
        return
    with _declared_lock:
        known = dict.fromkeys(_declared)
        known.update(dict.fromkeys(new))
        # longest first: a secret containing another is replaced whole
        _declared = tuple(sorted(known, key=len, reverse=True))


def declared_secrets() -> tuple[str, ...]:
    """The values declared secret so far (longest first)."""
    return _declared


def hide_declared(text: str) -> str:
    """``text`` with only the declared secrets hidden (for data such as answers and document
    texts, which the other rules leave as they are)."""
    for secret in _declared:
        for form in secret_forms(secret):
            if form in text:
                text = text.replace(form, mark(secret))
    return text


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with URL user info, secret query values and every form of ``secrets`` (and
    of the declared secrets) hidden."""
    if not secrets and not _declared and not _maybe_secret(text):
        return text  # none of the rules below can match (most ids and texts)
    for secret in (*secrets, *_declared):
        for form in secret_forms(secret):
            if form in text:
                text = text.replace(form, mark(secret))
    if "://" in text:
        text = _USERINFO.sub(_hide_userinfo, text)
    if "=" in text:
        text = _QUERY_PARAM.sub(_hide_param, text)
    if "%" in text:
        text = _USERINFO_ENCODED.sub(_hide_userinfo_encoded, text)
        text = _QUERY_PARAM_ENCODED.sub(_hide_param, text)
    lowered = text.lower()
    if "basic" in lowered or "bearer" in lowered:
        text = _AUTH_HEADER.sub(_hide_credential, text)
    if ":" in text and any(word in lowered for word in _PAIR_WORDS):
        text = _SECRET_PAIR.sub(_hide_pair, text)
    return text


def _maybe_secret(text: str) -> bool:
    """Whether a rule of ``redact_text`` but the secrets' could apply: each needs ":" (URL
    user info, pairs), "=" (query values), "%" (encoded forms) or a Basic / Bearer scheme.
    Texts joined by newlines give the answer of any of them (no gate spans a newline)."""
    if ":" in text or "=" in text or "%" in text:
        return True
    lowered = text.lower()
    return "basic" in lowered or "bearer" in lowered


# "name": "value" / name: value / 'name': 'value' in free text, for a secret-looking name
_PAIR_WORDS = ("key", "token", "secret", "passw", "cookie", "auth", "sig", "credential")
_SECRET_PAIR = re.compile(
    r"(?P<q>[\"']?)(?P<key>[A-Za-z][A-Za-z0-9_.-]{1,60})(?P=q)(?P<gap>\s*[:=]\s*)"
    r"(?:(?P<vq>[\"'])(?P<quoted>[^\"'\n]+)(?P=vq)|(?P<bare>(?:[Bb]asic |[Bb]earer )?[^\s,;}\])\"']+))"
)


def _hide_pair(match: re.Match[str]) -> str:
    key, value = match["key"], match["quoted"] or match["bare"]
    if not (is_secret_key(key) or key.lower() in _HEADER_SECRETS) or _MARK.fullmatch(value):
        return match[0]
    if key.lower() == "code" or len(value) < 4 or value.isdigit():  # "status code: 500"
        return match[0]
    if value.lower().startswith(("basic ", "bearer ")):  # "Authorization: Bearer x": the cred
        scheme, _, cred = value.partition(" ")
        value = f"{scheme} {mark(cred)}"
    else:
        value = mark(value)
    q, vq = match["q"], match["vq"] or ""
    return f"{q}{key}{q}{match['gap']}{vq}{value}{vq}"


def _hide_userinfo(match: re.Match[str]) -> str:
    info = match["info"]
    return match[0] if _MARK.fullmatch(info) else f"{match['scheme']}{mark(unquote(info))}@"


def _hide_userinfo_encoded(match: re.Match[str]) -> str:
    info = match["info"]
    return match[0] if _MARK.fullmatch(info) else f"{match['scheme']}{mark(unquote(info))}%40"


def _hide_credential(match: re.Match[str]) -> str:
    cred = unquote(match["cred"])
    if match["scheme"].lower() == "basic":
        try:
            secret = ":" in base64.b64decode(cred, validate=True).decode("utf-8")
        except ValueError:  # not base64 (binascii.Error) or not text: an ordinary word
            secret = False
    else:
        secret = len(cred) >= 8 and any(c.isdigit() for c in cred)
    return f"{match['scheme']}{match['gap']}{mark(cred)}" if secret else match[0]


def url_secrets(url: str | None) -> tuple[str, ...]:
    """The credentials a URL carries (user info password/user, secret query values), to hide
    their echoes elsewhere (e.g. in an HTTP library's error message)."""
    if not url:
        return ()
    try:
        parts = urlsplit(url)
    except ValueError:
        return ()
    found = [unquote(p) for p in (parts.password, parts.username) if p and not _in_mark(p)]
    if (parts.username or parts.password) and not _MARK.search(parts.netloc):  # the Basic
        # credential an HTTP client builds from them
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        found.append(base64.b64encode(pair.encode("utf-8")).decode("ascii"))
    query = parse_qsl(parts.query, keep_blank_values=False)
    found += [v for k, v in query if is_secret_param(k) and not _in_mark(v)]
    return tuple(found)


@functools.lru_cache(maxsize=4096)
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
    value = match["value"]
    if not is_secret_param(unquote(match["key"])) or not value or _MARK.fullmatch(unquote(value)):
        return match[0]
    equals = "=" if match["sep"] in "?&;" else "%3D"
    return f"{match['sep']}{match['key']}{equals}{mark(unquote(value))}"


def strip_url(url: str) -> str:
    """The URL with no user info and no query string at all (for identities and manifests)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


__all__ = [
    "REDACTED",
    "config_secrets",
    "declare_secrets",
    "declared_secrets",
    "hide_declared",
    "is_config_secret",
    "is_redacted",
    "mark",
    "redact_config",
    "is_secret_key",
    "is_secret_param",
    "redact",
    "redact_strings",
    "redact_text",
    "secret_forms",
    "strip_url",
    "url_secrets",
]
