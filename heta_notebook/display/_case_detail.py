"""One case in HTML (Python side): the detail of a case result and two side by side.

The browser explorers draw the same content in JavaScript (``assets/explorer.js``); this module
renders it for static views: the explorers' readable fallback in exported notebooks, their
``detail_html`` and the comparison's side-by-side snapshot. Every text from data is escaped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from heta_notebook.analysis._case_rows import case_evidence, case_results, expected_of
from heta_notebook.display._explorer_cells import score_note
from heta_notebook.display._explorer_details import (
    abstain_reason,
    answer_state,
)
from heta_notebook.display._html import (
    Markup,
    badge,
    definition_list,
    details,
    join,
    json_block,
    panel,
    raw,
    style,
    table,
    tag,
    truncate,
)
from heta_notebook.display._theme import color_for, fmt_int, fmt_ms, fmt_num
from heta_notebook.schema._abstain import abstention_expected
from heta_notebook.schema._records import EvaluationCaseResult
from heta_notebook.schema._status import REASON_KEYS

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.analysis._compare import Comparison

MAX_RESULTS_OPEN = 10
MAX_TEXT = 600
SIDE_CSS = """
.hn-x .hn-sides{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.hn-x .hn-side{border:1px solid #E5E7EB;border-radius:6px;padding:6px 10px;min-width:0}
.hn-x .hn-side h4{margin-top:2px}
.hn-x .hn-gained{background:#E8F5E9}
.hn-x .hn-lost{background:#FFEBEE}
.hn-x ul.hn-ev{list-style:none;padding-left:0;margin:2px 0}
.hn-x ul.hn-ev li{padding:1px 4px;border-radius:3px;margin:1px 0}
.hn-x .hn-val{font-size:18px;font-weight:700}
"""


def case_detail_html(result: EvaluationCaseResult, *, with_style: bool = False) -> str:
    """The detail of one case result: query, answers, judge reasons, evidence, results, scores."""
    expected = expected_of(result)
    parts = [
        _detail_header(result),
        tag("div", tag("b", "Query"), tag("pre", result.query, class_="hn-text")),
        _error_block(result),
        _answers(result, expected),
        _reasons(result),
        _evidence(result, expected),
        _results(result, expected),
        _scores(result),
        _trace_and_labels(result),
    ]
    return str(panel(style() if with_style else "", *parts, class_="hn-detail"))


def _detail_header(result: EvaluationCaseResult) -> Markup:
    mode = tag(
        "span",
        result.query_mode,
        class_="hn-badge hn-muted",
        style=f"border-color:{color_for(result.query_mode)}",
    )
    status = badge("query error", "bad") if result.error else badge("ok", "ok")
    verdicts = [s.passed for s in result.scores if s.passed is not None]
    passed = badge(f"{sum(verdicts)}/{len(verdicts)} passed", "info") if verdicts else ""
    latency = tag("span", f"latency {fmt_ms(result.latency_ms)}", class_="hn-sub")
    return tag(
        "div", tag("h3", f"Case {result.case_id}"), mode, status, passed, latency, class_="hn-head"
    )


def _error_block(result: EvaluationCaseResult) -> Markup:
    if result.error is None:
        return raw("")
    e = result.error
    text = f"{e.error_type}: {e.message}" + (" (retryable)" if e.retryable else "")
    return tag("div", tag("b", "Error"), tag("div", text, class_="hn-error"))


NO_ANSWER = "no answer (retrieval only)"
NO_EXPECTED = ("no expected answers recorded", "unanswerable: the right answer is to abstain")


def abstention_badge(result: EvaluationCaseResult | None) -> Markup | None:
    """ "abstained: reason" for a response that abstained on purpose, else None."""
    if result is None or not answer_state(result):
        return None
    why = abstain_reason(result)
    return badge(f"abstained: {why}" if why else "abstained", "warn", title="no answer, on purpose")


def _answers(result: EvaluationCaseResult, expected: Any) -> Markup:
    answer = result.response.answer if result.response is not None else None
    wanted = list(expected.answers) if expected is not None else []
    abstained = abstention_badge(result)
    unanswerable = bool(abstention_expected(expected))
    if not wanted and not unanswerable:  # nothing to compare the answer with
        shown = tag("div", answer, class_="hn-answer") if answer else abstained
        return tag("div", tag("h4", "Answer"), shown) if shown is not None else raw("")
    expected_html = (
        tag("ul", *(tag("li", a) for a in wanted))
        if wanted
        else tag("div", NO_EXPECTED[unanswerable], class_="hn-note")
    )
    answer_html = (
        tag("div", answer, class_="hn-answer")
        if answer
        else abstained or tag("div", NO_ANSWER, class_="hn-note")
    )
    return tag(
        "div",
        tag("h4", "Answer vs expected"),
        table(
            ["expected answers", "answer"],
            [[expected_html, answer_html]],
            class_="hn-table hn-left",
        ),
    )


def _reasons(result: EvaluationCaseResult) -> Markup:
    """Reasons headed by who gave them: an LLM judge (its scores carry a prompt version) or
    an evaluator."""
    given = [s for s in result.scores if s.reason and s.status == "scored"]
    judged = [s for s in given if "prompt_version" in s.metadata]
    sections = [
        ("Judge reasons", judged),
        ("Evaluator reasons", [s for s in given if s not in judged]),
    ]
    return join(
        tag("div", tag("h4", title), *(_reason(s) for s in scores))
        for title, scores in sections
        if scores
    )


def _reason(score: Any) -> Markup:
    return tag(
        "div",
        tag("b", score.name),
        " ",
        _value_badge(score),
        tag("div", score.reason, class_="hn-reason"),
    )


def _value_badge(score: Any) -> Markup:
    kind = {True: "ok", False: "bad"}.get(score.passed, "muted")
    verdict = {True: " · passed", False: " · failed"}.get(score.passed, "")
    if score.status == "skipped":  # why it was skipped, next to it
        return badge(_score_text(score), "warn")
    if score.status != "scored":
        return badge(score.status, "bad")
    return badge(f"{fmt_num(score.value)}{verdict}", kind)


def _evidence(result: EvaluationCaseResult, expected: Any) -> Markup:
    rows = case_evidence(result, expected)
    if not rows:
        note = "no expected evidence recorded for this case"
        return tag("div", tag("h4", "Expected evidence"), tag("div", note, class_="hn-note"))
    found = sum(r["matched"] for r in rows)
    named = sorted((r for r in rows if r["label"] is not None), key=_evidence_order)
    anonymous = len(rows) - len(named)
    body = [
        [
            badge("matched", "ok") if r["matched"] else badge("missing", "bad"),
            r["label"],
            fmt_int(r["relevance"]) if r["relevance"] is not None else "–",
            fmt_int(r["rank"]) if r["rank"] is not None else "–",
            r["result_id"] or "–",
            r["matched_by"] or "–",
        ]
        for r in named
    ]
    header = ["", "evidence", "grade", "rank", "matching result", "matched by"]
    title = f"Expected evidence: {found} of {len(rows)} found"
    note = (
        tag(
            "div",
            f"{anonymous} more expected items were not found; this report does not "
            "name them (heta-framework records only matched ids).",
            class_="hn-note",
        )
        if anonymous
        else raw("")
    )
    return tag("div", tag("h4", title), table(header, body, class_="hn-table hn-left"), note)


def _evidence_order(row: dict[str, Any]) -> tuple:
    """Matched first (by rank), then missing by grade, highest first."""
    rank = row["rank"] if row["rank"] is not None else float("inf")
    return (not row["matched"], rank, -(row["relevance"] or 0))


def _results(result: EvaluationCaseResult, expected: Any) -> Markup:
    rows = case_results(result, expected)
    if not rows:
        return raw("")
    shown = [_result_block(r) for r in rows[:MAX_RESULTS_OPEN]]
    rest = [_result_block(r) for r in rows[MAX_RESULTS_OPEN:]]
    more = details(f"{len(rest)} more results", *rest) if rest else raw("")
    n_rel = sum(r["relevant"] for r in rows)
    return tag("div", tag("h4", f"Retrieved results ({len(rows)}, {n_rel} relevant)"), *shown, more)


def _result_block(r: dict[str, Any]) -> Markup:
    grade = r["relevance"]
    if r["relevant"]:
        mark = badge(f"relevant · grade {grade}" if grade else "relevant", "ok")
    else:
        mark = badge("not relevant" if grade is not None else "unjudged", "muted")
    matched = f" · matches {', '.join(r['matched_evidence'])}" if r["matched_evidence"] else ""
    head = tag(
        "div",
        tag("b", f"#{r['rank']}"),
        " ",
        mark,
        " ",
        tag(
            "span",
            f"doc {r['document_id'] or '–'} · score {fmt_num(r['score'], 4)} · "
            f"id {r['result_id']}{matched}",
            class_="hn-sub",
        ),
    )
    text = tag("div", truncate(r["text"], MAX_TEXT), class_="hn-chunk")
    return tag("div", head, text, class_="hn-result hn-rel" if r["relevant"] else "hn-result")


def _scores(result: EvaluationCaseResult) -> Markup:
    rows = []
    for s in result.scores:
        meta = {k: v for k, v in s.metadata.items() if k not in REASON_KEYS}
        meta_html = details("metadata", json_block(meta)) if meta else "–"
        note = "" if s.status == "skipped" else _score_note(s)  # its badge says why
        rows.append([s.name, _value_badge(s), note, meta_html])
    if not rows:
        return raw("")
    return tag(
        "div",
        tag("h4", "Scores"),
        table(["score", "value", "reason", "metadata"], rows, class_="hn-table hn-left"),
    )


def _score_note(score: Any) -> str:
    return score_note(score) or ""


def _trace_and_labels(result: EvaluationCaseResult) -> Markup:
    parts = []
    trace = result.response.trace if result.response is not None else ()
    if trace:
        items = [
            tag(
                "li",
                tag("b", e.stage),
                ": ",
                e.message,
                details("metadata", json_block(e.metadata)) if e.metadata else "",
            )
            for e in trace
        ]
        parts.append(details(f"Trace ({len(trace)} steps)", tag("ol", *items)))
    labels = result.metadata.get("labels")
    if labels:
        parts.append(details("Labels", definition_list({str(k): v for k, v in labels.items()})))
    if result.response is not None and result.response.metadata:
        parts.append(details("Response metadata", json_block(result.response.metadata)))
    return join(parts)


# --------------------------------------------------------------------------- side by side


def side_by_side(comparison: Comparison, a: Any, b: Any, case_id: str, score: str) -> Markup:
    """Case ``case_id`` under a and b in two columns, gained / lost evidence highlighted."""
    ra, rb = comparison.case_result(a, case_id), comparison.case_result(b, case_id)
    ev_a, ev_b = _side_evidence(ra), _side_evidence(rb)
    found_a = {e["label"] for e in ev_a if e["matched"]}
    found_b = {e["label"] for e in ev_b if e["matched"]}
    query = comparison.aligned.queries.get(case_id, "")
    expected = _expected_answers(ra or rb)
    head = [tag("h3", "Case ", tag("code", case_id)), tag("div", query, class_="hn-answer")]
    if expected:
        head.append(tag("div", tag("b", "expected: "), " | ".join(expected), class_="hn-sub"))
    sides = tag(
        "div",
        _side("A", a, ra, ev_a, found_b, score, gained=False),
        _side("B", b, rb, ev_b, found_a, score, gained=True),
        class_="hn-sides",
    )
    return panel(style(), raw(f"<style>{SIDE_CSS}</style>"), *head, sides, class_="hn-x")


def _side_evidence(result: EvaluationCaseResult | None) -> list[dict[str, Any]]:
    return case_evidence(result) if result is not None else []


def _expected_answers(result: EvaluationCaseResult | None) -> list[str]:
    expected = expected_of(result) if result is not None else None
    return list(expected.answers) if expected is not None else []


def _side(title, variant, result, evidence, found_other, score, gained: bool) -> Markup:
    name = getattr(variant, "name", str(variant))
    if result is None:
        return tag(
            "div", tag("h4", f"{title}: {name}"), badge("case missing", "warn"), class_="hn-side"
        )
    value = result.score(score)
    parts = [
        tag("h4", f"{title}: {name}"),
        tag("div", tag("span", _score_text(value), class_="hn-val"), " ", score),
    ]
    if result.error is not None:
        parts.append(
            tag("div", f"{result.error.error_type}: {result.error.message}", class_="hn-error")
        )
    if result.response is not None and result.response.answer:
        parts += [tag("b", "answer"), tag("div", result.response.answer, class_="hn-answer")]
    elif (abstained := abstention_badge(result)) is not None:
        parts += [tag("b", "answer"), tag("div", abstained)]
    parts += _side_reasons(result)
    parts.append(_evidence_list(evidence, found_other, gained))
    parts.append(_results_list(result))
    return tag("div", *parts, class_="hn-side")


def _score_text(score: Any) -> str:
    if score is None:
        return "–"
    if score.status == "skipped":
        why = score_note(score)
        return f"skipped: {why}" if why and why != "skipped" else "skipped"
    if score.status != "scored":
        return score.status
    return fmt_num(score.value)


def _side_reasons(result: EvaluationCaseResult) -> list[Markup]:
    out = []
    for s in result.scores:
        reason = s.reason or (s.metadata.get("error") or {}).get("message")
        if reason:
            verdict = "" if s.passed is None else (" ✓ passed" if s.passed else " ✗ failed")
            out.append(
                tag(
                    "div",
                    tag("b", f"{s.name}: {_score_text(s)}{verdict}"),
                    tag("br"),
                    reason,
                    class_="hn-reason",
                )
            )
    return out


def _evidence_list(evidence: list[dict[str, Any]], found_other: set[str], gained: bool) -> Markup:
    if not evidence:
        return tag("div", "no expected evidence recorded for this case", class_="hn-note")
    items = []
    for e in evidence:
        change = None
        if e["matched"] and e["label"] not in found_other and gained:
            change = ("gained", "hn-gained", "ok")
        elif not e["matched"] and e["label"] in found_other and gained:
            change = ("lost", "hn-lost", "bad")
        elif e["matched"] and e["label"] not in found_other and not gained:
            change = ("lost by B", "hn-lost", "bad")
        mark = badge(f"found @{e['rank']}", "ok") if e["matched"] else badge("missed", "muted")
        extra = [" ", badge(change[0], change[2])] if change else []
        items.append(tag("li", mark, " ", e["label"], *extra, class_=change[1] if change else None))
    n_found = sum(1 for e in evidence if e["matched"])
    return tag(
        "div",
        tag("b", f"expected evidence: {n_found}/{len(evidence)} found"),
        tag("ul", *items, class_="hn-ev"),
    )


def _results_list(result: EvaluationCaseResult) -> Markup:
    rows = case_results(result)
    if not rows:
        return raw("")
    items = []
    for r in rows[:MAX_RESULTS_OPEN]:
        rel = r["relevance"]
        mark = badge(f"rel {rel}", "ok") if rel else badge("not relevant", "muted")
        mark = mark if rel is not None else badge("unjudged", "muted")
        items.append(
            tag(
                "div",
                tag("b", f"#{r['rank']} "),
                r["document_id"] or r["result_id"],
                " ",
                mark,
                tag("div", truncate(r["text"], 220), class_="hn-chunk"),
                class_="hn-result hn-rel" if r["relevant"] else "hn-result",
            )
        )
    more = len(rows) - MAX_RESULTS_OPEN
    tail = [tag("div", f"… {more} more results", class_="hn-note")] if more > 0 else []
    return details(f"retrieved results ({len(rows)})", *items, *tail, open_=True)


__all__ = ["case_detail_html", "side_by_side"]
