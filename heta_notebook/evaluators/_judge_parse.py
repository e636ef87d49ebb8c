"""Turn a judge model's free-form reply into a verdict (score, label, passed, reason).

Models wrap JSON in code fences, add a sentence before or after it, and vary key names
(``score``/``rating``, ``reason``/``reasoning``/``explanation``, ``passed``/``verdict``).
Parsing accepts all of that; anything else raises :class:`JudgeParseError`, which the
judge records as an error score with the raw reply (never a crash).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

SCORE_KEYS = ("score", "rating", "grade", "value", "overall_score")
REASON_KEYS = ("reason", "reasoning", "explanation", "rationale", "justification", "comment")
PASSED_KEYS = ("passed", "pass", "verdict", "correct", "result", "is_correct")
LABEL_KEYS = ("label", "verdict", "classification", "category", "result")

_TRUE_WORDS = {"true", "yes", "pass", "passed", "correct", "faithful", "relevant", "supported"}
_FALSE_WORDS = {
    "false",
    "no",
    "fail",
    "failed",
    "incorrect",
    "wrong",
    "unfaithful",
    "irrelevant",
    "not relevant",
    "not supported",
    "unsupported",
    "not faithful",
}
_FENCE = re.compile(r"```(?:[A-Za-z0-9_-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_NUMBER = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?)\s*(%|/\s*(\d+(?:\.\d+)?))?\s*$")


class JudgeParseError(ValueError):
    """The reply holds no usable verdict."""


@dataclass(frozen=True)
class Verdict:
    """What a reply said: any of score (raw, not normalised), label, passed, reason."""

    score: float | None = None
    label: str | None = None
    passed: bool | None = None
    reason: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)


def parse_reply(text: str) -> Verdict:
    """Find the verdict in ``text``: JSON, fenced JSON, JSON amid prose, or a bare number."""
    if not isinstance(text, str) or not text.strip():
        raise JudgeParseError("the judge returned an empty reply")
    number = _as_number(text)
    if number is not None:
        return Verdict(score=number)
    for obj in _json_objects(text):
        verdict = _verdict_of(obj)
        if verdict is not None:
            return verdict
    raise JudgeParseError(
        "the judge reply contains no JSON object with a score, label or verdict "
        f"(first 200 characters: {text.strip()[:200]!r})"
    )


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object in ``text``: the whole text, fenced blocks, then objects amid prose."""
    found: list[dict[str, Any]] = []
    candidates = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def _verdict_of(obj: dict[str, Any]) -> Verdict | None:
    """A verdict from one JSON object (keys matched case-insensitively), None if it has none."""
    lowered = {str(k).strip().lower(): v for k, v in obj.items()}
    score = _first(lowered, SCORE_KEYS, _as_score)
    passed = _first(lowered, PASSED_KEYS, _as_bool)
    label = _first(lowered, LABEL_KEYS, _as_label)
    reason = _first(lowered, REASON_KEYS, _as_text)
    if score is None and passed is None and label is None:
        return None
    return Verdict(score=score, label=label, passed=passed, reason=reason, fields=dict(obj))


def _first(obj: dict[str, Any], keys: tuple[str, ...], convert: Any) -> Any:
    for key in keys:
        if key in obj:
            value = convert(obj[key])
            if value is not None:
                return value
    return None


def _as_score(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return _as_number(value) if isinstance(value, str) else None


def _as_number(text: str) -> float | None:
    """``0.8``, ``80%`` (→ 0.8) or ``4/5`` (→ 0.8); None for anything else."""
    match = _NUMBER.match(text)
    if match is None:
        return None
    number = float(match.group(1))
    if match.group(2) == "%":
        return number / 100
    if match.group(3) is not None:
        denominator = float(match.group(3))
        return number / denominator if denominator else None
    return number


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = " ".join(value.strip().lower().replace("_", " ").split())
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    return None


def _as_label(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text.strip() or None


def normalise_label(label: str) -> str:
    """Compare labels ignoring case, spaces, dashes and underscores."""
    return re.sub(r"[\s_\-]+", "_", label.strip().lower())
