// Search: results as you type (debounced), each with its kind, source, time, score and the per-signal breakdown.
// Sensitive memories stay out unless revealed, for this search only (a new query hides them again). Why a result
// ranks where it does, as recall says it (`reasons`: a time window, the newest value of a slot, a supersession):
// shown as text, never markup (a reason may quote memory text).
import { api } from "./api.js";
import { clear, debounce, el, errorBox, field, memoryLink, memoryMeta, say, select, KINDS } from "./dom.js";

const SIGNALS = [["keyword", "keyword"], ["vector", "vector"], ["recency", "recency"], ["relevance", "relevance"]];

function reasons(hit) {
  if (!hit.reasons || !hit.reasons.length) return null;
  return el("ul", { class: "reasons", "aria-label": "Why it ranks here" },
    hit.reasons.map((r) => el("li", { class: "reason", "data-code": r.code }, r.words)));
}

function breakdown(hit) {
  return el("dl", { class: "signals" },
    SIGNALS.map(([key, label]) => [el("dt", {}, label), el("dd", {}, hit[key].toFixed(2))]),
    el("dt", {}, "importance"), el("dd", {}, hit.importance.toFixed(2)));
}

export async function search(main) {
  const query = el("input", { type: "search", name: "q", autocomplete: "off", placeholder: "what did I decide about the roof?" });
  const kind = select("kind", [["", "any kind"], ...KINDS.map((k) => [k, k])]);
  const reveal = el("button", { type: "button", "aria-pressed": "false" }, "Reveal sensitive memories for this search");
  const results = el("ol", { class: "results", "aria-label": "Results" });
  const note = el("p", { class: "note" });
  let revealed = false;
  let asked = 0;

  async function run() {
    const text = query.value.trim();
    const mine = ++asked;
    if (!text) {
      clear(results);
      note.textContent = "";
      return;
    }
    try {
      const found = await api("/v1/search", {
        method: "POST", retry: true,  // a read, though a POST: tried again until the twin answers
        body: { query: text, limit: 20, kind: kind.value || null, max_sensitivity: revealed ? "sensitive" : "private" },
      });
      if (mine !== asked) return;
      clear(results);
      note.textContent = found.degraded ? found.reason : "";
      for (const hit of found.results) {
        results.append(el("li", { class: "memory", "data-id": hit.id },
          memoryLink(hit), memoryMeta(hit),
          el("p", { class: "score" }, `score ${hit.score.toFixed(3)}`), breakdown(hit), reasons(hit)));
      }
      say(`${found.results.length} result${found.results.length === 1 ? "" : "s"}${revealed ? ", sensitive shown" : ""}`);
    } catch (error) {
      clear(results).append(errorBox(error));
    }
  }

  const soon = debounce(run, 250);
  const hide = () => {  // a new search, by its words or its kind, starts with sensitive memories hidden again
    revealed = false;
    reveal.setAttribute("aria-pressed", "false");
  };
  query.addEventListener("input", () => { hide(); soon(); });
  kind.addEventListener("change", () => { hide(); run(); });
  reveal.addEventListener("click", () => {
    revealed = !revealed;
    reveal.setAttribute("aria-pressed", String(revealed));
    run();
  });
  main.append(
    el("h1", {}, "Search"),
    el("form", { role: "search", onsubmit: (e) => { e.preventDefault(); run(); } },
      field("Search your memories", query), field("Kind", kind), reveal),
    note, results);
  query.focus();
}
