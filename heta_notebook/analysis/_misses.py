"""Why expected evidence was missed: one class for every expected evidence item of every case.

=====================  ===============================================================
class                  when
=====================  ===============================================================
found                  matched at rank r <= k
found, not cited       found, the case expects an answer, the run has an answer step,
                       and no citation points at it
found, answer wrong    found and cited, but the case's answer score failed
not indexed            the recipe did not index the document (not in the KB: filtered
                       out; or no word in any of its chunks: empty text)
lost at stage S        at the first recorded stage S that loses it: listed by the stage
                       before S and absent after S, or inside k at the stage before S and
                       outside k after S (a rerank demoting it: the stage, not the depth,
                       takes the blame); rank: where S put it (dropped: the stage before)
split                  the recipe cut the document into several chunks, and either none
                       ranked high enough (ranked at r > k), or the evidence text spans
                       a chunk boundary: no one chunk holds it whole (``cut``: SQuAD's
                       answer at its offset or the evidence's own text, checked by the
                       embedded KB), ranked or not
beyond k               no stage lost it, and it has a rank past k, from the first of:
                       the results the system returned (deeper than k), the last recorded
                       stage's list, the embedded KB's exact deep rank
not retrieved          no rank at any depth the system exposes (the KB's exact ranks, or
                       the system returned fewer results than asked and not this one)
unknown depth          missing from the top k and nothing says how deep it is (a system
                       that returns only its top k and records no stages): never a guess
=====================  ===============================================================

``k`` is the run's ``top_k`` unless given. Ranks are positions in the result list (what ``k``
cuts); ``document_rank`` is the position among documents (chunks mapped, best kept); ``cut``
says whether the chunking cut a missed item's evidence text (None: not checked).

Where the facts come from: the response's results (``evaluators._matching``), the embedded
KB's exact deep ranks and chunk-boundary checks (``response.metadata["deep_ranks"]``,
``kb._deep_rank``, ``kb._passages``) and the stages
a system records (``systems.response_stages``: ``response.metadata["stages"]`` or trace
events).

For a whole report (``evidence_misses``), the cases whose evidence is named by reference id
alone, with no stages, are classified at once from arrays (``analysis._miss_facts``: the
report's ``ReportColumns``, citations and answer scores included, no record built) by the same
rules below; the others go case by case through :func:`classify_case`.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from heta_notebook._util.gc import paused_gc
from heta_notebook.analysis._case_rows import expected_of
from heta_notebook.analysis._miss_facts import (
    ANSWER_SCORE_COLUMNS,
    ANSWER_SCORES,
    MISS_COLUMNS,
    MISS_ENCODED,
    MissFacts,
    answer_failed,
    report_facts,
)
from heta_notebook.analysis._slices import SliceKey, slice_name, slice_of
from heta_notebook.evaluators import _matching as matching
from heta_notebook.reports._columns import ReportColumns
from heta_notebook.schema._records import (
    BenchmarkEvidence,
    EvaluationCaseResult,
    EvaluationReport,
    QueryResult,
)
from heta_notebook.systems._stages import Stage, response_stages

FOUND = "found"
NOT_CITED = "found, not cited"
ANSWER_WRONG = "found, answer wrong"
NOT_INDEXED = "not indexed"
LOST_AT = "lost at stage"
SPLIT = "split"
BEYOND_K = "beyond k"
NOT_RETRIEVED = "not retrieved"
UNKNOWN_DEPTH = "unknown depth"

CLASSES: tuple[str, ...] = (FOUND, NOT_CITED, ANSWER_WRONG, NOT_INDEXED, LOST_AT, SPLIT, BEYOND_K)
CLASSES += (NOT_RETRIEVED, UNKNOWN_DEPTH)
FOUND_CLASSES = (FOUND, NOT_CITED, ANSWER_WRONG)

EVIDENCE_COLUMNS = (
    "case_id",
    "query_mode",
    "index",
    "label",
    "reference_id",
    "relevance",
    "matched",  # matched by a returned result at any rank (``frames.evidence()``'s matched)
    "miss_class",
    "stage",
    "rank",
    "rank_source",
    "document_rank",
    "chunks",
    "cut",
    "stage_ranks",
    "k",
)


# --------------------------------------------------------------------------- stages


def _stage_rank(
    stage: Stage, item: BenchmarkEvidence, results: Mapping[str, QueryResult]
) -> int | None:
    """1-based rank of the first id in ``stage`` that is ``item`` (None when absent)."""
    docs = stage.document_ids
    for rank, rid in enumerate(stage.ids, start=1):
        if rid in results and matching.match_result(item, results[rid]) is not None:
            return rank
        if item.reference_id is not None:
            doc = str(docs[rank - 1]) if docs is not None else rid
            if doc == item.reference_id:
                return rank
    return None


# --------------------------------------------------------------------------- one case


def classify_case(
    result: EvaluationCaseResult, *, k: int | None = None, requested: int | None = None
) -> list[dict[str, Any]]:
    """One row per expected evidence item of ``result``: its class, rank and where from.

    ``k``: the cut (default: the response's ``top_k``, else ``requested``, else the number of
    results). ``requested``: how many results the run asked for (the report's ``top_k``).
    """
    expected = expected_of(result)
    if expected is None or not expected.evidence or result.response is None:
        return []
    response = result.response
    results = response.results
    requested = _int(response.metadata.get("top_k")) or requested
    k = k or requested or len(results)
    matches = matching.match_evidence(expected.evidence, results)
    stages = response_stages(response)
    by_id = {r.id: r for r in results}
    deep = response.metadata.get("deep_ranks")
    deep = deep if isinstance(deep, Mapping) else None
    exhausted = requested is not None and len(results) < requested
    answer = _answer_facts(result) if expected.answers or expected.value is not None else None
    rows = []
    for m in matches:
        item = expected.evidence[m.index]
        info = deep.get(item.reference_id) if deep and item.reference_id else None
        stage_ranks = {s.name: _stage_rank(s, item, by_id) for s in stages}
        row = {
            "case_id": result.case_id,
            "query_mode": result.query_mode,
            "index": m.index,
            "label": m.label,
            "reference_id": item.reference_id,
            "relevance": m.relevance,
            "matched": bool(m.matched),
            "stage": None,
            "rank": m.rank,
            "rank_source": "response" if m.rank is not None else None,
            "document_rank": _int((info or {}).get("document_rank")),
            "chunks": _int((info or {}).get("chunks")),
            "stage_ranks": stage_ranks or None,
            "k": k,
        }
        if m.rank is not None and m.rank <= k:
            row["miss_class"] = _found_class(item, results, answer)
        else:
            seen = functools.partial(_chunks_seen, item, results[k:])
            _classify_miss(row, stages, stage_ranks, info, exhausted, seen)
        rows.append({c: row.get(c) for c in EVIDENCE_COLUMNS})
    return rows


def _classify_miss(
    row: dict[str, Any],
    stages: list[Stage],
    stage_ranks: dict[str, int | None],
    info: Mapping[str, Any] | None,
    exhausted: bool,
    chunks_seen: Callable[[], int],
) -> None:
    """Fill ``miss_class`` (and ``stage``/``rank``/``cut``) for an item not found within ``k``.

    The one rule for misses, record by record and for a whole report (``evidence_misses``).
    ``chunks_seen``: how many results beyond k match the item (asked only without deep ranks).
    """
    if info is not None and not info.get("indexed", True):
        row["miss_class"], row["rank"], row["rank_source"] = NOT_INDEXED, None, None
        return
    names = [s.name for s in stages]
    lost = _lost_at(names, stage_ranks, row.get("k"))
    if lost is not None:
        before, after = lost
        ended = stage_ranks[after]  # demoted past k: where it ended; dropped: where it was
        rank, source = (ended, after) if ended is not None else (stage_ranks[before], before)
        row.update(miss_class=LOST_AT, stage=after, rank=rank, rank_source=f"stage:{source}")
        return
    if row["rank"] is None and names and stage_ranks[names[-1]] is not None:
        row["rank"], row["rank_source"] = stage_ranks[names[-1]], f"stage:{names[-1]}"
    if row["rank"] is None and info is not None and info.get("chunk_rank") is not None:
        row["rank"], row["rank_source"] = int(info["chunk_rank"]), "deep rank"
    row["cut"] = bool(info.get("cut")) if info and info.get("cut") is not None else None
    if row["cut"]:  # no chunk can be retrieved with the evidence, however they rank
        row["miss_class"] = SPLIT
    elif row["rank"] is not None:
        chunks = int(info.get("chunks") or 1) if info else chunks_seen()
        row["miss_class"] = SPLIT if chunks > 1 else BEYOND_K
    elif info is not None or exhausted:
        row["miss_class"] = NOT_RETRIEVED
    else:
        row["miss_class"] = UNKNOWN_DEPTH


def _lost_at(
    names: Sequence[str], stage_ranks: Mapping[str, int | None], k: int | None
) -> tuple[str, str] | None:
    """The first (stage before, stage S) where the item leaves: listed before and absent after
    S, or inside ``k`` before and outside ``k`` after S (a rerank demoting it); None else."""
    for before, after in zip(names, names[1:], strict=False):
        was, now = stage_ranks[before], stage_ranks[after]
        if was is not None and now is None:
            return before, after
        if k is not None and was is not None and now is not None and was <= k < now:
            return before, after
    return None


def _chunks_seen(item: BenchmarkEvidence, results: Sequence[QueryResult]) -> int:
    """Distinct results beyond k that match ``item`` (several chunks of one document: split)."""
    return sum(matching.match_result(item, r) is not None for r in results)


def _answer_facts(result: EvaluationCaseResult) -> dict[str, Any] | None:
    """Cited result ids and whether the answer score failed, for runs with an answer step."""
    response = result.response
    if response is None:
        return None
    step = response.answer is not None or response.citations or "answer" in response.metadata
    if not step:
        return None
    cited = {c.result_id or c.id for c in response.citations}
    wrong = None
    for name in ANSWER_SCORES:
        score = result.score(name)
        if score is not None and not score.metadata.get("skipped"):
            value = score.value
            wrong = score.passed is False or (score.passed is None and value in (0, 0.0, False))
            break
    return {"cited": cited, "wrong": bool(wrong)}


def _found_class(
    item: BenchmarkEvidence, results: Sequence[QueryResult], answer: dict[str, Any] | None
) -> str:
    if answer is None:
        return FOUND
    cited = [r for r in results if r.id in answer["cited"]]
    if not any(matching.match_result(item, r) is not None for r in cited):
        return NOT_CITED
    return ANSWER_WRONG if answer["wrong"] else FOUND


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


# --------------------------------------------------------------------------- reports


def requested_top_k(report: EvaluationReport) -> int | None:
    """The ``top_k`` the run asked for (``metadata["config"]["top_k"]``), when recorded."""
    config = report.metadata.get("config")
    return _int(config.get("top_k")) if isinstance(config, Mapping) else None


def evidence_misses(
    report: EvaluationReport,
    *,
    k: int | None = None,
    by: SliceKey | None = None,
    rows: np.ndarray | None = None,
) -> pd.DataFrame:
    """One row per expected evidence item per case × mode, with its miss class.

    Cases the reference rule decides (``analysis._miss_facts``) are classified for the whole
    report at once, from the report's columns without building records (an answer step's
    citations and scores too); the rest (locators, texts, stages) record by record with
    :func:`classify_case`.
    Both apply the same rules and give the same rows, in report order. ``rows`` (ascending
    report rows) classifies only those cases (an explorer's embedded rows of a large
    report: their row groups only, ``ROWS_PER_PART`` at a time to bound memory), with the
    same rows for them.
    """
    frame = _evidence_frame(report, k=k, by=by, rows=rows)
    return frame.drop(columns="_row")


def _evidence_frame(
    report: EvaluationReport, *, k: int | None, by: SliceKey | None, rows: np.ndarray | None
) -> pd.DataFrame:
    """:func:`evidence_misses`'s frame with ``_row``: each item's report row."""
    requested = requested_top_k(report)
    with paused_gc():  # parsed JSON, records and row lists are acyclic: nothing to rescan
        if rows is None:
            facts, fast, slow = _classified(report.frames().columns, k, requested)
        elif by is not None:
            raise ValueError("evidence_misses takes rows= or by=, not both")
        else:
            fast, slow = _classified_rows(report.frames().columns, rows, k, requested)
        frame = _merged(fast, slow)
    if by is not None:
        frame[slice_name(by)] = _slices(report, facts, by)[frame["_row"].to_numpy(dtype=np.int64)]
    for column in ("rank", "document_rank", "chunks", "k"):
        frame[column] = frame[column].astype("Int64")
    return frame


ROWS_PER_PART = 5_000  # case rows classified at once when a few rows of a report are asked


def _classified_rows(
    columns: ReportColumns, rows: np.ndarray, k: int | None, requested: int | None
) -> tuple[dict[str, list], list[dict[str, Any]]]:
    """:func:`_classified`'s rows for the report ``rows`` only, a part of contiguous rows
    at a time (each reads its own row groups; its facts are freed before the next)."""
    rows = np.unique(np.asarray(rows, dtype=np.int64))
    fast: dict[str, list] = {}
    slow: list[dict[str, Any]] = []
    for part in np.array_split(rows, max(1, -(-len(rows) // ROWS_PER_PART))):
        subset = columns.subset(part, MISS_COLUMNS, encoded=MISS_ENCODED)
        scores = functools.partial(_answer_scores_of, columns, part)
        _, got, others = _classified(subset, k, requested, scores)
        got["_row"] = part[np.asarray(got["_row"], dtype=np.int64)].tolist()  # report rows
        for name, values in got.items():
            fast.setdefault(name, []).extend(values)
        slow += [{**row, "_row": int(part[row["_row"]])} for row in others]
    return fast, slow


def _answer_scores_of(
    columns: ReportColumns, part: np.ndarray, rows: np.ndarray
) -> tuple[ReportColumns, np.ndarray]:
    """The scores of a subset's ``rows`` (of the report rows ``part``): read from the report
    only for the answer-step rows (a subset reads no scores), renumbered 0.."""
    wanted = columns.subset(part[rows], ANSWER_SCORE_COLUMNS, encoded=MISS_ENCODED)
    return wanted, np.arange(len(rows))


def _classified(
    columns: ReportColumns,
    k: int | None,
    requested: int | None,
    scores: Callable[[np.ndarray], tuple[ReportColumns, np.ndarray]] | None = None,
) -> tuple[MissFacts, dict[str, list], list[dict[str, Any]]]:
    """The facts, the rows they decide (columns) and the rows of the other cases, each
    classified by :func:`classify_case` (a stored report builds only those records).
    ``scores``: the columns holding the scores of the given rows, and their rows there
    (default: ``columns`` itself)."""
    facts = report_facts(columns)
    step = np.flatnonzero(facts.fast & facts.answer_step)
    wrong = np.zeros(columns.n_rows, dtype=bool)
    if len(step):
        wrong[step] = answer_failed(*(scores or (lambda rows: (columns, rows)))(step))
    fast = _fast_rows(facts, k, requested, wrong)
    slow = np.flatnonzero(~facts.fast)
    records = columns.records_at(slow)
    rows = [
        {**row, "_row": int(i)}
        for i, record in zip(slow.tolist(), records, strict=True)
        for row in classify_case(record, k=k, requested=requested)
    ]
    return facts, fast, rows


def _merged(fast: dict[str, list], slow: list[dict[str, Any]]) -> pd.DataFrame:
    """The fast rows and the record-by-record rows as one frame, in report order (one
    frame built from all values, so each column's dtype is inferred as from the records)."""
    columns = [*EVIDENCE_COLUMNS, "_row"]
    if slow:
        rows = np.asarray([*fast["_row"], *(row["_row"] for row in slow)], dtype=np.int64)
        order = np.argsort(rows, kind="stable").tolist()  # a case's items stay in order
        pick = operator.itemgetter(*order) if len(order) > 1 else lambda v: tuple(v)
        for column in columns:
            fast[column] = list(pick([*fast[column], *(row[column] for row in slow)]))
    return pd.DataFrame(fast, columns=columns)


def _fast_rows(
    facts: MissFacts, k: int | None, requested: int | None, wrong: np.ndarray
) -> dict[str, list]:
    """The ``EVIDENCE_COLUMNS`` (and ``_row``) of every item of the rows ``facts`` decide:
    first ranks looked up for all items at once, then each found item of an answer-step
    row and each miss given its class by the rules :func:`classify_case` applies
    (:func:`_found_class` from the citation marks and ``wrong``, per case row: its answer
    score failed; :func:`_classify_miss`, no stages)."""
    item_row: list[int] = []
    refs: list[Any] = []
    index: list[int] = []
    relevance: list[Any] = []
    cut_k: list[int] = []
    exhausted: list[bool] = []
    for row in np.flatnonzero(facts.fast).tolist():
        items, meta = facts.expected[row], facts.metadata[row]
        if meta is None or items is None or not items.refs:
            continue
        asked = _int(meta.get("top_k")) or requested
        n, m = int(facts.n_results[row]), len(items.refs)
        item_row += [row] * m
        refs += items.refs
        index += range(m)
        relevance += items.relevance
        cut_k += [k or asked or n] * m
        exhausted += [asked is not None and n < asked] * m
    rows = np.asarray(item_row, dtype=np.int64)
    cuts = np.asarray(cut_k, dtype=np.int64)
    first, beyond, cited = facts.firsts.lookup(rows, refs, cuts)
    infos = _deep_infos(facts, item_row, refs)
    ranks = [r or None for r in first.tolist()]
    out: dict[str, list] = {
        "case_id": facts.case_id[rows].tolist(),
        "query_mode": facts.query_mode[rows].tolist(),
        "index": index,
        "label": refs,
        "reference_id": refs,
        "relevance": relevance,
        "matched": [r is not None for r in ranks],
        "miss_class": [FOUND] * len(refs),
        "stage": [None] * len(refs),
        "rank": ranks,
        "rank_source": ["response" if r is not None else None for r in ranks],
        "document_rank": [_int(i.get("document_rank")) if i else None for i in infos],
        "chunks": [_int(i.get("chunks")) if i else None for i in infos],
        "cut": [None] * len(refs),
        "stage_ranks": [None] * len(refs),
        "k": cut_k,
        "_row": item_row,
    }
    found = (first > 0) & (first <= cuts)
    for i in np.flatnonzero(found & facts.answer_step[rows]).tolist():
        wrong_answer = ANSWER_WRONG if wrong[item_row[i]] else FOUND
        out["miss_class"][i] = wrong_answer if cited[i] else NOT_CITED
    for i in np.flatnonzero(~found).tolist():
        row = {"rank": ranks[i], "rank_source": out["rank_source"][i], "stage": None}
        seen = int(beyond[i])
        _classify_miss(row, [], {}, infos[i], exhausted[i], functools.partial(int, seen))
        for column in ("miss_class", "rank", "rank_source", "cut", "stage"):
            out[column][i] = row.get(column)
    return out


def _deep_infos(facts: MissFacts, item_row: list[int], refs: list[str]) -> list[Any]:
    """Each item's deep rank (``response.metadata["deep_ranks"][reference_id]``), or None."""
    out = []
    for row, ref in zip(item_row, refs, strict=True):
        deep = facts.metadata[row].get("deep_ranks")  # type: ignore[union-attr]
        out.append(deep.get(ref) if deep and isinstance(deep, Mapping) else None)
    return out


def _slices(report: EvaluationReport, facts: MissFacts, by: SliceKey) -> np.ndarray:
    """The slice of every case row (records are built only for a function ``by``)."""
    if callable(by):
        return np.asarray([slice_of(r, by) for r in report.case_results], dtype=object)
    return np.asarray(
        [
            slice_of(SimpleNamespace(case_id=c, metadata=m), by)  # type: ignore[arg-type]
            for c, m in zip(facts.case_id.tolist(), facts.case_metadata, strict=True)
        ],
        dtype=object,
    )


def class_label(row: Mapping[str, Any]) -> str:
    """``"lost at stage rerank"`` for stage losses, else the class itself."""
    cls = row["miss_class"]
    return f"{cls} {row['stage']}" if cls == LOST_AT and row.get("stage") else cls


def class_labels(evidence: pd.DataFrame) -> list[str]:
    """:func:`class_label` of every evidence row (only stage losses are relabelled one by one)."""
    labels = evidence["miss_class"].tolist()
    for i in np.flatnonzero((evidence["miss_class"] == LOST_AT).to_numpy()).tolist():
        labels[i] = class_label({"miss_class": labels[i], "stage": evidence["stage"].iat[i]})
    return labels


def miss_counts(evidence: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Counts per ``keys`` × class (stage losses named by stage), tidy, in taxonomy order."""
    if evidence.empty:
        return pd.DataFrame(columns=[*keys, "miss_class", "count", "share"])
    labelled = evidence.assign(miss_class=class_labels(evidence))
    counts = labelled.groupby([*keys, "miss_class"], sort=False).size().rename("count")
    counts = counts.reset_index()
    if keys:
        totals = counts.groupby(list(keys), sort=False)["count"].transform("sum")
    else:
        totals = counts["count"].sum()
    counts["share"] = counts["count"] / totals
    order = {c: i for i, c in enumerate(CLASSES)}
    counts["_order"] = [order.get(c, order[LOST_AT]) for c in counts["miss_class"]]
    counts = counts.sort_values([*keys, "_order"], kind="stable").drop(columns="_order")
    return counts.reset_index(drop=True)


def report_misses(
    report: EvaluationReport,
    *,
    level: str = "class",
    k: int | None = None,
    by: SliceKey | None = None,
    recipe: str | None = None,
) -> pd.DataFrame:
    """``report.misses()``: counts per recipe × mode × class, or ``level="evidence"`` rows."""
    if level not in ("class", "evidence"):
        raise ValueError(f"level must be 'class' or 'evidence', not {level!r}")
    evidence = evidence_misses(report, k=k, by=by)
    evidence.insert(0, "recipe", recipe or recipe_name(report))
    return evidence if level == "evidence" else class_counts(evidence, by)


def evidence_with_rows(
    report: EvaluationReport, recipe: str | None = None
) -> tuple[pd.DataFrame, np.ndarray]:
    """``report_misses(level="evidence")`` and the report row of each of its rows (what a
    save keeps beside the counts: ``ReportFrames.miss_rows_to_save``)."""
    frame = _evidence_frame(report, k=None, by=None, rows=None)
    rows = frame.pop("_row").to_numpy(dtype=np.int64)
    frame.insert(0, "recipe", recipe or recipe_name(report))
    return frame, rows


def class_counts(evidence: pd.DataFrame, by: SliceKey | None = None) -> pd.DataFrame:
    """``report.misses()``'s counts per recipe × mode (× slice) × class, from its evidence rows."""
    return miss_counts(evidence, ["recipe", "query_mode", *([slice_name(by)] if by else [])])


def recipe_name(report: EvaluationReport) -> str:
    """The recipe's name as the report records it (else the knowledge base's)."""
    name = report.recipe_manifest.get("name") if report.recipe_manifest else None
    return str(name or report.knowledge_base_name)


def miss_line(counts: pd.DataFrame) -> str:
    """``"66 misses: 40 beyond k · 20 not retrieved · 6 split"`` from one variant's counts."""
    missed = counts[~counts["miss_class"].isin(FOUND_CLASSES)]
    total = int(missed["count"].sum())
    if total == 0:
        return "no misses"
    parts = " · ".join(
        f"{int(n)} {c}" for c, n in zip(missed["miss_class"], missed["count"], strict=True)
    )
    return f"{total} miss{'es' if total != 1 else ''}: {parts}"


# --------------------------------------------------------------------------- comparisons


def comparison_misses(comparison: Any, by: SliceKey | None = None) -> pd.DataFrame:
    """Per (baseline, variant) pair × class: counts under a and b, and ``delta`` = b − a.

    Only cases both sides have count (a missing case is not a lost evidence), like
    ``evidence_changes``. ``by`` adds a slice column.
    """
    by = comparison.by if by is None else by
    keys = [slice_name(by)] if by is not None else []
    frames = []
    for a, b in comparison.pairs():
        if by is None and _variant_cases(comparison, a) == _variant_cases(comparison, b):
            ca, cb = _variant_counts(comparison, a), _variant_counts(comparison, b)
            frames.append(_deltas(a, b, ca.drop(columns="share"), cb.drop(columns="share"), []))
            continue  # same cases on both sides: the saved counts are the counts
        ea, eb = _variant_misses(comparison, a, by), _variant_misses(comparison, b, by)
        both = set(ea["case_id"]) & set(eb["case_id"])
        ca = miss_counts(ea[ea["case_id"].isin(both)], keys).drop(columns="share")
        cb = miss_counts(eb[eb["case_id"].isin(both)], keys).drop(columns="share")
        frames.append(_deltas(a, b, ca, cb, keys))
    columns = ["a", "b", *keys, "miss_class", "count_a", "count_b", "delta"]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]


def _deltas(
    a_variant: Any, b_variant: Any, ca: pd.DataFrame, cb: pd.DataFrame, keys: list[str]
) -> pd.DataFrame:
    """One pair's counts under a and b side by side, and ``delta`` = b − a."""
    if not keys:  # the usual case: a few classes, no slice (pandas' merge costs ~8 ms)
        a = dict(zip(ca["miss_class"], ca["count"], strict=True))
        b = dict(zip(cb["miss_class"], cb["count"], strict=True))
        classes = list(dict.fromkeys([*a, *b]))
        count_a = [int(a.get(c, 0)) for c in classes]
        count_b = [int(b.get(c, 0)) for c in classes]
        return pd.DataFrame(
            {
                "a": [a_variant.name] * len(classes),
                "b": [b_variant.name] * len(classes),
                "miss_class": classes,
                "count_a": count_a,
                "count_b": count_b,
                "delta": [y - x for x, y in zip(count_a, count_b, strict=True)],
            }
        )
    merged = ca.merge(cb, on=[*keys, "miss_class"], how="outer", suffixes=("_a", "_b"))
    merged[["count_a", "count_b"]] = merged[["count_a", "count_b"]].fillna(0).astype(int)
    merged["delta"] = merged["count_b"] - merged["count_a"]
    merged.insert(0, "b", b_variant.name)
    merged.insert(0, "a", a_variant.name)
    return merged


def variant_counts(comparison: Any) -> pd.DataFrame:
    """Counts per variant (``"label · mode"``) × class, tidy, in the comparison's order."""
    frames = [_variant_counts(comparison, v).assign(variant=v.name) for v in comparison.variants]
    if not frames:
        return pd.DataFrame(columns=["variant", "miss_class", "count", "share"])
    return pd.concat(frames, ignore_index=True)[["variant", "miss_class", "count", "share"]]


def _variant_counts(comparison: Any, variant: Any) -> pd.DataFrame:
    """One variant's counts per class (``miss_class``, ``count``, ``share``) from its report's
    ``misses()``: a saved report's header counts, nothing re-classified."""
    counts = comparison.frames(variant.report).misses()
    counts = counts[counts["query_mode"] == variant.mode]
    return counts[["miss_class", "count", "share"]].reset_index(drop=True)


def _variant_cases(comparison: Any, variant: Any) -> frozenset[str]:
    """The case ids one variant ran (its report's case results in its mode), read as codes."""
    frames = comparison.frames(variant.report)
    ids, id_values = frames.case_codes("case_id")
    modes, mode_values = frames.case_codes("query_mode")
    mode = [i for i, m in enumerate(np.asarray(mode_values).tolist()) if m == variant.mode]
    picked = ids[np.isin(modes, mode)] if mode else ids[:0]
    return frozenset(np.asarray(id_values)[np.unique(picked[picked >= 0])].tolist())


def _variant_misses(comparison: Any, variant: Any, by: SliceKey | None) -> pd.DataFrame:
    if by is None:  # the report's cached per-evidence frame
        frame = comparison.frames(variant.report).misses(level="evidence")
    else:
        frame = evidence_misses(comparison.reports[variant.report], by=by)
    return frame[frame["query_mode"] == variant.mode]


def delta_sentence(deltas: pd.DataFrame) -> str:
    """``"B loses 24 evidences to beyond k, 6 to split"`` for one pair's deltas."""
    worse = deltas[~deltas["miss_class"].isin(FOUND_CLASSES) & (deltas["delta"] > 0)]
    worse = worse.sort_values("delta", ascending=False, kind="stable")
    if worse.empty:
        return "no new misses"
    parts = [f"{int(d)} to {c}" for c, d in zip(worse["miss_class"], worse["delta"], strict=True)]
    n = int(worse["delta"].iloc[0])
    head = f"loses {n} evidence{'s' if n != 1 else ''} to {worse['miss_class'].iloc[0]}"
    return ", ".join([head, *parts[1:]])


__all__ = [
    "CLASSES",
    "FOUND_CLASSES",
    "class_counts",
    "class_labels",
    "classify_case",
    "comparison_misses",
    "delta_sentence",
    "evidence_misses",
    "evidence_with_rows",
    "miss_counts",
    "miss_line",
    "report_misses",
    "variant_counts",
]
