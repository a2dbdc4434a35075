// The page's one client of the JSON API: the same routes every other client calls. Every request carries the
// session cookie (same origin) and the page key (twin.api.session): the key came in the address's fragment after
// the `twin open` link, is kept in this origin's localStorage (so a new tab of the page has it too; another port
// never does) and goes as a header with every request, reads included. Every write also carries the CSRF token
// the server set in a readable cookie. While the twin does not answer, a read says so in words and tries again
// with backoff; a write says so and is not sent again by itself.
import { createParser } from "./vendor/eventsource-parser/index.js";
import { say } from "./dom.js";

const KEY_STORE = "twin_page_key";
const KEY_HEADER = "X-Twin-Page-Key";
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30000;
export const NOT_ANSWERING = "The twin is not answering: its daemon is stopped or restarting.";

export class ApiError extends Error {
  constructor(status, body) {
    const detail = body && body.error ? body.error : { code: "error", message: String(body) };
    super(detail.message);
    this.status = status;
    this.code = detail.code;
    this.field = detail.field;
  }
}

// After a session link the address is /twin#key=…: keep the key, and take it out of the address at once (out of
// the history, the screen and any bookmark).
export function takeKeyFromAddress() {
  const found = location.hash.match(/^#key=([A-Za-z0-9_-]{16,128})$/);
  if (!found) return;
  localStorage.setItem(KEY_STORE, found[1]);
  history.replaceState(null, "", location.pathname + location.search);
}

function pageKey() {
  return localStorage.getItem(KEY_STORE) || "";
}

function csrfToken() {
  const found = document.cookie.match(/(?:^|;\s*)twin_csrf=([^;]+)/);
  return found ? decodeURIComponent(found[1]) : "";
}

export function url(path, params = {}) {
  const target = new URL(path, location.origin);
  for (const [name, value] of Object.entries(params)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one !== null && one !== undefined && one !== "" && one !== false) target.searchParams.append(name, one);
    }
  }
  return target;
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const seconds = (ms) => `${Math.round(ms / 1000)} s`;

// `retry` (reads: GET) tries again after 1, 2, 4 … up to 30 s while the twin does not answer; a write is not
// resent (it may have arrived), it fails with the words of NOT_ANSWERING.
export async function api(path, { method = "GET", body, params, retry = method === "GET" } = {}) {
  const headers = { Accept: "application/json", [KEY_HEADER]: pageKey() };
  if (method !== "GET") headers["X-CSRF-Token"] = csrfToken();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const init = {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin", cache: "no-store",
  };
  let response = null;
  for (let wait = RETRY_FIRST_MS, waited = false; response === null; wait = Math.min(wait * 2, RETRY_MAX_MS)) {
    try {
      response = await fetch(url(path, params), init);
      if (waited) say("The twin answers again.");
    } catch {
      if (!retry) {
        throw new ApiError(0, { error: { code: "unreachable",
          message: `${NOT_ANSWERING} This was probably not done: try again once it answers.` } });
      }
      say(`${NOT_ANSWERING} Trying again in ${seconds(wait)}…`);
      waited = true;
      await sleep(wait);
    }
  }
  const type = response.headers.get("content-type") || "";
  const data = type.includes("json") ? await response.json() : await response.text();
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

// A server-sent event stream read with fetch (an EventSource cannot send the page key), its events parsed by
// eventsource-parser (vendored). `onEvent({event, id, data})` for each; `onState("live")` when connected,
// `onState("down", ms)` before each new try (backoff 1 s doubling to 30 s; reset once connected; the last event's
// id goes back as Last-Event-ID), `onState("ended")` when the session is gone (401: no retry). Returns `stop()`.
export function follow(path, params, { onEvent, onState }) {
  let stopped = false;
  let controller = null;
  let lastId = "";
  let wentLive = false;
  const parser = createParser({ onEvent: (event) => { if (event.id) lastId = event.id; onEvent(event); } });
  async function read() {
    const headers = { Accept: "text/event-stream", [KEY_HEADER]: pageKey() };
    if (lastId) headers["Last-Event-ID"] = lastId;
    controller = new AbortController();
    const response = await fetch(url(path, params), { headers, credentials: "same-origin", cache: "no-store",
      signal: controller.signal });
    if (response.status === 401) return false;
    if (!response.ok || !response.body) throw new Error(`the stream answered ${response.status}`);
    onState("live");
    wentLive = true;
    parser.reset();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return true;
      parser.feed(value);
    }
  }
  (async () => {
    for (let wait = RETRY_FIRST_MS; !stopped;) {
      wentLive = false;
      try {
        if (!(await read())) { onState("ended"); return; }
      } catch {
        // the twin went away, or never answered: try again below
      }
      if (stopped) return;
      if (wentLive) wait = RETRY_FIRST_MS;
      onState("down", wait);
      await sleep(wait);
      wait = Math.min(wait * 2, RETRY_MAX_MS);
    }
  })();
  return () => { stopped = true; if (controller) controller.abort(); };
}
