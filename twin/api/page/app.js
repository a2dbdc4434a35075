// The page's shell: one view at a time in <main>, chosen by the address's #fragment (so every view has a link and
// the browser's back button works). A view is `render(main, arg) -> cleanup?`. The page key a session link put in
// the address is taken out of it first (api.js).
import { api, ApiError, takeKeyFromAddress } from "./api.js";
import { clear, el, errorBox } from "./dom.js";
import { search } from "./search.js";
import { memories, memory } from "./memories.js";
import { teach } from "./teach.js";
import { activity } from "./activity.js";
import { signals } from "./signals.js";
import { profile } from "./profile.js";
import { sources } from "./sources.js";
import { stats } from "./stats.js";

const VIEWS = { search, memories, memory, teach, activity, signals, profile, sources, stats };
let cleanup = null;

function noSession(main, error) {
  const why = error.code === "page_key"
    ? "This browser has the session's cookie but not its page key (its storage was cleared, or this is another "
      + "address of the twin than the one the link opened). "
    : "This page needs a session. ";
  clear(main).append(
    el("h1", {}, "No session"),
    el("p", {}, why, "Run ", el("code", {}, "twin open"),
      " on this machine and open the link it prints (it works once, for a few minutes)."));
}

async function show() {
  const [name, arg] = (location.hash.slice(1) || "search").split("/");
  const view = VIEWS[name] || search;
  const main = document.getElementById("main");
  if (cleanup) cleanup();
  cleanup = null;
  for (const link of document.querySelectorAll("nav a")) {
    if (link.getAttribute("href") === `#${name}`) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  clear(main);
  document.getElementById("status").textContent = "";
  try {
    cleanup = (await view(main, arg)) || null;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) noSession(main, error);
    else main.append(errorBox(error));
  }
  document.title = `twin · ${name}`;
}

takeKeyFromAddress();
window.addEventListener("hashchange", show);
window.addEventListener("DOMContentLoaded", show);
export { api };
