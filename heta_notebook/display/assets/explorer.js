// heta_notebook case explorers: the report explorer and the comparison explorer.
//
// An anywidget ES module (render({model, el})). Filters, sort, paging, text search and the
// detail pane run here, over data synced once from Python: per report a gzip+base64 JSON
// payload of columns (display/_explorer_data.py) held by a separate data model that several
// explorers share; its texts sit in text chunk models shared by the session's reports. The
// same module runs live in Jupyter, from saved widget state in an exported notebook, and in
// report.to_html() pages through a tiny model shim.
//
// Every text from the data goes into the page through textContent / text nodes (h() below);
// nothing from the data is ever parsed as HTML.

const PAGE_SIZES = [10, 15, 25, 50];
const MAX_RESULTS_OPEN = 10;
const REPORT_ORDER = "report order";
const LATENCY = "latency";
const STATUS = ["scored", "skipped", "error"];
const FILTERS = {
  all: "all cases",
  changed: "score changed",
  better: "B better",
  worse: "B worse",
  lost: "evidence found by A, missed by B",
  gained: "evidence found by B, missed by A",
  flipped: "judge verdict (passed) flipped",
};
const SCOPES = {
  either: "in A or B",
  b_not_a: "in B but not in A",
  a_not_b: "in A but not in B",
  both: "in A and in B",
};

const CSS = `
.hnx{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;font-size:13px;color:#1F2937;line-height:1.4}
.hnx *{box-sizing:border-box}
.hnx .hnx-title{font-weight:700;font-size:15px;margin:2px 0 6px 0}
.hnx .hnx-controls{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center;margin:4px 0 8px 0}
.hnx label{display:inline-flex;gap:4px;align-items:center;color:#374151}
.hnx select,.hnx input[type=text],.hnx input[type=number]{font:inherit;padding:2px 4px;border:1px solid #D1D5DB;border-radius:4px;background:#fff;color:#111827}
.hnx input[type=number]{width:72px}
.hnx input[type=text]{width:220px}
.hnx button{font:inherit;padding:2px 10px;border:1px solid #D1D5DB;border-radius:4px;background:#F9FAFB;cursor:pointer;color:#111827}
.hnx button:disabled{opacity:.45;cursor:default}
.hnx .hnx-main{display:flex;gap:12px;align-items:flex-start}
.hnx .hnx-listcol{flex:0 0 40%;min-width:300px;max-width:40%;overflow:hidden}
.hnx table.hnx-list{table-layout:fixed}
.hnx .hnx-list td{overflow:hidden;text-overflow:ellipsis}
.hnx .hnx-list th{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.hnx .hnx-detail h3,.hnx .hnx-sbs h3{overflow-wrap:anywhere}
.hnx .hnx-list td.hnx-id{white-space:nowrap}
.hnx .hnx-list th.hnx-idcol{width:24%}.hnx .hnx-list th.hnx-modecol{width:25%}.hnx .hnx-list th.hnx-numcol{width:4.6em}.hnx .hnx-list th.hnx-deltacol{width:5.6em}
.hnx .hnx-pane{flex:1 1 auto;min-width:0;border:1px solid #E5E7EB;border-radius:6px;padding:6px 10px;max-height:900px;overflow:auto}
.hnx table{border-collapse:collapse;width:100%}
.hnx th,.hnx td{text-align:left;padding:3px 6px;border-bottom:1px solid #F3F4F6;vertical-align:top}
.hnx th{font-weight:600;color:#4B5563;border-bottom:1px solid #E5E7EB}
.hnx .hnx-list tbody tr{cursor:pointer}
.hnx .hnx-list tbody tr:hover{background:#F3F4F6}
.hnx .hnx-list tbody tr.hnx-selected{background:#DBEAFE}
.hnx .hnx-pager{display:flex;gap:8px;align-items:center;margin:6px 0}
.hnx .hnx-note{color:#6B7280;font-size:12px;margin:3px 0}
.hnx .hnx-warn{color:#92400E;background:#FEF3C7;border-radius:4px;padding:3px 6px;margin:4px 0;font-size:12px}
.hnx .hnx-badge{display:inline-block;padding:0 6px;border-radius:9px;font-size:11px;border:1px solid #D1D5DB;margin-right:3px;white-space:nowrap}
.hnx .hnx-ok{background:#DCFCE7;border-color:#86EFAC;color:#166534}
.hnx .hnx-bad{background:#FEE2E2;border-color:#FCA5A5;color:#991B1B}
.hnx .hnx-info{background:#DBEAFE;border-color:#93C5FD;color:#1E40AF}
.hnx .hnx-muted{background:#F3F4F6;color:#4B5563}
.hnx .hnx-warnb{background:#FEF3C7;border-color:#FCD34D;color:#92400E}
.hnx h3{font-size:15px;margin:4px 0}
.hnx h4{font-size:13px;margin:10px 0 4px 0}
.hnx pre,.hnx .hnx-text{white-space:pre-wrap;word-break:break-word;margin:2px 0;font-family:inherit}
.hnx .hnx-chunk{white-space:pre-wrap;word-break:break-word;color:#374151;font-size:12px;margin:2px 0 4px 0}
.hnx .hnx-result{border-left:3px solid #E5E7EB;padding:2px 8px;margin:4px 0}
.hnx .hnx-result.hnx-rel{border-left-color:#22C55E}
.hnx .hnx-error{color:#991B1B;background:#FEF2F2;border-radius:4px;padding:3px 6px}
.hnx .hnx-reason{background:#F9FAFB;border-radius:4px;padding:3px 6px;margin:3px 0;white-space:pre-wrap}
.hnx .hnx-sub{color:#6B7280;font-size:12px}
.hnx .hnx-sides{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.hnx .hnx-side{border:1px solid #E5E7EB;border-radius:6px;padding:6px 10px;min-width:0}
.hnx .hnx-gained{background:#E8F5E9}
.hnx .hnx-lost{background:#FFEBEE}
.hnx ul.hnx-ev{list-style:none;padding-left:0;margin:2px 0}
.hnx ul.hnx-ev li{padding:1px 4px;border-radius:3px;margin:1px 0}
.hnx .hnx-val{font-size:18px;font-weight:700}
.hnx .hnx-pos{color:#166534}.hnx .hnx-neg{color:#991B1B}
.hnx details>summary{cursor:pointer;color:#374151}
.hn-explorer-fallback,.hn-compare-explorer-fallback{display:none !important}
`;

// ------------------------------------------------------------------ DOM and formatting

/** An element; string / number children become text nodes (never parsed as HTML). */
function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = String(value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "value") el.value = value;
    else if (key === "checked" || key === "disabled" || key === "open" || key === "selected") el[key] = !!value;
    else el.setAttribute(key, String(value));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === undefined || kid === null || kid === false || kid === "") continue;
    el.append(kid instanceof Node ? kid : String(kid));
  }
  return el;
}

function badge(text, kind) {
  return h("span", { class: `hnx-badge hnx-${kind || "muted"}` }, text);
}

function fmtNum(value, digits = 3) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  return Number(value).toFixed(digits);
}

function fmtInt(value) {
  return value === null || value === undefined ? "–" : Number(value).toLocaleString("en-US");
}

// fmtNum, fmtInt, fmtMs and fmtDelta follow heta_notebook/_util/formatting.py (the one number format)
function fmtMs(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  if (value < 1) return `${value.toFixed(2)} ms`;
  if (value < 1000) return `${value.toFixed(0)} ms`;
  if (value < 60000) return `${(value / 1000).toFixed(2)} s`;
  return `${(value / 60000).toFixed(1)} min`;
}

function fmtDelta(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  if (Number(value.toFixed(3)) === 0) return "±0.000";
  return (value > 0 ? "+" : "−") + Math.abs(value).toFixed(3);
}

function shorten(text, limit) {
  return text.length <= limit ? text : text.slice(0, limit - 1) + "…";
}

function select(options, value, onchange) {
  const el = h("select", { onchange: () => onchange(el.value) },
    options.map(([v, label]) => h("option", { value: v }, label)));
  el.value = value;
  return el;
}

/** Typing in a box commits on Enter (and on leaving it); keys never reach the host page, so
 * JupyterLab's notebook shortcuts (Enter, A, B, D D...) do not fire while a reader types. */
function onCommit(input, commitValue) {
  input.addEventListener("change", () => commitValue(input.value));
  input.addEventListener("keydown", (event) => {
    event.stopPropagation();
    if (event.key === "Enter") {
      event.preventDefault();
      commitValue(input.value);
    }
  });
}

// ------------------------------------------------------------------ data

async function inflate(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

const FETCH_TIMEOUT_MS = 8000;  // no answer from the kernel by then: say the details are not here

/** One report's columns (explorer_data.encode_report) with readers by embedded index.
 * The index columns (ids, modes, queries, errors, labels, latency, score values) hold every
 * embedded case; the detail columns (answer, expected, evidence, results, trace, score
 * notes) hold null for a case whose details are not in the payload. A live kernel sends
 * them on request (custom message "details", merged by merge()). */
class ReportData {
  constructor(p, model) {
    this.p = p;
    this.c = p.cases;
    this.n = p.rows.length;
    this.rowIndex = new Map(p.rows.map((row, i) => [row, i]));
    this._hay = null;
    this.model = model || null;
    this.nDetailed = p.n_detailed ?? this.n;
    this.pending = new Map();  // report row -> time asked
    this.failed = new Map();  // report row -> why its details could not come
    this.listeners = new Set();
    if (this.model && this.nDetailed < this.n && typeof this.model.on === "function") {
      this.model.on("msg:custom", (msg) => {
        if (msg && msg.type === "details") this.merge(msg);
      });
    }
  }
  s(i) { return i !== null && i !== undefined && i >= 0 ? this.p.strings[i] : null; }
  full(i) { return i !== null && i !== undefined && i >= 0 ? this.p.full_length[String(i)] || null : null; }
  hasDetail(i) { return this.c.evidence[i] !== null && this.c.evidence[i] !== undefined; }
  get partial() { return this.nDetailed < this.n; }
  /** Whether a kernel can answer requests for details (not in an exported page). */
  get live() {
    const m = this.model;
    return !!m && typeof m.send === "function" && m.comm_live !== false;
  }
  /** Ask the kernel for the details of embedded cases ``idx`` that lack them. */
  request(idx) {
    const now = Date.now();
    const rows = idx.filter((i) => !this.hasDetail(i)).map((i) => this.p.rows[i])
      .filter((row) => !this.failed.has(row) && !(now - (this.pending.get(row) || -Infinity) < FETCH_TIMEOUT_MS));
    if (!rows.length || !this.live) return;
    try {
      this.model.send({ type: "details", rows });
    } catch (err) {
      for (const row of rows) this.failed.set(row, `the kernel could not be asked (${err && err.message ? err.message : err})`);
      return;
    }
    for (const row of rows) this.pending.set(row, now);
    setTimeout(() => {
      let changed = false;
      for (const row of rows) {
        if (this.pending.has(row)) {
          this.pending.delete(row);
          this.failed.set(row, "no answer from the kernel");
          changed = true;
        }
      }
      if (changed) this.listeners.forEach((f) => f());
    }, FETCH_TIMEOUT_MS);
  }
  /** Details sent by the kernel (explorer_data.encode_details): own string table, shifted. */
  merge(msg) {
    const base = this.p.strings.length;
    const at = (j) => (j === null || j === undefined || j < 0 ? j : j + base);
    for (const text of msg.strings || []) this.p.strings.push(text);
    for (const [k, v] of Object.entries(msg.full_length || {})) this.p.full_length[String(Number(k) + base)] = v;
    (msg.rows || []).forEach((row, k) => {
      this.pending.delete(row);
      const i = this.rowIndex.get(row);
      if (i === undefined) return;
      if (msg.error) { this.failed.set(row, msg.error); return; }
      if (this.hasDetail(i)) return;
      const c = msg.cases;
      this.c.answer[i] = at(c.answer[k]);
      this.c.abstained[i] = c.abstained[k];
      if (this.c.abstain_reason && c.abstain_reason) this.c.abstain_reason[i] = at(c.abstain_reason[k]);
      this.c.expected[i] = c.expected[k].map(at);
      this.c.expects_abstention[i] = c.expects_abstention[k];
      this.c.evidence[i] = c.evidence[k].map(([label, matched, rank, result, relevance, by, why, deep, docRank, stages]) =>
        [at(label), matched, rank, at(result), relevance, at(by), at(why), deep, docRank, at(stages)]);
      this.c.results[i] = c.results[k].map(([doc, score, id, text, relevance, relevant, matched]) =>
        [at(doc), score, at(id), at(text), relevance, relevant, matched.map(at)]);
      this.c.trace[i] = at(c.trace[k]);
      this.c.response_meta[i] = at(c.response_meta[k]);
      for (const [name, col] of Object.entries(msg.scores || {})) {
        const mine = this.p.scores[name];
        if (!mine) continue;
        mine.r[i] = at(col.r[k]);
        mine.m[i] = at(col.m[k]);
      }
      if (this._hay) this._hay[i] = undefined;
      this.nDetailed += 1;
    });
    this.listeners.forEach((f) => f());
  }
  caseId(i) { return this.s(this.c.case_id[i]); }
  mode(i) { return this.s(this.c.mode[i]); }
  query(i) { return this.s(this.c.query[i]) || ""; }
  error(i) { return this.s(this.c.error[i]); }
  labels(i) { return this.c.labels[i].map((j) => this.s(j)); }
  score(name, i) {
    const col = this.p.scores[name];
    if (!col) return null;
    const status = col.s ? col.s[i] : 0;
    if (status < 0) return null;
    return {
      name, value: col.v[i], status: STATUS[status],
      text: col.t && col.t[String(i)] !== undefined ? this.s(col.t[String(i)]) : null,
      passed: col.p ? (col.p[i] === null ? null : !!col.p[i]) : null,
      note: col.r ? this.s(col.r[i]) : null, noteIndex: col.r ? col.r[i] : -1,
      meta: col.m ? this.s(col.m[i]) : null, metaIndex: col.m ? col.m[i] : -1,
    };
  }
  value(name, i) {
    const sc = this.score(name, i);
    return sc && sc.status === "scored" && sc.value !== null ? sc.value : NaN;
  }
  scores(i) { return this.p.score_names.map((n) => this.score(n, i)).filter(Boolean); }
  evidence(i) {
    return (this.c.evidence[i] || []).map(([label, matched, rank, result, relevance, by, why, deep, docRank, stages]) => ({
      label: this.s(label), matched: !!matched, rank, result: this.s(result), relevance, by: this.s(by),
      why: this.s(why), deep: deep ?? null, docRank: docRank ?? null, stages: this.s(stages),
    }));
  }
  /** Labels of the evidence case ``i`` found: from the index (every embedded case, read from
   * the report's columns: explorer_data.found_index), else from its loaded details. */
  foundLabels(i) {
    if (this.c.found && this.c.found[i]) return new Set(this.c.found[i].map((j) => this.s(j)));
    return new Set(this.evidence(i).filter((e) => e.matched).map((e) => e.label));
  }
  /** Whether "found / missed" is known for every embedded case (not only loaded ones). */
  get foundIndexed() { return !!this.c.found; }
  /** Whether only some cases' details are loaded (the count line says so). */
  get capped() { return this.partial && !this.p.preview; }
  /** The miss classes of case ``i``'s evidence (analysis._misses; "found" left out). */
  misses(i) { return ((this.c.misses && this.c.misses[i]) || []).map((j) => this.s(j)); }
  results(i) {
    return (this.c.results[i] || []).map(([doc, score, id, text, relevance, relevant, matched], k) => ({
      rank: k + 1, doc: this.s(doc), score, id: this.s(id), text: this.s(text) || "",
      full: this.full(text), relevance, relevant: !!relevant, matched: matched.map((j) => this.s(j)),
    }));
  }
  /** Lower-cased text the search looks in: case id, query, evidence labels, score notes. */
  haystack(i) {
    if (!this._hay) this._hay = new Array(this.n);
    if (this._hay[i] === undefined) {
      const parts = [this.caseId(i), this.query(i)];
      for (const e of this.c.evidence[i] || []) parts.push(this.s(e[0]));
      for (const name of this.p.score_names) {
        const col = this.p.scores[name];
        if (col.r && col.r[i] !== null && col.r[i] >= 0) parts.push(this.s(col.r[i]));
      }
      this._hay[i] = parts.filter(Boolean).join("\n").toLowerCase();
    }
    return this._hay[i];
  }
  /** Text of a string-table entry with its full length when it was cut. */
  textNode(index) {
    const text = this.s(index);
    if (text === null) return null;
    const full = this.full(index);
    return full ? [text, " ", h("span", { class: "hnx-sub" }, `[cut: ${fmtInt(full)} characters in full]`)] : text;
  }
}

const decoded = new WeakMap();  // data model -> {payload, data}: decoded once per payload

async function dataModelOf(model, ref) {
  const id = typeof ref === "string" && ref.startsWith("IPY_MODEL_") ? ref.slice(10) : ref;
  return model.widget_manager.get_model(id);
}

const chunks = new WeakMap();  // text chunk model -> its decoded texts (chunks never change)

async function chunkOf(model, ref) {
  const chunkModel = await dataModelOf(model, ref);
  if (!chunks.has(chunkModel)) chunks.set(chunkModel, inflate(chunkModel.get("packed")));
  return chunks.get(chunkModel);
}

/** A payload's own string table back from the shared text chunks it reads
 * (display/_texts.py): texts.refs are delta-coded positions in their concatenation. A payload
 * saved before texts were shared holds its table inline. */
async function resolveTexts(model, p) {
  if (!p.texts) return p;
  const all = [];
  for (const chunk of await Promise.all(p.texts.chunks.map((ref) => chunkOf(model, ref)))) {
    for (const text of chunk.strings) all.push(text);
  }
  let at = 0;
  p.strings = p.texts.refs.map((delta) => all[(at += delta)]);
  delete p.texts;
  return p;
}

async function reportData(model, ref) {
  const dataModel = await dataModelOf(model, ref);
  const payload = dataModel.get("payload");
  const found = decoded.get(dataModel);
  if (found && found.payload === payload) return found.data;
  const data = inflate(payload).then(async (p) => {
    const found = new ReportData(await resolveTexts(model, p), dataModel);
    // details a live page fetched, kept in the widget state: a saved notebook shows them
    for (const packed of dataModel.get("fetched") || []) {
      try {
        found.merge(await inflate(packed));
      } catch (err) {
        console.warn("heta-notebook: a kept reply of fetched details could not be read", err);
      }
    }
    return found;
  });
  decoded.set(dataModel, { payload, data });
  return data;
}

function scoreBadge(sc) {
  if (!sc) return badge("–", "muted");
  if (sc.status === "skipped") {  // why it was skipped, next to it
    const why = sc.note && sc.note !== "skipped" ? `skipped: ${shorten(sc.note, 60)}` : "skipped";
    return badge(why, "warnb");
  }
  if (sc.status !== "scored") return badge(sc.status, "bad");
  if (sc.text !== null) return badge(shorten(sc.text, 60), "muted");
  const verdict = sc.passed === true ? " · passed" : sc.passed === false ? " · failed" : "";
  return badge(`${fmtNum(sc.value)}${verdict}`, sc.passed === true ? "ok" : sc.passed === false ? "bad" : "muted");
}

function previewNote(data) {
  if (!data.p.preview) return null;
  return h("div", { class: "hnx-warn", "data-note": "preview" },
    `Showing the first ${fmtInt(data.n)} of ${fmtInt(data.p.n_total)} case results of ${data.p.label} while ` +
    "the kernel prepares the explorer's data; filters, sort, search and other pages work when it arrives.");
}

function detailsNote(data, named = false) {
  if (!data.partial || data.p.preview) return null;
  const how = data.live ? "the others load from the kernel when selected"
    : "the others are not embedded in this page: export with report.to_html() or the CLI to embed every case's details (up to max_cases)";
  const of = named ? ` of ${data.p.label}` : "";
  return h("div", { class: "hnx-note", "data-note": "details" },
    `Details (results, evidence, judge reasons, answer) of ${fmtInt(data.nDetailed)} of ${fmtInt(data.n)} embedded case results${of} are loaded; ${how}.`);
}

/** Why the details of embedded case ``i`` are not shown (yet). */
function pendingMessage(data, i) {
  const why = data.failed.get(data.p.rows[i]);
  return data.p.preview ? "The details of this case arrive with the explorer's data…"
    : data.live && !why ? "Loading the details of this case from the kernel…"
    : `The details of this case are not embedded in this page${why ? ` (${why})` : ""}: ` +
      "export with report.to_html() or the CLI to embed every case's details (up to max_cases), or open the notebook with its kernel.";
}

function pendingDetail(data, i) {
  const row = data.p.rows[i];
  const message = pendingMessage(data, i);
  const error = data.error(i);
  return h("div", { class: "hnx-detail", "data-pending": row },
    h("div", {}, h("h3", {}, `Case ${data.caseId(i)}`), badge(data.mode(i), "muted"),
      error ? badge("query error", "bad") : badge("ok", "ok"),
      h("span", { class: "hnx-sub" }, `latency ${fmtMs(data.c.latency[i])}`)),
    h("div", {}, h("b", {}, "Query"), h("div", { class: "hnx-text" }, data.textNode(data.c.query[i]))),
    error ? h("div", {}, h("b", {}, "Error"), h("div", { class: "hnx-error" }, error)) : null,
    h("div", { class: "hnx-warn", "data-note": "pending" }, message),
    scoresTable(data.scores(i), data));
}

function leftOutNote(data) {
  if (!data.p.left_out) return null;
  return h("div", { class: "hnx-warn" },
    `${fmtInt(data.p.left_out)} of ${fmtInt(data.p.n_total)} case results of ${data.p.label} are not embedded ` +
    `(cap ${fmtInt(data.p.max_cases)}): the most informative ones (errors, failures, lowest scores, ` +
    `biggest changes) are. Raise max_cases to embed more.`);
}

// ------------------------------------------------------------------ case detail (one module)

function caseDetail(data, i) {
  const error = data.error(i);
  const scores = data.scores(i);
  const verdicts = scores.filter((s) => s.passed !== null);
  const latency = data.c.latency[i];
  return h("div", { class: "hnx-detail" },
    h("div", {},
      h("h3", {}, `Case ${data.caseId(i)}`),
      badge(data.mode(i), "muted"), error ? badge("query error", "bad") : badge("ok", "ok"),
      verdicts.length ? badge(`${verdicts.filter((s) => s.passed).length}/${verdicts.length} passed`, "info") : null,
      h("span", { class: "hnx-sub" }, `latency ${fmtMs(latency)}`)),
    h("div", {}, h("b", {}, "Query"), h("div", { class: "hnx-text" }, data.textNode(data.c.query[i]))),
    error ? h("div", {}, h("b", {}, "Error"), h("div", { class: "hnx-error" }, error)) : null,
    answers(data, i), reasons(scores, data), evidenceTable(data, i), resultsBlock(data, i),
    scoresTable(scores, data), extras(data, i));
}

function abstainedBadge(data, i) {  // a response that abstained on purpose: "abstained: reason"
  if (!(data.c.abstained || [])[i]) return null;
  const why = (data.c.abstain_reason || [])[i];
  const text = why >= 0 ? `abstained: ${shorten(data.s(why), 120)}` : "abstained";
  return h("span", { "data-abstained": "1", title: "no answer, on purpose" }, badge(text, "warnb"));
}

function answers(data, i) {
  const expected = data.c.expected[i] || [];
  const answer = data.c.answer[i];
  const expectsAbstention = !!(data.c.expects_abstention || [])[i];
  const abstained = abstainedBadge(data, i);
  if (!expected.length && !expectsAbstention) {  // nothing to compare with (e.g. a retrieval benchmark)
    const shown = answer >= 0 ? h("div", { class: "hnx-text" }, data.textNode(answer)) : abstained;
    return shown ? h("div", {}, h("h4", {}, "Answer"), shown) : null;
  }
  return h("div", {}, h("h4", {}, "Answer vs expected"),
    h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "expected answers"), h("th", {}, "answer"))),
      h("tbody", {}, h("tr", {},
        h("td", {}, expected.length ? h("ul", {}, expected.map((j) => h("li", {}, data.textNode(j))))
          : h("div", { class: "hnx-note" }, (data.c.expects_abstention || [])[i]
            ? "unanswerable: the right answer is to abstain" : "no expected answers recorded")),
        h("td", {}, answer >= 0 ? h("div", { class: "hnx-text" }, data.textNode(answer))
          : abstained || h("div", { class: "hnx-note" }, "no answer (retrieval only)"))))));
}

function reasons(scores, data) {
  const given = scores.filter((s) => s.status === "scored" && s.note);
  const judges = new Set(data.p.judges || []);
  const block = (title, list) => (list.length ? h("div", {}, h("h4", {}, title), list.map((s) =>
    h("div", {}, h("b", {}, s.name), " ", scoreBadge(s), h("div", { class: "hnx-reason" }, data.textNode(s.noteIndex))))) : null);
  return [block("Judge reasons", given.filter((s) => judges.has(s.name))),
    block("Evaluator reasons", given.filter((s) => !judges.has(s.name)))];
}

/** Why an evidence item was (not) found: its miss class, with the deep rank of a miss. */
function whyBadge(e) {
  if (e.matched && (!e.why || e.why === "found")) return badge(`found @${e.rank ?? "?"}`, "ok");
  if (!e.why) return badge(e.matched ? "matched" : "missing", e.matched ? "ok" : "bad");
  const rank = !e.matched && e.deep !== null ? ` @${fmtInt(e.deep)}` : "";
  const kind = e.why.startsWith("found") ? "warnb" : e.why === "unknown depth" ? "muted" : "bad";
  const el = badge(`${e.why}${rank}`, kind);
  el.setAttribute("data-why", e.why);
  const titles = [];
  if (e.docRank !== null) titles.push(`rank ${e.deep ?? "?"} among results, ${e.docRank} among documents`);
  if (e.stages) titles.push(`by stage: ${e.stages}`);
  if (titles.length) el.title = titles.join("; ");
  return e.stages ? h("span", {}, el, h("span", { class: "hnx-note", "data-stages": "" }, ` ${e.stages}`)) : el;
}

function evidenceTable(data, i) {
  const rows = data.evidence(i);
  if (!rows.length) {
    return h("div", {}, h("h4", {}, "Expected evidence"),
      h("div", { class: "hnx-note" }, "no expected evidence recorded for this case"));
  }
  const named = rows.filter((r) => r.label !== null).sort((a, b) =>
    (a.matched === b.matched ? 0 : a.matched ? -1 : 1) ||
    ((a.rank ?? Infinity) - (b.rank ?? Infinity)) || ((b.relevance || 0) - (a.relevance || 0)));
  const anonymous = rows.length - named.length;
  const found = rows.filter((r) => r.matched).length;
  return h("div", {}, h("h4", {}, `Expected evidence: ${found} of ${rows.length} found`),
    h("table", { class: "hnx-evidence" },
      h("thead", {}, h("tr", {}, ["", "evidence", "grade", "rank", "matching result", "matched by"].map((t) => h("th", {}, t)))),
      h("tbody", {}, named.map((r) => h("tr", {},
        h("td", {}, whyBadge(r)),
        h("td", {}, r.label), h("td", {}, r.relevance === null ? "–" : fmtInt(r.relevance)),
        h("td", {}, r.rank === null ? "–" : fmtInt(r.rank)), h("td", {}, r.result || "–"), h("td", {}, r.by || "–"))))),
    anonymous ? h("div", { class: "hnx-note" }, `${anonymous} more expected items were not found; this report does not name them.`) : null);
}

function resultBlock(r, textLimit) {
  const mark = r.relevant ? badge(r.relevance ? `relevant · grade ${r.relevance}` : "relevant", "ok")
    : badge(r.relevance === null ? "unjudged" : "not relevant", "muted");
  const matched = r.matched.length ? ` · matches ${r.matched.join(", ")}` : "";
  return h("div", { class: r.relevant ? "hnx-result hnx-rel" : "hnx-result" },
    h("div", {}, h("b", {}, `#${r.rank}`), " ", mark, " ",
      h("span", { class: "hnx-sub" }, `doc ${r.doc || "–"} · score ${fmtNum(r.score, 4)} · id ${r.id}${matched}`)),
    h("div", { class: "hnx-chunk" }, textLimit ? shorten(r.text, textLimit) : r.text,
      r.full || (textLimit && r.text.length > textLimit)
        ? h("span", { class: "hnx-sub" }, ` [cut: ${fmtInt(r.full || r.text.length)} characters in full]`) : null));
}

function resultsBlock(data, i, limit = MAX_RESULTS_OPEN, textLimit = 0) {
  const rows = data.results(i);
  if (!rows.length) return null;
  const rest = rows.slice(limit);
  return h("div", {}, h("h4", {}, `Retrieved results (${rows.length}, ${rows.filter((r) => r.relevant).length} relevant)`),
    rows.slice(0, limit).map((r) => resultBlock(r, textLimit)),
    rest.length ? h("details", {}, h("summary", {}, `${rest.length} more results`), rest.map((r) => resultBlock(r, textLimit))) : null);
}

function scoresTable(scores, data) {
  if (!scores.length) return null;
  return h("div", {}, h("h4", {}, "Scores"), h("table", {},
    h("thead", {}, h("tr", {}, ["score", "value", "reason", "metadata"].map((t) => h("th", {}, t)))),
    h("tbody", {}, scores.map((s) => h("tr", {}, h("td", {}, s.name), h("td", {}, scoreBadge(s)),
      h("td", {}, s.status === "skipped" ? "" : data.textNode(s.noteIndex) || ""),  // its badge says why
      h("td", {}, s.meta ? h("details", {}, h("summary", {}, "metadata"), h("pre", {}, data.textNode(s.metaIndex))) : "–"))))));
}

function extras(data, i) {
  const labels = data.labels(i);
  const trace = data.c.trace[i];
  const meta = data.c.response_meta[i];
  return h("div", {},
    trace >= 0 ? h("details", {}, h("summary", {}, "Trace"), h("pre", {}, data.textNode(trace))) : null,
    labels.length ? h("details", {}, h("summary", {}, "Labels"), h("ul", {}, labels.map((l) => h("li", {}, l)))) : null,
    meta >= 0 ? h("details", {}, h("summary", {}, "Response metadata"), h("pre", {}, data.textNode(meta))) : null);
}

// ------------------------------------------------------------------ report explorer

function reportRows(data, st) {
  const out = [];
  const needle = (st.search || "").trim().toLowerCase();
  const lo = st.min_value, hi = st.max_value;
  const useScore = st.score && (lo !== null && lo !== undefined || hi !== null && hi !== undefined || st.verdict !== "any");
  for (let i = 0; i < data.n; i++) {
    if (st.mode && data.mode(i) !== st.mode) continue;
    if (st.label && !data.labels(i).includes(st.label)) continue;
    if (st.errors_only && !data.error(i)) continue;
    if (st.miss_class && !data.misses(i).includes(st.miss_class)) continue;
    if (useScore) {
      const sc = data.score(st.score, i);
      if (!sc || sc.status !== "scored" || sc.value === null) continue;
      if (lo !== null && lo !== undefined && !(sc.value >= lo)) continue;
      if (hi !== null && hi !== undefined && !(sc.value <= hi)) continue;
      if (st.verdict !== "any" && sc.passed !== (st.verdict === "passed")) continue;
    }
    if (needle && !data.haystack(i).includes(needle)) continue;
    out.push(i);
  }
  if (st.sort_by && st.sort_by !== REPORT_ORDER) {
    const key = (i) => {
      const v = st.sort_by === LATENCY ? data.c.latency[i] : data.value(st.sort_by, i);
      return v === null || Number.isNaN(v) ? Infinity : st.descending ? -v : v;
    };
    const keyed = out.map((i) => [key(i), i]);
    keyed.sort((a, b) => (a[0] === b[0] ? a[1] - b[1] : a[0] < b[0] ? -1 : 1));
    return keyed.map((k) => k[1]);
  }
  return out;
}

function renderReport(model, el, data) {
  const root = h("div", { class: "hnx hnx-report" });
  el.append(root);
  let st = { ...model.get("state") };
  const p = data.p;
  const allLabels = [...new Set(data.c.labels.flat().map((j) => data.s(j)))].sort();
  const verdictScores = new Set(p.score_names.filter((n) => (p.scores[n].p || []).some((v) => v !== null)));
  const allMisses = [...new Set((data.c.misses || []).flat().map((j) => data.s(j)))].sort();

  const commit = (changes, resetPage = true) => {
    st = { ...st, ...changes };
    if (resetPage) {
      st.page = 0;
      const rows = reportRows(data, st);
      st.selected = rows.length ? p.rows[rows[0]] : null;
    }
    model.set("state", { ...st });
    model.save_changes();
    draw();
  };
  const num = (v) => (v === "" || v === null ? null : Number(v));

  const ui = {
    mode: select([["", "all modes"], ...p.modes.map((m) => [m, m])], st.mode || "", (v) => commit({ mode: v || null })),
    label: select([["", "all labels"], ...allLabels.map((l) => [l, l])], st.label || "", (v) => commit({ label: v || null })),
    miss: select([["", "any"], ...allMisses.map((l) => [l, l])], st.miss_class || "", (v) => commit({ miss_class: v || null })),
    search: h("input", { type: "text", placeholder: data.partial ? "case ids, queries (evidence, reasons: loaded cases)"
      : "queries, case ids, evidence, reasons", value: st.search || "" }),
    errors: h("input", { type: "checkbox", checked: st.errors_only }),
    score: select([["", "— none —"], ...p.score_names.map((n) => [n, n])], st.score || "",
      (v) => commit({ score: v || null, verdict: verdictScores.has(v) ? st.verdict : "any" })),
    min: h("input", { type: "number", step: "0.05", placeholder: "min", value: st.min_value ?? "" }),
    max: h("input", { type: "number", step: "0.05", placeholder: "max", value: st.max_value ?? "" }),
    verdict: select([["any", "any"], ["passed", "passed"], ["failed", "failed"]], st.verdict || "any", (v) => commit({ verdict: v })),
    sort: select([[REPORT_ORDER, REPORT_ORDER], [LATENCY, LATENCY], ...p.score_names.map((n) => [n, n])], st.sort_by || REPORT_ORDER,
      (v) => commit({ sort_by: v })),
    desc: h("input", { type: "checkbox", checked: st.descending }),
    prev: h("button", { onclick: () => commit({ page: st.page - 1 }, false) }, "◀ previous"),
    next: h("button", { onclick: () => commit({ page: st.page + 1 }, false) }, "next ▶"),
    page: h("span", { class: "hnx-page" }),
    list: h("tbody"),
    pane: h("div", { class: "hnx-pane" }),
    details: h("div", {}),
    searchNote: h("div", { class: "hnx-note" }),
  };
  for (const [name, control] of Object.entries(ui)) control.setAttribute("data-control", name);
  if (p.preview) {  // the page is a preview: nothing to filter yet
    for (const name of ["mode", "label", "miss", "search", "errors", "score", "min", "max", "verdict", "sort", "desc"]) ui[name].disabled = true;
  }
  onCommit(ui.search, (v) => v !== (st.search || "") && commit({ search: v }));
  ui.errors.addEventListener("change", () => commit({ errors_only: ui.errors.checked }));
  onCommit(ui.min, (v) => num(v) !== (st.min_value ?? null) && commit({ min_value: num(v) }));
  onCommit(ui.max, (v) => num(v) !== (st.max_value ?? null) && commit({ max_value: num(v) }));
  ui.desc.addEventListener("change", () => commit({ descending: ui.desc.checked }));

  const header = h("tr", {}, h("th", { class: "hnx-idcol" }, "case"), h("th", { class: "hnx-modecol" }, "mode"),
    h("th", { class: "hnx-valhead hnx-numcol" }), h("th", {}, "query"));
  const verdictLabel = h("label", { "data-control": "verdict-label" }, "verdict", ui.verdict);
  root.append(
    h("div", { class: "hnx-title" }, `Case explorer · ${p.label} `, h("span", { class: "hnx-sub" }, `report ${p.report_id}`)),
    h("div", {}, previewNote(data), leftOutNote(data)), ui.details,
    h("div", { class: "hnx-controls" },
      h("label", {}, "mode", ui.mode), allLabels.length ? h("label", {}, "label", ui.label) : null,
      allMisses.length ? h("label", { title: "cases with an expected evidence item of this class" }, "missed as", ui.miss) : null,
      h("label", {}, "search", ui.search), h("label", {}, ui.errors, "errors only")),
    ui.searchNote,
    h("div", { class: "hnx-controls" },
      h("label", {}, "score", ui.score), h("label", {}, "from", ui.min), h("label", {}, "to", ui.max),
      verdictLabel, h("label", {}, "sort by", ui.sort), h("label", {}, ui.desc, "descending")),
    h("div", { class: "hnx-main" },
      h("div", { class: "hnx-listcol" },
        h("table", { class: "hnx-list" }, h("thead", {}, header), ui.list),
        h("div", { class: "hnx-pager" }, ui.prev, ui.next, ui.page)),
      ui.pane));

  function draw() {
    const rows = reportRows(data, st);
    const size = st.page_size || 15;
    const pages = Math.max(1, Math.ceil(rows.length / size));
    st.page = Math.min(Math.max(0, st.page || 0), pages - 1);
    const shown = rows.slice(st.page * size, st.page * size + size);
    verdictLabel.style.display = st.score && verdictScores.has(st.score) ? "" : "none";  // scores with a threshold only
    const valueName = st.sort_by !== REPORT_ORDER ? st.sort_by : st.score || p.headline;
    header.querySelector(".hnx-valhead").textContent = valueName || "";
    header.querySelector(".hnx-valhead").title = valueName || "";
    ui.list.replaceChildren(...shown.map((i) => {
      const v = valueName === LATENCY ? fmtMs(data.c.latency[i]) : valueName ? fmtNum(data.value(valueName, i)) : "";
      const row = p.rows[i];
      return h("tr", { class: row === st.selected ? "hnx-selected" : "", "data-row": row,
        onclick: () => commit({ selected: row }, false) },
        h("td", { class: "hnx-id", title: data.caseId(i) }, data.caseId(i), data.error(i) ? [" ", badge("error", "bad")] : null),
        h("td", { title: data.mode(i) }, data.mode(i)), h("td", {}, v), h("td", { title: data.query(i) }, shorten(data.query(i), 70)));
    }));
    ui.page.textContent = `page ${st.page + 1} / ${pages} · ${fmtInt(rows.length)} of ${fmtInt(data.n)} case results${cappedNote([data], false)}`;
    ui.prev.disabled = st.page <= 0;
    ui.next.disabled = st.page >= pages - 1;
    ui.desc.disabled = (st.sort_by || REPORT_ORDER) === REPORT_ORDER;  // report order has no direction
    const i = st.selected === null || st.selected === undefined ? undefined : data.rowIndex.get(st.selected);
    if (!p.preview) data.request([...(i === undefined ? [] : [i]), ...shown]);  // the page's details
    ui.details.replaceChildren(...[detailsNote(data)].filter(Boolean));
    const searching = (st.search || "").trim() && data.partial;
    ui.searchNote.textContent = searching ? `Search looked in the case ids and queries of all ${fmtInt(data.n)} embedded case results, ` +
      `and in evidence labels and judge reasons of the ${fmtInt(data.nDetailed)} whose details are loaded.` : "";
    ui.pane.replaceChildren(i === undefined ? h("div", { class: "hnx-note" },
      st.selected === null || st.selected === undefined ? "No case selected (no case matches)." : "The selected case is not embedded in this page.")
      : data.hasDetail(i) ? caseDetail(data, i) : pendingDetail(data, i));
  }

  function fromModel() {
    st = { ...model.get("state") };
    ui.mode.value = st.mode || ""; ui.label.value = st.label || ""; ui.miss.value = st.miss_class || ""; ui.search.value = st.search || "";
    ui.errors.checked = !!st.errors_only; ui.score.value = st.score || "";
    ui.min.value = st.min_value ?? ""; ui.max.value = st.max_value ?? "";
    ui.verdict.value = st.verdict || "any"; ui.sort.value = st.sort_by || REPORT_ORDER; ui.desc.checked = !!st.descending;
    draw();
  }
  model.on("change:state", fromModel);
  data.listeners.add(draw);
  draw();
  return () => { model.off("change:state", fromModel); data.listeners.delete(draw); };
}

// ------------------------------------------------------------------ comparison explorer

/** The count line's word on capped details: " · details loaded for 15 of 675 (a); ...". */
function cappedNote(datas, named) {
  const capped = [...new Set(datas)].filter((d) => d.capped);
  if (!capped.length) return "";
  const loaded = capped.map((d) => `${fmtInt(d.nDetailed)} of ${fmtInt(d.n)}${named ? ` (${d.p.label})` : ""}`).join(", ");
  const indexed = capped.every((d) => d.foundIndexed);
  return ` · details loaded for ${loaded}; ${indexed ? "counts and filters use every case's columns" : "evidence filters count loaded cases only"}` +
    `${capped.some((d) => d.live) ? ", the rest load as you page" : ""}`;
}

class Side {
  constructor(data, mode) {
    this.data = data;
    this.byCase = new Map();
    for (let i = 0; i < data.n; i++) if (data.mode(i) === mode && !this.byCase.has(data.caseId(i))) this.byCase.set(data.caseId(i), i);
  }
}

function compareRows(A, B, st) {
  const ids = [...new Set([...A.byCase.keys(), ...B.byCase.keys()])];
  const labelled = (id) => {
    const ia = A.byCase.get(id), ib = B.byCase.get(id);
    const labels = ia !== undefined && A.data.labels(ia).length ? A.data.labels(ia) : ib !== undefined ? B.data.labels(ib) : [];
    return labels.includes(st.label);
  };
  const needle = (st.search || "").trim().toLowerCase();
  const hasVerdicts = [A, B].some((S) => [...S.byCase.values()].some((i) => { const sc = S.data.score(st.score, i); return sc && sc.passed !== null; }));
  const out = [];
  for (const id of ids) {
    if (st.label && !labelled(id)) continue;
    const ia = A.byCase.get(id), ib = B.byCase.get(id);
    if (st.miss_a && (ia === undefined || !A.data.misses(ia).includes(st.miss_a))) continue;
    if (st.miss_b && (ib === undefined || !B.data.misses(ib).includes(st.miss_b))) continue;
    const va = ia === undefined ? NaN : A.data.value(st.score, ia);
    const vb = ib === undefined ? NaN : B.data.value(st.score, ib);
    const delta = vb - va;
    const f = st.filter || "all";
    if (f === "changed" && !(Math.abs(delta) > 1e-12)) continue;
    if (f === "better" && !(delta > 1e-12)) continue;
    if (f === "worse" && !(delta < -1e-12)) continue;
    if (f === "lost" || f === "gained") {
      if (ia === undefined || ib === undefined) continue;
      const fa = A.data.foundLabels(ia), fb = B.data.foundLabels(ib);
      const [from, to] = f === "lost" ? [fa, fb] : [fb, fa];
      if (![...from].some((l) => !to.has(l))) continue;
    }
    if (f === "flipped") {
      if (ia === undefined || ib === undefined) continue;
      const names = hasVerdicts ? [st.score] : A.data.p.score_names;
      if (!names.some((n) => { const a = A.data.score(n, ia), b = B.data.score(n, ib);
        return a && b && a.passed !== null && b.passed !== null && a.passed !== b.passed; })) continue;
    }
    if (needle) {
      const inA = ia !== undefined && A.data.haystack(ia).includes(needle);
      const inB = ib !== undefined && B.data.haystack(ib).includes(needle);
      const scope = st.scope || "either";
      const keep = scope === "either" ? inA || inB : scope === "both" ? inA && inB : scope === "b_not_a" ? inB && !inA : inA && !inB;
      if (!keep) continue;
    }
    const query = ia !== undefined ? A.data.query(ia) : B.data.query(ib);
    out.push({ id, ia, ib, va, vb, delta, query, change: Number.isNaN(delta) ? -1 : Math.abs(delta) });
  }
  out.sort((x, y) => y.change - x.change || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  return out;
}

function sideBlock(title, name, S, i, other, oi, score, isB) {
  if (i === undefined) return h("div", { class: "hnx-side" }, h("h4", {}, `${title}: ${name}`), badge("case missing", "warnb"));
  const d = S.data;
  const sc = d.score(score, i);
  const head = [h("h4", {}, `${title}: ${name}`),
    h("div", {}, h("span", { class: "hnx-val" }, sc ? (sc.status === "scored" ? fmtNum(sc.value) : sc.status) : "–"), " ", score,
      sc && sc.passed !== null ? [" ", sc.passed ? badge("passed", "ok") : badge("failed", "bad")] : null),
    d.error(i) ? h("div", { class: "hnx-error" }, d.error(i)) : null];
  if (!d.hasDetail(i)) {
    return h("div", { class: "hnx-side", "data-pending": d.p.rows[i] }, head,
      h("div", { class: "hnx-warn", "data-note": "pending" }, pendingMessage(d, i)));
  }
  const otherKnown = other && oi !== undefined && (other.data.hasDetail(oi) || other.data.foundIndexed);
  const found = otherKnown ? other.data.foundLabels(oi) : new Set();
  const ev = d.evidence(i);
  const items = ev.map((e) => {
    let change = null;
    if (otherKnown) {
      if (isB && e.matched && !found.has(e.label)) change = ["gained", "hnx-gained", "ok"];
      else if (isB && !e.matched && found.has(e.label)) change = ["lost", "hnx-lost", "bad"];
      else if (!isB && e.matched && !found.has(e.label)) change = ["lost by B", "hnx-lost", "bad"];
    }
    return h("li", { class: change ? change[1] : "" }, whyBadge(e),
      " ", e.label ?? "(unnamed)", change ? [" ", badge(change[0], change[2])] : null);
  });
  const judges = new Set(d.p.judges || []);
  const note = (s) => h("div", { class: "hnx-reason" }, h("b", {}, `${s.name}: `), scoreBadge(s), h("br"), d.textNode(s.noteIndex));
  const given = d.scores(i).filter((s) => s.note);
  const byJudge = given.filter((s) => judges.has(s.name)), byEvaluator = given.filter((s) => !judges.has(s.name));
  const answer = d.c.answer[i];
  return h("div", { class: "hnx-side" }, head,
    answer >= 0 ? [h("b", {}, "answer"), h("div", { class: "hnx-text" }, d.textNode(answer))]
      : abstainedBadge(d, i) ? [h("b", {}, "answer"), h("div", {}, abstainedBadge(d, i))] : null,
    byJudge.length ? [h("b", {}, "judge reasons"), byJudge.map(note)] : null,
    byEvaluator.length ? [h("b", {}, "evaluator reasons"), byEvaluator.map(note)] : null,
    ev.length ? h("div", {}, h("b", {}, `expected evidence: ${ev.filter((e) => e.matched).length}/${ev.length} found`), h("ul", { class: "hnx-ev" }, items))
      : h("div", { class: "hnx-note" }, "no expected evidence recorded for this case"),
    resultsBlock(d, i, MAX_RESULTS_OPEN, 240));
}

function renderCompare(model, el, reports) {
  const root = h("div", { class: "hnx hnx-compare" });
  el.append(root);
  const variants = model.get("variants");
  let st = { ...model.get("state") };
  const names = variants.map((v) => v.name);
  const sides = new Map();
  const side = (name) => {
    if (!sides.has(name)) {
      const v = variants.find((x) => x.name === name) || variants[0];
      sides.set(name, new Side(reports[v.report], v.mode));
    }
    return sides.get(name);
  };
  const scoreNames = [...new Set(Object.values(reports).flatMap((d) => d.p.score_names))];
  const allLabels = [...new Set(Object.values(reports).flatMap((d) => d.c.labels.flat().map((j) => d.s(j))))].sort();
  const allMisses = [...new Set(Object.values(reports).flatMap((d) => (d.c.misses || []).flat().map((j) => d.s(j))))].sort();
  const missSelect = (key) => select([["", "any"], ...allMisses.map((l) => [l, l])], st[key] || "", (v) => commit({ [key]: v || null }));
  const commit = (changes, resetPage = true) => {
    st = { ...st, ...changes };
    if (resetPage) {
      st.page = 0;
      const rows = compareRows(side(st.a), side(st.b), st);
      st.selected = rows.length ? rows[0].id : null;
    }
    model.set("state", { ...st });
    model.save_changes();
    draw();
  };
  const ui = {
    a: select(names.map((n) => [n, n]), st.a, (v) => commit({ a: v })),
    b: select(names.map((n) => [n, n]), st.b, (v) => commit({ b: v })),
    score: select(scoreNames.map((n) => [n, n]), st.score, (v) => commit({ score: v })),
    filter: select(Object.entries(FILTERS), st.filter || "all", (v) => commit({ filter: v })),
    label: select([["", "all labels"], ...allLabels.map((l) => [l, l])], st.label || "", (v) => commit({ label: v || null })),
    miss_a: missSelect("miss_a"),
    miss_b: missSelect("miss_b"),
    search: h("input", { type: "text", placeholder: "queries, case ids, evidence, reasons", value: st.search || "" }),
    scope: select(Object.entries(SCOPES), st.scope || "either", (v) => commit({ scope: v })),
    prev: h("button", { onclick: () => commit({ page: st.page - 1 }, false) }, "◀ previous"),
    next: h("button", { onclick: () => commit({ page: st.page + 1 }, false) }, "next ▶"),
    page: h("span", { class: "hnx-page" }),
    list: h("tbody"),
    pane: h("div", { class: "hnx-pane" }),
  };
  for (const [name, control] of Object.entries(ui)) control.setAttribute("data-control", name);
  const datas = [...new Set(Object.values(reports))];
  const shownData = () => [...new Set([side(st.a).data, side(st.b).data])];  // A's and B's reports
  const preview = datas.some((d) => d.p.preview) ? shownData().find((d) => d.p.preview) || datas[0] : null;
  if (preview) {  // the first page only: nothing to pair, filter or page through yet
    for (const name of ["a", "b", "score", "filter", "label", "miss_a", "miss_b", "search", "scope", "prev", "next"]) ui[name].disabled = true;
  }
  const notes = h("div", {});
  onCommit(ui.search, (v) => v !== (st.search || "") && commit({ search: v }));
  root.append(
    h("div", { class: "hnx-title" }, "Comparison explorer · cases side by side"),
    h("div", {}, preview ? h("div", { class: "hnx-warn", "data-note": "preview" },
      `Showing the cases of the first page (${fmtInt(preview.n)} of ${fmtInt(preview.p.n_total)} case results of ${preview.p.label}) while ` +
      "the kernel prepares the explorer's data; other pairs, scores, filters, search and pages work when it arrives.") : null,
    Object.values(reports).map(leftOutNote)), notes,
    h("div", { class: "hnx-controls" }, h("label", {}, "A", ui.a), h("label", {}, "B", ui.b), h("label", {}, "score", ui.score),
      h("label", {}, "show", ui.filter), allLabels.length ? h("label", {}, "label", ui.label) : null),
    allMisses.length ? h("div", { class: "hnx-controls" },
      h("label", { title: "cases with an expected evidence item of this class under A (report.misses())" }, "A missed as", ui.miss_a),
      h("label", { title: "cases with an expected evidence item of this class under B (report.misses())" }, "B missed as", ui.miss_b)) : null,
    h("div", { class: "hnx-controls" }, h("label", {}, "search", ui.search), ui.scope),
    h("div", { class: "hnx-main" },
      h("div", { class: "hnx-listcol" },
        h("table", { class: "hnx-list" }, h("thead", {}, h("tr", {}, h("th", { class: "hnx-idcol" }, "case"),
          ...["A", "B"].map((t) => h("th", { class: "hnx-numcol" }, t)), h("th", { class: "hnx-deltacol" }, "Δ"),
          h("th", {}, "query"))), ui.list),
        h("div", { class: "hnx-pager" }, ui.prev, ui.next, ui.page)),
      ui.pane));

  function draw() {
    const A = side(st.a), B = side(st.b);
    const rows = compareRows(A, B, st);
    const size = st.page_size || 15;
    const pages = Math.max(1, Math.ceil(rows.length / size));
    st.page = Math.min(Math.max(0, st.page || 0), pages - 1);
    ui.list.replaceChildren(...rows.slice(st.page * size, st.page * size + size).map((r) =>
      h("tr", { class: r.id === st.selected ? "hnx-selected" : "", "data-case": r.id, onclick: () => commit({ selected: r.id }, false) },
        h("td", { class: "hnx-id", title: r.id }, r.id), h("td", {}, fmtNum(r.va)), h("td", {}, fmtNum(r.vb)),
        h("td", { class: r.delta > 0 ? "hnx-pos" : r.delta < 0 ? "hnx-neg" : "" }, fmtDelta(r.delta)),
        h("td", { title: r.query }, shorten(r.query, 60)))));
    ui.page.textContent = preview ? `first page · ${fmtInt(rows.length)} cases (preview)`
      : `page ${st.page + 1} / ${pages} · ${fmtInt(rows.length)} cases (${FILTERS[st.filter || "all"]}${st.label ? `, ${st.label}` : ""}` +
        `${st.miss_a ? `, A missed as ${st.miss_a}` : ""}${st.miss_b ? `, B missed as ${st.miss_b}` : ""})` +
        cappedNote([A.data, B.data], A.data !== B.data);
    ui.prev.disabled = !!preview || st.page <= 0;
    ui.next.disabled = !!preview || st.page >= pages - 1;
    const id = st.selected;
    const ia = id === null || id === undefined ? undefined : A.byCase.get(id);
    const ib = id === null || id === undefined ? undefined : B.byCase.get(id);
    if (!preview) {  // the details of the selected case and of the page's cases, on both sides
      const shown = rows.slice(st.page * size, st.page * size + size);
      A.data.request([ia, ...shown.map((r) => r.ia)].filter((i) => i !== undefined));
      B.data.request([ib, ...shown.map((r) => r.ib)].filter((i) => i !== undefined));
    }
    const partial = [...new Set([A.data, B.data])].filter((d) => d.partial && !d.p.preview);
    const byDetails = (st.search || "").trim() ||
      ((st.filter === "lost" || st.filter === "gained") && !(A.data.foundIndexed && B.data.foundIndexed));
    notes.replaceChildren(...partial.map((d) => detailsNote(d, true)),
      ...(byDetails && partial.length ? [h("div", { class: "hnx-note", "data-note": "partial-filter" },
        "Evidence found / missed, evidence labels and judge reasons are known only for the cases whose details are " +
        "loaded; the filter and search looked in case ids, queries and scores of every embedded case and in those " +
        "details where loaded. Export with to_html() or the CLI to embed every case's details (up to max_cases).")] : []));
    if (ia === undefined && ib === undefined) {
      ui.pane.replaceChildren(h("div", { class: "hnx-note" }, "No case selected."));
      return;
    }
    const d = ia !== undefined ? A.data : B.data, i = ia !== undefined ? ia : ib;
    const expected = d.c.expected[i] || [];
    ui.pane.replaceChildren(h("div", { class: "hnx-sbs" },
      h("h3", {}, "Case ", h("code", {}, id)), h("div", { class: "hnx-text" }, d.textNode(d.c.query[i])),
      expected.length ? h("div", { class: "hnx-sub" }, h("b", {}, "expected: "), expected.map((j) => d.s(j)).join(" | ")) : null,
      h("div", { class: "hnx-sides" },
        sideBlock("A", st.a, A, ia, B, ib, st.score, false),
        sideBlock("B", st.b, B, ib, A, ia, st.score, true))));
  }
  function fromModel() {
    st = { ...model.get("state") };
    ui.a.value = st.a; ui.b.value = st.b; ui.score.value = st.score; ui.filter.value = st.filter || "all";
    ui.label.value = st.label || ""; ui.miss_a.value = st.miss_a || ""; ui.miss_b.value = st.miss_b || "";
    ui.search.value = st.search || ""; ui.scope.value = st.scope || "either";
    draw();
  }
  model.on("change:state", fromModel);
  for (const d of datas) d.listeners.add(draw);
  draw();
  return () => { model.off("change:state", fromModel); for (const d of datas) d.listeners.delete(draw); };
}

// ------------------------------------------------------------------ entry point

async function render({ model, el }) {
  el.replaceChildren(h("style", {}, CSS));
  const status = h("div", { class: "hnx hnx-note" }, "loading the case explorer…");
  el.append(status);
  try {
    let cleanup;
    if (model.get("kind") === "compare") {
      const refs = model.get("data");
      const load = async () => {
        const reports = {};
        for (const [key, ref] of Object.entries(refs)) reports[key] = await reportData(model, ref);
        return reports;
      };
      const reports = await load();
      status.remove();
      cleanup = renderCompare(model, el, reports);
      const previews = Object.values(reports).some((d) => d.p.preview);
      const dataModels = await Promise.all(Object.values(refs).map((ref) => dataModelOf(model, ref)));
      if (previews && dataModels.every((m) => typeof m.on === "function")) {  // full payloads replace them
        let done = false;
        const reload = async () => {
          const full = await load();
          if (done || Object.values(full).some((d) => d.p.preview)) return;  // all of them at once
          done = true;
          for (const m of dataModels) m.off("change:payload", reload);
          if (cleanup) cleanup();
          el.replaceChildren(h("style", {}, CSS));
          cleanup = renderCompare(model, el, full);
        };
        for (const m of dataModels) m.on("change:payload", reload);
        reload();  // a payload may have been replaced while the previews were decoded
        const inner = cleanup;
        cleanup = () => { for (const m of dataModels) m.off("change:payload", reload); if (inner) inner(); };
        return () => cleanup();
      }
    } else {
      const dataModel = await dataModelOf(model, model.get("data"));
      const data = await reportData(model, model.get("data"));
      status.remove();
      cleanup = renderReport(model, el, data);
      if (data.p.preview && typeof dataModel.on === "function") {  // the full payload replaces it
        let done = false;
        const reload = async () => {
          const full = await reportData(model, model.get("data"));
          if (done || full === data || full.p.preview) return;
          done = true;
          dataModel.off("change:payload", reload);
          if (cleanup) cleanup();
          el.replaceChildren(h("style", {}, CSS));
          cleanup = renderReport(model, el, full);
        };
        dataModel.on("change:payload", reload);
        reload();  // the payload may have been replaced while the preview was decoded
        const inner = cleanup;
        cleanup = () => { dataModel.off("change:payload", reload); if (inner) inner(); };
        return () => cleanup();
      }
    }
    return cleanup;
  } catch (err) {
    status.textContent = `The case explorer could not load its data: ${err && err.message ? err.message : err}`;
    status.className = "hnx hnx-warn";
    return undefined;
  }
}

export default { render };
