// Teach: a text through learn() (seed 001), and what it did: stored, already known, updated, superseded, not stored.
import { api } from "./api.js";
import { clear, el, errorBox, field, memoryLink, say } from "./dom.js";

function group(title, items, render) {
  return el("section", { class: "outcome" }, el("h2", {}, `${title} (${items.length})`),
    items.length ? el("ul", {}, items.map(render)) : el("p", {}, "none"));
}

export async function teach(main) {
  const text = el("textarea", { name: "text", rows: 6, required: true });
  const source = el("input", { name: "source", value: "page", autocomplete: "off" });
  const out = el("div", { class: "learned", "aria-live": "polite" });
  const form = el("form", { "aria-label": "Teach" },
    field("What should twin learn?", text, "Write as you would tell a friend; twin keeps third-person sentences."),
    field("Source", source), el("button", { type: "submit" }, "Learn"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const done = await api("/v1/learn", { method: "POST", body: { text: text.value, source: source.value || "page" } });
      const memory = (m) => el("li", {}, memoryLink(m));
      clear(out).append(
        group("Stored", done.created, memory),
        group("Already known (reinforced)", done.reinforced, memory),
        group("Updated", done.updated, (m) => el("li", {}, memoryLink(m), " — ", done.update_reasons[String(m.id)] || "")),
        group("Superseded", done.superseded, (s) => el("li", {}, el("a", { href: `#memory/${s.id}` }, `#${s.id}`),
          " replaced by ", el("a", { href: `#memory/${s.by}` }, `#${s.by}`), ` — ${s.reason}`)),
        group("Not stored", done.rejected, (r) => el("li", {}, r.content ? `${r.content} — ` : "", r.reason)),
        done.profile_updated ? el("p", {}, "The profile was updated.") : "");  // not null: native append
      say(`Learned: ${done.created.length} stored, ${done.reinforced.length} already known, ${done.updated.length} updated.`);
    } catch (error) {
      clear(out).append(errorBox(error));
    }
  });
  main.append(el("h1", {}, "Teach"), form, out);
}
