// Memories: everything, newest first, with filters; "Show older" continues after the last one shown (nothing older
// is ever skipped). One memory: its record and provenance, supersession history, graph neighbours, edit, forget,
// and forget its whole source (with the count first).
import { api, ApiError } from "./api.js";
import { clear, el, errorBox, field, memoryLink, memoryMeta, say, select, when, KINDS } from "./dom.js";

const PAGE = 50;
const SOURCE_TYPES = ["file", "email", "browser", "telegram", "muse", "api", "page", "session", "import"];

function isoDay(value, endOfDay) {
  return value ? `${value}T${endOfDay ? "23:59:59" : "00:00:00"}Z` : null;
}

export async function memories(main) {
  const form = el("form", { class: "filters", "aria-label": "Filters" },
    field("Kind", select("kind", [["", "any kind"], ...KINDS.map((k) => [k, k])])),
    field("Source type", select("source_type", [["", "any source"], ...SOURCE_TYPES.map((s) => [s, s])])),
    field("Namespace", el("input", { name: "namespace", value: "default", autocomplete: "off" })),
    field("Warm or cold", select("tier", [["", "both"], ["warm", "warm"], ["cold", "cold"]])),
    field("From", el("input", { type: "date", name: "since" })),
    field("To", el("input", { type: "date", name: "until" })),
    el("div", { class: "field check" },
      el("input", { type: "checkbox", name: "include_superseded", id: "f-superseded" }),
      el("label", { for: "f-superseded" }, "Superseded ones too")),
    el("button", { type: "submit" }, "Show"));
  const list = el("ol", { class: "results", "aria-label": "Memories" });
  const more = el("button", { type: "button", hidden: true }, "Show older");
  let last = null;

  function params() {
    const data = new FormData(form);
    return {
      kind: data.get("kind"), source_type: data.get("source_type"), tier: data.get("tier"),
      namespace: data.get("namespace") || "default", include_superseded: data.get("include_superseded") ? "true" : null,
      since: isoDay(data.get("since"), false), until: isoDay(data.get("until"), true), limit: PAGE,
    };
  }

  async function load(fresh) {
    try {
      const page = await api("/v1/memories", {
        params: { ...params(), after: fresh ? null : last?.id, after_created_at: fresh ? null : last?.created_at },
      });
      if (fresh) clear(list);
      for (const m of page) list.append(el("li", { class: "memory", "data-id": m.id }, memoryLink(m), memoryMeta(m)));
      last = page.length ? page[page.length - 1] : last; // its id and created_at: the cursor holds if it is forgotten
      more.hidden = page.length < PAGE;
      say(`${list.children.length} memories shown${page.length < PAGE ? ", the oldest included" : ""}`);
    } catch (error) {
      list.append(el("li", {}, errorBox(error)));
    }
  }

  form.addEventListener("submit", (e) => { e.preventDefault(); last = null; load(true); });
  more.addEventListener("click", () => load(false));
  main.append(el("h1", {}, "Memories"), form, list, more);
  await load(true);
}

function record(m) {
  const rows = [["id", m.id], ["kind", m.kind], ["source", m.source], ["made", when(m.created_at)],
    ["updated", when(m.updated_at)], ["last recalled", when(m.last_accessed)], ["hits", m.hits],
    ["importance", m.importance.toFixed(2)], ["sensitivity", m.sensitivity], ["status", m.status],
    ["warm or cold", m.tier], ["namespace", m.namespace], ["tags", m.tags.join(", ") || "none"]];
  for (const [key, value] of Object.entries(m.provenance || {})) rows.push([`provenance: ${key}`, value]);
  if (m.superseded_by) rows.push(["superseded by", el("a", { href: `#memory/${m.superseded_by}` }, `#${m.superseded_by}`)]);
  if (m.supersede_reason) rows.push(["why", m.supersede_reason]);
  return el("dl", { class: "record" }, rows.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

function editor(m, done) {
  const text = el("textarea", { name: "content", rows: 3 });
  text.value = m.content;
  const form = el("form", { class: "edit", "aria-label": "Edit" },
    field("New wording (the id, hits and links stay; it is embedded again)", text),
    el("button", { type: "submit" }, "Save"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await api(`/v1/memories/${m.id}`, { method: "PATCH", body: { content: text.value }, params: { max_sensitivity: "sensitive", namespace: m.namespace } });
      say(`Memory #${m.id} saved.`);
      done();
    } catch (error) {
      form.append(errorBox(error));
    }
  });
  return form;
}

function forgetOne(m, area) {
  const ask = el("button", { type: "button", class: "danger" }, "Forget this memory…");
  ask.addEventListener("click", () => {
    const yes = el("button", { type: "button", class: "danger" }, `Forget #${m.id} for good`);
    const no = el("button", { type: "button" }, "Keep it");
    const box = el("div", { class: "confirm", role: "group", "aria-label": "Confirm" },
      el("p", {}, "This removes the memory and every copy of it. There is no undo."), yes, no);
    cancellable(box, no, ask);
    yes.addEventListener("click", async () => {
      try {
        await api(`/v1/memories/${m.id}`, { method: "DELETE", params: { namespace: m.namespace } });
        let gone = false;
        try { await api(`/v1/memories/${m.id}`, { params: { namespace: m.namespace } }); } catch (error) { gone = error instanceof ApiError && error.status === 404; }
        clear(area).append(el("p", { class: "done", role: "alert" },
          gone ? `Forgotten: memory #${m.id} is gone.` : `Memory #${m.id} was forgotten, but it still answers: reload.`));
      } catch (error) {
        box.append(errorBox(error));
      }
    });
    ask.replaceWith(box);
    no.focus();
  });
  return ask;
}

function cancellable(box, no, ask) {
  // A confirmation starts on its safe button and Escape cancels it: a second Enter never forgets by accident.
  const cancel = () => { box.replaceWith(ask); ask.focus(); };
  no.addEventListener("click", cancel);
  box.addEventListener("keydown", (event) => { if (event.key === "Escape") cancel(); });
}

function forgetSource(m, area) {
  const ask = el("button", { type: "button", class: "danger" }, "Forget everything from this source…");
  ask.addEventListener("click", async () => {
    try {
      const plan = await api("/v1/forget-source", { params: { source: m.source, namespace: m.namespace } });
      const n = plan.counts.memories;
      const yes = el("button", { type: "button", class: "danger" }, `Forget ${n} memor${n === 1 ? "y" : "ies"} from this source`);
      const no = el("button", { type: "button" }, "Keep them");
      const box = el("div", { class: "confirm", role: "group", "aria-label": "Confirm" },
        el("p", {}, `Everything from ${m.source}: ${n} memor${n === 1 ? "y" : "ies"}, ${plan.counts.vectors} vector${plan.counts.vectors === 1 ? "" : "s"}, ` +
          `${plan.counts.transcript_rows} transcript rows. There is no undo.`), yes, no);
      cancellable(box, no, ask);
      yes.addEventListener("click", async () => {
        try {
          const done = await api("/v1/forget-source", { method: "POST", body: { source: m.source, namespace: m.namespace } });
          clear(area).append(el("p", { class: "done", role: "alert" },
            `Forgotten: ${done.removed.memories} memories from ${m.source}.`));
        } catch (error) {
          box.append(errorBox(error));
        }
      });
      ask.replaceWith(box);
      no.focus();
    } catch (error) {
      ask.after(errorBox(error));
    }
  });
  return ask;
}

function chain(history) {
  if (history.chain.length < 2) return el("p", {}, "It replaced nothing and nothing replaced it.");
  return el("ol", { class: "chain" }, history.chain.map((m) => el("li", {},
    m.id === history.id ? el("strong", {}, m.content) : memoryLink(m),
    el("span", { class: "meta" }, ` #${m.id} · ${m.status}${m.id === history.current ? " · current" : ""}`))));
}

export async function memory(main, arg, reveal = false) {
  const id = encodeURIComponent(arg);  // as typed: the API's error says what an id looks like ("abc", not NaN)
  const scope = { max_sensitivity: reveal ? "sensitive" : "private" };
  const m = await api(`/v1/memories/${id}`, { params: scope });
  const area = el("div", { class: "memory-view" });
  main.append(el("p", {}, el("a", { href: "#memories" }, "← All memories")), area);
  const [history, neighbours] = await Promise.all([
    api(`/v1/memories/${id}/history`, { params: { ...scope, namespace: m.namespace } }),
    api(`/v1/memories/${id}/neighbors`, { params: { ...scope, namespace: m.namespace, depth: 2 } })]);
  const masked = m.sensitivity === "sensitive" && !reveal;
  const revealButton = masked ? el("button", { type: "button", onclick: () => { clear(main); memory(main, arg, true); } }, "Reveal the text") : "";  // "" not null: the native append below writes null as text
  area.append(
    el("h1", {}, `Memory #${m.id}`),
    el("blockquote", { class: "content" }, m.content), revealButton, memoryMeta(m),
    el("h2", {}, "Record and provenance"), record(m),
    el("h2", {}, "Supersession history"), chain(history),
    el("h2", {}, "Neighbours in the graph"),
    neighbours.neighbors.length
      ? el("ul", {}, neighbours.neighbors.map((n) => el("li", {}, memoryLink(n), ` (${n.score.toFixed(2)})`)))
      : el("p", {}, neighbours.degraded ? neighbours.reason : "No linked memories."),
    el("h2", {}, "Correct it"),
    masked ? el("p", {}, "Reveal the text to edit it.") : editor(m, () => { clear(main); memory(main, arg, reveal); }),
    el("h2", {}, "Delete it"), el("div", { class: "actions" }, forgetOne(m, area), forgetSource(m, area)));
}
