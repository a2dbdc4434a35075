// Signals: raised and held back, with their evidence and the Hush reasons; Reflect now (seed 001).
import { api } from "./api.js";
import { clear, el, errorBox, say, when } from "./dom.js";

function signal(s) {
  return el("li", { class: `signal ${s.status}` },
    el("h3", {}, s.title), el("p", {}, s.body),
    el("p", { class: "meta" }, `${s.status === "raised" ? "raised" : "held back"} ${when(s.created_at)} · ${s.kind}`,
      s.reason ? ` · why: ${s.reason}` : ""),
    s.evidence.length ? el("p", {}, "Evidence: ", s.evidence.map((id) => [el("a", { href: `#memory/${id}` }, `#${id}`), " "])) : null);
}

export async function signals(main) {
  const out = el("div", { class: "reflected", "aria-live": "polite" });
  const button = el("button", { type: "button" }, "Reflect now");
  const list = el("ol", { class: "signals-list", "aria-label": "Signals" });
  async function load() {
    const rows = await api("/v1/signals", { params: { limit: 50 } });
    clear(list).append(...rows.map(signal));
    if (!rows.length) list.append(el("li", {}, "No signals yet."));
  }
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const done = await api("/api/twin/reflect", { method: "POST", body: {} });
      clear(out).append(el("dl", { class: "record" },
        el("dt", {}, "ran"), el("dd", {}, String(done.ran)),
        el("dt", {}, "signals"), el("dd", {}, String(done.signals.length)),
        el("dt", {}, "widgets"), el("dd", {}, done.widgets.map((w) => w.type).join(", ") || "none"),
        el("dt", {}, "thought"), el("dd", {}, done.thought || "none"),
        done.note ? [el("dt", {}, "note"), el("dd", {}, done.note)] : null));
      say(done.ran ? "Reflected." : "Reflection did not run.");
      await load();
    } catch (error) {
      clear(out).append(errorBox(error));
    } finally {
      button.disabled = false;
    }
  });
  main.append(el("h1", {}, "Signals"), button, out, el("h2", {}, "Raised and held back"), list);
  await load();
}
