// Building the page's DOM. Text from the store (memory content, sources, diary lines) only ever becomes text
// nodes or textContent: never markup, so a memory holding <script> shows as those characters.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export function say(message) {
  const status = document.getElementById("status");
  status.textContent = "";
  status.textContent = message;
}

export function when(iso) {
  if (!iso) return "never";
  const moment = new Date(iso);
  return Number.isNaN(moment.getTime()) ? iso : moment.toLocaleString();
}

export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

export function errorBox(error) {
  return el("p", { class: "error", role: "alert" }, error.message || String(error));
}

export function field(label, control, hint) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  const wrap = el("div", { class: "field" }, el("label", { for: id }, label), control);
  if (hint) {
    const hintId = `${id}-hint`;
    control.setAttribute("aria-describedby", hintId);
    wrap.append(el("p", { class: "hint", id: hintId }, hint));
  }
  return wrap;
}

export function select(name, options, value = "") {
  return el("select", { name }, options.map(([v, label]) => el("option", { value: v, selected: v === value }, label)));
}

export const KINDS = ["fact", "episode", "preference", "relationship", "document", "insight"];

export function sourceOf(memory) {
  return memory.source;
}

export function memoryMeta(memory) {
  return el("p", { class: "meta" },
    el("span", { class: `badge kind-${memory.kind}` }, memory.kind), " ",
    el("span", { class: "source" }, sourceOf(memory)), " · ",
    el("time", { datetime: memory.created_at }, when(memory.created_at)),
    memory.status !== "active" ? [" · ", el("span", { class: "badge superseded" }, memory.status)] : null,
    memory.sensitivity === "sensitive" ? [" · ", el("span", { class: "badge sensitive" }, "sensitive")] : null,
    memory.tier === "cold" ? [" · ", el("span", { class: "badge" }, "cold")] : null);
}

export function memoryLink(memory) {
  return el("a", { href: `#memory/${memory.id}`, class: "content" }, memory.content);
}
