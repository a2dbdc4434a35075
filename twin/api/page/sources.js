// Sources: `twin status` as the page shows it: each part (files, Gmail, browser, Telegram, the model, queues,
// index) with its state in words, and the degraded modes.
import { api } from "./api.js";
import { el } from "./dom.js";

function value(v) {
  if (v === null || v === undefined) return "—";
  if (Array.isArray(v)) return v.length ? el("ul", {}, v.map((x) => el("li", {}, value(x)))) : "none";
  if (typeof v === "object") return table(v);
  return String(v);
}

function table(obj) {
  return el("dl", { class: "record" }, Object.entries(obj).map(([k, v]) => [el("dt", {}, k.replaceAll("_", " ")), el("dd", {}, value(v))]));
}

export async function sources(main) {
  const status = await api("/v1/status");
  const degraded = status.degraded || [];
  main.append(el("h1", {}, "Sources"),
    el("section", { class: degraded.length ? "warn" : "ok", "aria-label": "Degraded modes" },
      el("h2", {}, "Degraded modes"), degraded.length ? value(degraded) : el("p", {}, "None: everything runs.")));
  for (const [part, detail] of Object.entries(status)) {
    if (part === "degraded") continue;
    main.append(el("section", {}, el("h2", {}, part.replaceAll("_", " ")), value(detail)));
  }
}
