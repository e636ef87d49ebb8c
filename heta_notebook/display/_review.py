"""``generated.review()``: a person pages through generated cases and accepts, rejects (with
a reason) or edits each query (anywidget).

Every decision is written at once to ``review.json`` in the benchmark's folder, so it
survives a kernel restart: a new widget on the same folder starts from the saved decisions.
``GeneratedBenchmark`` then leaves rejected cases out, asks edited queries as edited, and its
``generation`` manifest counts accepted, rejected, edited and pending cases. Untrusted text
(queries, documents) is set as text in the browser, never as HTML.
"""

from __future__ import annotations

from typing import Any

import anywidget
import traitlets

SNIPPET = 700

_ESM = r"""
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}
function render({ model, el: root }) {
  root.classList.add("hn-review");
  const draw = () => {
    const cases = model.get("cases"), decisions = model.get("decisions") || {};
    const index = Math.max(0, Math.min(model.get("index"), cases.length - 1));
    root.replaceChildren();
    const counts = { accept: 0, reject: 0 };
    let edited = 0;
    for (const d of Object.values(decisions)) {
      if (d.decision in counts) counts[d.decision] += 1;
      if (d.query) edited += 1;
    }
    const pending = cases.length - counts.accept - counts.reject;
    root.append(el("div", "hn-review-counts",
      `accepted ${counts.accept} · rejected ${counts.reject} · edited ${edited} · pending ${pending}`));
    if (!cases.length) { root.append(el("p", "", "no cases")); return; }
    const item = cases[index], decision = decisions[item.case_id] || {};
    const head = el("div", "hn-review-head");
    const prev = el("button", "hn-review-prev", "◀ previous");
    const next = el("button", "hn-review-next", "next ▶");
    prev.disabled = index === 0; next.disabled = index === cases.length - 1;
    prev.onclick = () => { model.set("index", index - 1); model.save_changes(); };
    next.onclick = () => { model.set("index", index + 1); model.save_changes(); };
    head.append(prev, el("span", "hn-review-page", `case ${index + 1} / ${cases.length} · ${item.case_id}`), next);
    root.append(head);
    const status = decision.decision
      ? (decision.decision === "reject" ? `rejected: ${decision.reason || "no reason"}` : "accepted")
      : "pending";
    root.append(el("div", "hn-review-status hn-" + (decision.decision || "pending"), status));
    const query = el("input", "hn-review-query");
    query.type = "text"; query.value = decision.query || item.query;
    root.append(el("label", "hn-review-label", "query"), query);
    root.append(el("div", "hn-review-label", `evidence: ${item.evidence}`));
    root.append(el("pre", "hn-review-text", item.text));
    const reason = el("input", "hn-review-reason");
    reason.type = "text"; reason.placeholder = "reason (for reject)"; reason.value = decision.reason || "";
    const decide = (kind) => {
      const all = { ...(model.get("decisions") || {}) };
      const entry = { decision: kind };
      if (kind === "reject") entry.reason = reason.value;
      if (query.value.trim() && query.value !== item.query) entry.query = query.value.trim();
      all[item.case_id] = entry;
      model.set("decisions", all);
      if (index < cases.length - 1) model.set("index", index + 1);
      model.save_changes();
    };
    const accept = el("button", "hn-review-accept", "accept");
    const reject = el("button", "hn-review-reject", "reject");
    accept.onclick = () => decide("accept");
    reject.onclick = () => decide("reject");
    const bar = el("div", "hn-review-actions");
    bar.append(accept, reject, reason);
    root.append(bar);
  };
  model.on("change:decisions", draw);
  model.on("change:index", draw);
  model.on("change:cases", draw);
  draw();
}
export default { render };
"""

_CSS = """
.hn-review { font: 13px/1.4 system-ui, sans-serif; max-width: 860px; }
.hn-review-head { display: flex; gap: 12px; align-items: center; margin: 6px 0; }
.hn-review-counts { color: #555; }
.hn-review-query { width: 100%; font-size: 14px; padding: 4px; box-sizing: border-box; }
.hn-review-text { white-space: pre-wrap; background: #f6f6f6; padding: 8px; max-height: 220px;
  overflow: auto; }
.hn-review-label { color: #555; margin-top: 6px; display: block; }
.hn-review-actions { display: flex; gap: 8px; margin-top: 6px; }
.hn-review-reason { flex: 1; }
.hn-review-status { font-weight: 600; }
.hn-accept { color: #1a7f37; } .hn-reject { color: #cf222e; } .hn-pending { color: #777; }
"""


class ReviewWidget(anywidget.AnyWidget):
    """Pages through a ``GeneratedBenchmark``'s cases; decisions are saved as they are made."""

    _esm = traitlets.Unicode(_ESM).tag(sync=True)
    _css = traitlets.Unicode(_CSS).tag(sync=True)
    cases = traitlets.List(traitlets.Dict()).tag(sync=True)
    decisions = traitlets.Dict().tag(sync=True)
    index = traitlets.Int(0).tag(sync=True)

    def __init__(self, benchmark: Any, **kwargs: Any) -> None:
        self.benchmark = benchmark
        super().__init__(cases=_cases(benchmark), decisions=benchmark.decisions(), **kwargs)
        self.observe(self._saved, names="decisions")

    def accept(self, case_id: str, *, query: str | None = None) -> None:
        """Accept ``case_id`` (optionally with an edited ``query``)."""
        self._decide(case_id, {"decision": "accept", **({"query": query} if query else {})})

    def reject(self, case_id: str, reason: str) -> None:
        """Reject ``case_id``, saying why."""
        self._decide(case_id, {"decision": "reject", "reason": reason})

    @property
    def counts(self) -> dict[str, int]:
        """Accepted, rejected, edited and pending cases (as the manifest counts them)."""
        return self.benchmark.generation.review

    def _decide(self, case_id: str, decision: dict[str, Any]) -> None:
        if case_id not in {c["case_id"] for c in self.cases}:
            raise KeyError(f"no generated case {case_id!r}")
        self.decisions = {**self.decisions, case_id: decision}

    def _saved(self, change: dict[str, Any]) -> None:
        self.benchmark.save_decisions(change["new"])

    def __repr__(self) -> str:
        review = self.counts
        return (
            f"<ReviewWidget {len(self.cases)} cases: {review['accepted']} accepted, "
            f"{review['rejected']} rejected, {review['edited']} edited, {review['pending']} pending>"
        )


def _cases(benchmark: Any) -> list[dict[str, Any]]:
    documents, cases = benchmark.generated_inputs()
    texts = {d.document_id: d.read_text() for d in documents}
    out = []
    for case in cases:
        evidence = [e.reference_id for e in case.expected.evidence if e.reference_id]
        text = texts.get(evidence[0], "") if evidence else ""
        out.append(
            {
                "case_id": case.case_id,
                "query": case.query,
                "evidence": ", ".join(evidence),
                "text": text if len(text) <= SNIPPET else text[: SNIPPET - 3] + "...",
            }
        )
    return out


__all__ = ["ReviewWidget"]
