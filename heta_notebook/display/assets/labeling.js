// heta_notebook labeling widget: label (query, document) pairs by keyboard.
//
// An anywidget ES module (render({model, el})). Keys 0-3 label the current pair, s skips,
// u undoes; Python saves every label at once and answers {"type": "ready"}. Until a kernel
// answers (an exported notebook has none) the widget is read-only: it lists the labels made.
//
// Every text from the data goes into the page through text nodes (h() below); the query's
// terms are highlighted by splitting the text and wrapping the pieces in <mark> elements,
// never by building HTML from it.

const CSS = `
.hnl{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;font-size:13px;color:#1F2937;line-height:1.45;border:1px solid #E5E7EB;border-radius:6px;padding:10px 12px;max-width:900px;outline:none}
.hnl:focus{border-color:#2563EB;box-shadow:0 0 0 2px #BFDBFE}
.hnl .hnl-top{display:flex;justify-content:space-between;align-items:center;gap:10px;margin-bottom:6px}
.hnl .hnl-progress{font-weight:600}
.hnl .hnl-keys{color:#6B7280}
.hnl .hnl-query{font-size:15px;font-weight:700;margin:6px 0}
.hnl .hnl-doc{white-space:pre-wrap;background:#F9FAFB;border:1px solid #E5E7EB;border-radius:4px;padding:8px;max-height:320px;overflow:auto}
.hnl mark{background:#FEF08A;padding:0 1px}
.hnl .hnl-judge{margin-top:6px;color:#374151}
.hnl .hnl-judge b{color:#111827}
.hnl .hnl-made{margin-top:8px;color:#374151}
.hnl .hnl-made table{border-collapse:collapse}
.hnl .hnl-all{max-height:320px;overflow:auto}
.hnl .hnl-made td,.hnl .hnl-made th{border-bottom:1px solid #E5E7EB;padding:2px 8px;text-align:left}
.hnl .hnl-readonly{color:#92400E}
.hnl button{font:inherit;margin-left:6px}
.hn-labeling-fallback{display:none !important}
`;

const STOP = new Set("a an and are as at be by for from has have how in is it of on or that the this to was what when where which who why with does do can".split(" "));

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const child of children) {
    if (child == null) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function terms(query) {
  return [...new Set((query || "").toLowerCase().match(/[\p{L}\p{N}]+/gu) || [])].filter(
    (t) => t.length > 2 && !STOP.has(t),
  );
}

function highlighted(text, query) {
  const wanted = terms(query);
  const out = h("div", { class: "hnl-doc" });
  if (!wanted.length) {
    out.append(document.createTextNode(text));
    return out;
  }
  const escaped = wanted.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const pattern = new RegExp(`(${escaped.join("|")})`, "giu");
  for (const piece of text.split(pattern)) {
    if (!piece) continue;
    out.append(wanted.includes(piece.toLowerCase()) ? h("mark", {}, piece) : document.createTextNode(piece));
  }
  return out;
}

function render({ model, el }) {
  const style = document.createElement("style");
  style.textContent = CSS;
  el.append(style);
  const root = h("div", { class: "hnl", tabindex: "0" });
  el.append(root);
  let live = false;
  let showJudge = !model.get("blind");

  function draw() {
    const items = model.get("items") || [];
    const made = model.get("made") || [];
    const position = model.get("position");
    root.replaceChildren();
    const progress = h("span", { class: "hnl-progress" }, `${made.length} labelled · pair ${Math.min(position + 1, items.length)} of ${items.length}`);
    const toggle = h("button", { type: "button", class: "hnl-toggle" }, showJudge ? "hide judge" : "show judge");
    toggle.addEventListener("click", () => { showJudge = !showJudge; draw(); root.focus(); });
    const keys = live
      ? h("span", { class: "hnl-keys" }, "keys: 0–3 label · s skip · u undo")
      : h("span", { class: "hnl-readonly" }, "read-only: no kernel (labels made are listed below)");
    root.append(h("div", { class: "hnl-top" }, progress, h("span", {}, keys, live ? toggle : null)));
    const item = items[position];
    if (live && item) {
      root.append(h("div", { class: "hnl-query" }, `${item.query_id}: ${item.query}`));
      root.append(h("div", { class: "hnl-docid" }, `document ${item.doc_id}`));
      root.append(highlighted(item.text || "", item.query));
      if (showJudge && item.judge_grade != null) {
        root.append(h("div", { class: "hnl-judge" }, h("b", {}, `judge: ${item.judge_grade}`), ` — ${item.judge_reason || ""}`));
      }
    } else if (live) {
      root.append(h("div", { class: "hnl-query" }, "Every pair has been seen."));
    }
    // live: the last 10; read-only: every label made (the last 500), newest first, scrolling
    const shown = made.slice(live ? -10 : -500).reverse();
    const rows = shown.map((m) => h("tr", {}, h("td", {}, m.query_id), h("td", {}, m.doc_id), h("td", {}, String(m.grade)), h("td", {}, m.who)));
    const title = live ? "last labels:"
      : `labels made (${made.length}${shown.length < made.length ? `; the last ${shown.length} shown` : ""}), newest first:`;
    root.append(h("div", { class: live ? "hnl-made" : "hnl-made hnl-all" }, h("div", {}, title),
      h("table", {}, h("tr", {}, h("th", {}, "query"), h("th", {}, "document"), h("th", {}, "grade"), h("th", {}, "who")), ...rows)));
  }

  root.addEventListener("keydown", (event) => {
    if (!live) return;
    const key = event.key;
    const position = model.get("position");
    if (["0", "1", "2", "3"].includes(key)) model.send({ type: "label", index: position, grade: Number(key) });
    else if (key === "s") model.send({ type: "skip" });
    else if (key === "u") model.send({ type: "undo" });
    else return;
    event.preventDefault();
    event.stopPropagation();
  });
  model.on("msg:custom", (msg) => {
    if (msg && msg.type === "ready" && !live) { live = true; draw(); }
  });
  model.on("change:made", draw);
  model.on("change:position", draw);
  model.on("change:items", draw);
  draw();
  model.send({ type: "hello" });
}

export default { render };
