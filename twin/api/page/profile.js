// Profile: facts, goals, preferences, routines (one per line) and tone, saved with the same checks as
// `twin profile edit` (a bad value is refused and named; nothing changes).
import { api } from "./api.js";
import { el, errorBox, field, say } from "./dom.js";

const LISTS = ["facts", "goals", "preferences", "routines"];

export async function profile(main) {
  const current = await api("/v1/profile");
  const boxes = {};
  for (const name of LISTS) {
    boxes[name] = el("textarea", { name, rows: 5 });
    boxes[name].value = current[name].join("\n");
  }
  const tone = el("input", { name: "tone", autocomplete: "off", value: current.tone || "" });
  const problem = el("div", { "aria-live": "assertive" });
  const form = el("form", { "aria-label": "Profile" },
    LISTS.map((name) => field(name[0].toUpperCase() + name.slice(1), boxes[name],
      "One per line: at most 40, each at most 300 characters")),
    field("Tone", tone, "At most 300 characters"), el("button", { type: "submit" }, "Save the profile"), problem);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    problem.replaceChildren();
    for (const box of [...Object.values(boxes), tone]) box.removeAttribute("aria-invalid");
    const body = { tone: tone.value.trim() || null };
    for (const name of LISTS) body[name] = boxes[name].value.split("\n").map((s) => s.trim()).filter(Boolean);
    try {
      await api("/v1/profile", { method: "PUT", body });
      say("Profile saved.");
    } catch (error) {
      const bad = boxes[error.field] || (error.field === "tone" ? tone : null);
      if (bad) bad.setAttribute("aria-invalid", "true");
      problem.append(errorBox(error));
    }
  });
  main.append(el("h1", {}, "Profile"), form);
}
