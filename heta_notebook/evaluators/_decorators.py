"""HoneyHive-style ``@evaluator`` / ``@aevaluator``: plain functions become full evaluators.

A decorated function stays callable like the original and *is* a
``BenchmarkEvaluatorProtocol`` evaluator (``.name``, ``.settings``,
``async evaluate(*, case, response)``). It may take HoneyHive's ``(outputs, inputs,
ground_truth)`` (``ground_truth`` optional) or the seed's ``(case, response)``; the parameter
names decide. Whatever it returns (dict, float, int, bool, str, None, EvaluationScore) is
coerced to an ``EvaluationScore`` by :func:`coerce_score`.

Settings are honoured inside ``evaluate()``: ``timeout`` bounds each attempt (a sync function
then runs in its own daemon thread, which runs on after a timeout; without a timeout it runs
in line, which is much cheaper); ``retry_count`` retries a failing attempt with exponential backoff
(``retry_backoff * 2**attempt`` seconds). After the last failure the exception propagates: the
runner records it as ``EvaluationScore.error_score``, exactly as for any other
evaluator. ``enabled=False`` is only exposed through ``.settings``; the runner drops it.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import math
import numbers
from collections.abc import Callable, Mapping
from typing import Any, Literal, overload

import numpy as np

from heta_notebook._util.redaction import redact_strings
from heta_notebook._util.timeout import with_timeout
from heta_notebook.evaluators._protocol import EvaluatorSettings
from heta_notebook.schema._records import BenchmarkCase, EvaluationScore, QueryResponse

_SCORE_KEYS = ("score", "value")
_HONEYHIVE_PARAMS = ("outputs", "inputs", "ground_truth")
CallStyle = Literal["honeyhive", "case_response"]


# --------------------------------------------------------------------------- the HoneyHive view


def honeyhive_view(case: BenchmarkCase, response: QueryResponse) -> tuple[Any, dict[str, Any], Any]:
    """``(outputs, inputs, ground_truth)`` of one case, as a HoneyHive evaluator expects them.

    ``response.metadata["outputs"]``, ``case.metadata["inputs"]`` and
    ``case.metadata["ground_truth"]`` are returned as-is when present (``evaluate()`` stores the
    user's original dicts there); otherwise they are built from the records.
    """
    return _outputs(response), _inputs(case), _ground_truth(case)


def _outputs(response: QueryResponse) -> Any:
    if "outputs" in response.metadata:
        return response.metadata["outputs"]
    return {
        "answer": response.answer,
        "results": [result.to_dict() for result in response.results],
        "contexts": [result.text for result in response.results],
    }


def _inputs(case: BenchmarkCase) -> Any:
    if "inputs" in case.metadata:
        return case.metadata["inputs"]
    return {"query": case.query, **case.labels}


def _ground_truth(case: BenchmarkCase) -> Any:
    if "ground_truth" in case.metadata:
        return case.metadata["ground_truth"]
    answers = list(case.expected.answers)
    return {
        "answers": answers,
        "answer": answers[0] if answers else None,
        "evidence": [item.to_dict() for item in case.expected.evidence],
        "value": case.expected.value,
    }


# --------------------------------------------------------------------------- the evaluator object


class FunctionEvaluator:
    """A function wrapped as an evaluator; calling it calls the original function."""

    #: The runner does not re-apply timeout/retries to evaluators that handle their own.
    _handles_settings = True

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        settings: EvaluatorSettings | None = None,
    ) -> None:
        functools.update_wrapper(self, func)
        self.func = func
        self.settings = settings or EvaluatorSettings()
        self.is_async = inspect.iscoroutinefunction(func)
        self.call_style = call_style(func)
        self._name = str(name or getattr(func, "__name__", type(func).__name__))
        self._by_name, self._params = _honeyhive_params(func)

    @property
    def name(self) -> str:
        """The score name used in reports (the function name unless ``name=`` was given)."""
        return self._name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        kind = "aevaluator" if self.is_async else "evaluator"
        return f"<{kind} {self.name!r} {self.settings!r}>"

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Call the function on this case (with timeout and retries) and coerce its return."""
        args, kwargs = self._arguments(case, response)
        raw = await self._call_with_retries(args, kwargs)
        return coerce_score(raw, self.name, threshold=self.settings.threshold)

    def _arguments(
        self, case: BenchmarkCase, response: QueryResponse
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if self.call_style == "case_response":
            return (), {"case": case, "response": response}
        values = dict(zip(_HONEYHIVE_PARAMS, honeyhive_view(case, response), strict=True))
        if self._by_name:
            return (), {key: values[key] for key in self._params}
        return tuple(values[key] for key in self._params), {}

    async def _call_with_retries(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        attempts = self.settings.retry_count + 1
        for attempt in range(attempts):
            try:
                return await self._call_once(args, kwargs)
            except Exception:
                if attempt == attempts - 1:
                    raise
                await asyncio.sleep(self.settings.retry_backoff * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _call_once(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        timeout = self.settings.timeout
        if self.is_async:
            call = self.func(*args, **kwargs)
        elif timeout is None:
            return self.func(*args, **kwargs)
        else:  # its own daemon thread: a hung call is left behind on time, the thread runs on
            from heta_notebook._util.loop import in_daemon_thread

            call = in_daemon_thread(self.func, *args, **kwargs)
        return await with_timeout(call, timeout, f"evaluator {self.name!r}")


def call_style(func: Callable[..., Any]) -> CallStyle:
    """``"case_response"`` when the function names ``case``/``response`` parameters, else HoneyHive."""
    names = set(inspect.signature(func).parameters)
    if names & {"case", "response"} and not names & set(_HONEYHIVE_PARAMS):
        return "case_response"
    return "honeyhive"


def _honeyhive_params(func: Callable[..., Any]) -> tuple[bool, tuple[str, ...]]:
    """``(by_name, which)``: pass outputs/inputs/ground_truth by name when the function names
    them, else positionally as many as it takes (``ground_truth`` is optional)."""
    params = list(inspect.signature(func).parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return False, _HONEYHIVE_PARAMS
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return True, _HONEYHIVE_PARAMS
    named = tuple(n for n in _HONEYHIVE_PARAMS if any(p.name == n for p in params))
    if named:
        return True, named
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return False, _HONEYHIVE_PARAMS[: min(len(positional), 3)]


# --------------------------------------------------------------------------- return coercion


def coerce_score(raw: Any, name: str, *, threshold: float | None = None) -> EvaluationScore:
    """Turn an evaluator function's return into an ``EvaluationScore``.

    dict: ``score`` (or ``value``) is the value, ``passed`` the verdict, every other key goes to
    metadata (``reason``/``reasoning``/``explanation`` included; a ``metadata`` dict is merged);
    a plain-text ``error`` key is kept as ``error_note`` so a returned score is not mistaken for
    an evaluator failure. float/int → float, bool stays bool, str is a label. None or NaN →
    skipped. ``threshold`` sets ``passed = value >= threshold`` unless the function set it.
    """
    if isinstance(raw, EvaluationScore):
        score = raw if raw.name == name else raw.model_copy(update={"name": name})
        return _with_threshold(score, threshold)
    value, passed, metadata = _split(raw, name)
    metadata = redact_strings(metadata) if metadata else metadata  # reasons may echo a URL
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return EvaluationScore.skipped_score(name, f"evaluator returned {value!r}", **metadata)
    score = EvaluationScore(name=name, value=value, passed=passed, metadata=metadata)
    return _with_threshold(score, threshold)


def _split(raw: Any, name: str) -> tuple[Any, bool | None, dict[str, Any]]:
    if isinstance(raw, Mapping):
        return _split_mapping(raw, name)
    return _plain_value(raw, name), None, {}


def _split_mapping(raw: Mapping[str, Any], name: str) -> tuple[Any, bool | None, dict[str, Any]]:
    metadata = {k: v for k, v in raw.items() if k not in (*_SCORE_KEYS, "passed", "metadata")}
    if isinstance(raw.get("metadata"), Mapping):
        metadata = {**raw["metadata"], **metadata}
    if "error" in metadata and not isinstance(metadata["error"], Mapping):
        metadata["error_note"] = metadata.pop("error")
    passed = raw.get("passed")
    key = next((k for k in _SCORE_KEYS if k in raw), None)
    if key is None and passed is None:
        raise TypeError(f"evaluator {name!r} returned a dict without 'score', 'value' or 'passed'")
    value = raw[key] if key is not None else bool(passed)
    return _plain_value(value, name), None if passed is None else bool(passed), metadata


def _plain_value(value: Any, name: str) -> bool | float | str | None:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(
        f"evaluator {name!r} returned {type(value).__name__}; "
        "return a dict with 'score', a number, a bool or a string"
    )


def _with_threshold(score: EvaluationScore, threshold: float | None) -> EvaluationScore:
    if threshold is None or score.passed is not None or score.numeric is None:
        return score
    return score.model_copy(update={"passed": score.numeric >= threshold})


# --------------------------------------------------------------------------- the decorators


@overload
def evaluator(func: Callable[..., Any]) -> FunctionEvaluator: ...
@overload
def evaluator(
    func: None = None, *, name: str | None = None, settings: EvaluatorSettings | None = None
) -> Callable[[Callable[..., Any]], FunctionEvaluator]: ...


def evaluator(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    settings: EvaluatorSettings | None = None,
) -> Any:
    """Make ``func`` an evaluator: ``@evaluator``, ``@evaluator(name=..., settings=...)``.

    Example::

        @evaluator(settings=EvaluatorSettings(threshold=0.5))
        def mentions_answer(outputs, inputs, ground_truth):
            return {"score": float(ground_truth["answer"] in outputs["answer"]), "reason": "..."}
    """

    def wrap(function: Callable[..., Any]) -> FunctionEvaluator:
        return FunctionEvaluator(function, name=name, settings=settings)

    return wrap(func) if func is not None else wrap


@overload
def aevaluator(func: Callable[..., Any]) -> FunctionEvaluator: ...
@overload
def aevaluator(
    func: None = None, *, name: str | None = None, settings: EvaluatorSettings | None = None
) -> Callable[[Callable[..., Any]], FunctionEvaluator]: ...


def aevaluator(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    settings: EvaluatorSettings | None = None,
) -> Any:
    """Make an ``async def`` function an evaluator; same options as :func:`evaluator`."""

    def wrap(function: Callable[..., Any]) -> FunctionEvaluator:
        if not inspect.iscoroutinefunction(function):
            raise TypeError(f"@aevaluator needs an async function; use @evaluator for {function!r}")
        return FunctionEvaluator(function, name=name, settings=settings)

    return wrap(func) if func is not None else wrap


__all__ = [
    "FunctionEvaluator",
    "aevaluator",
    "call_style",
    "coerce_score",
    "evaluator",
    "honeyhive_view",
]
