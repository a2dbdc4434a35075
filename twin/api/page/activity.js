// Activity: the diary, newest first, live (server-sent events, reconnected with backoff when the twin comes back),
// filterable by kind; the held-back signals with why.
import { api, follow, NOT_ANSWERING } from "./api.js";
import { el, field, select, when } from "./dom.js";

const KINDS = ["learned", "read_email", "indexed_file", "browsed", "sent", "scheduled", "thought", "forgot", "profile"];

function line(entry) {
  return el("li", { "data-kind": entry.kind, "data-id": entry.id },
    el("time", { datetime: entry.at }, when(entry.at)), " ", el("span", { class: "badge" }, entry.kind), " ", entry.text);
}

export async function activity(main) {
  const kind = select("kind", [["", "every kind"], ...KINDS.map((k) => [k, k])]);
  const list = el("ol", { class: "diary", "aria-label": "Diary", "aria-live": "polite" });
  const state = el("p", { class: "note" }, "Connecting…");
  const apply = () => {
    for (const item of list.children) item.hidden = Boolean(kind.value) && item.dataset.kind !== kind.value;
  };
  kind.addEventListener("change", apply);
  const lines = await api("/api/twin/activity");
  for (const entry of lines) list.append(line(entry));
  const held = await api("/v1/signals", { params: { status: "held_back", limit: 20 } });
  main.append(el("h1", {}, "Activity"), field("Show", kind), state, list,
    el("h2", {}, "Held back"),
    held.length ? el("ul", {}, held.map((s) => el("li", {}, el("strong", {}, s.title), ` — ${s.reason}`)))
      : el("p", {}, "No signal was held back."));
  const newest = lines.length ? lines[0].id : 0;
  const said = {
    live: () => "Live.",
    down: (ms) => `${NOT_ANSWERING} Reconnecting in ${Math.round(ms / 1000)} s…`,
    ended: () => "The session has ended: run twin open for a new one.",
  };
  return follow("/v1/activity/stream", { after: newest }, {
    onState: (name, ms) => { state.textContent = said[name](ms); },
    onEvent: (event) => {
      if (event.event !== "line") return;
      const entry = JSON.parse(event.data);
      if (list.querySelector(`[data-id="${entry.id}"]`)) return;
      list.prepend(line(entry));
      apply();
    },
  });
}
