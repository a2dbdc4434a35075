// The page's one client of the JSON API: the same routes every other client calls. The session cookie goes with
// every request (same origin); every write carries the CSRF token the server set in a readable cookie.

export class ApiError extends Error {
  constructor(status, body) {
    const detail = body && body.error ? body.error : { code: "error", message: String(body) };
    super(detail.message);
    this.status = status;
    this.code = detail.code;
    this.field = detail.field;
  }
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

export async function api(path, { method = "GET", body, params } = {}) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") headers["X-CSRF-Token"] = csrfToken();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url(path, params), {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin", cache: "no-store",
  });
  const type = response.headers.get("content-type") || "";
  const data = type.includes("json") ? await response.json() : await response.text();
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}
