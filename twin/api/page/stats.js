// Stats: pictures of how the memory grew: memories per week by source, kinds, warm and cold, supersessions per
// week, and how long this API took to answer its searches in the last hour (SVG built here; colours from the style
// sheet, so light and dark both read).
import { api } from "./api.js";
import { el } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function weekly(data, title, id, unit = "") {
  const names = Object.keys(data.series);
  const totals = data.weeks.map((_, i) => names.reduce((sum, n) => sum + data.series[n][i], 0));
  const top = Math.max(1, ...totals);
  const width = 640, height = 220, pad = 30, bar = (width - pad) / data.weeks.length;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height + 20}`, role: "img", "aria-labelledby": id, class: "chart" },
    svg("title", { id }, title));
  chart.append(svg("text", { x: 0, y: 12, class: "axis" }, String(top)), svg("text", { x: 0, y: height, class: "axis" }, "0"));
  data.weeks.forEach((week, i) => {
    let y = height;
    names.forEach((name, s) => {
      const n = data.series[name][i];
      if (!n) return;
      const h = (n / top) * (height - 20);
      y -= h;
      chart.append(svg("rect", { x: pad + i * bar, y, width: Math.max(1, bar - 2), height: h, class: `s${s % 8}`, "data-week": week },
        svg("title", {}, `week of ${week}: ${n} ${unit || `from ${name}`}`)));
    });
  });
  chart.append(svg("text", { x: pad, y: height + 16, class: "axis" }, data.weeks[0] || ""),
    svg("text", { x: width - 80, y: height + 16, class: "axis" }, data.weeks[data.weeks.length - 1] || ""));
  const legend = el("ul", { class: "legend" }, names.map((name, s) =>
    el("li", {}, el("span", { class: `swatch s${s % 8}`, "aria-hidden": "true" }), `${name}: ${data.series[name].reduce((a, b) => a + b, 0)}`)));
  return el("figure", {}, chart, el("figcaption", {}, title), legend);
}

function bars(rows, title) {
  const top = Math.max(1, ...rows.map(([, n]) => n));
  const width = 640, line = 26;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${rows.length * line + 4}`, role: "img", class: "chart" }, svg("title", {}, title));
  rows.forEach(([label, n], i) => {
    chart.append(svg("text", { x: 0, y: i * line + 17, class: "axis" }, label),
      svg("rect", { x: 130, y: i * line + 4, height: 18, width: Math.max(1, (n / top) * (width - 200)), class: `s${i % 8}` }),
      svg("text", { x: 136 + (n / top) * (width - 200), y: i * line + 17, class: "axis" }, String(n)));
  });
  return el("figure", {}, chart, el("figcaption", {}, title));
}

function clock(iso) {
  return new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function latency(data, title) {
  const buckets = data.buckets;
  const searched = buckets.filter((b) => b.count);
  if (!searched.length) return el("p", { class: "note" }, "No searches in the last hour (this API process keeps their times since it started).");
  const top = Math.max(1, ...searched.map((b) => b.p99_ms));
  const width = 640, height = 200, pad = 30, bar = (width - pad) / buckets.length;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height + 20}`, role: "img", "aria-labelledby": "latency-title", class: "chart latency" },
    svg("title", { id: "latency-title" }, title));
  chart.append(svg("text", { x: 0, y: 12, class: "axis" }, `${Math.round(top)} ms`), svg("text", { x: 0, y: height, class: "axis" }, "0"));
  buckets.forEach((b, i) => {
    if (!b.count) return;
    const words = `${clock(b.start)}: ${b.count} search${b.count === 1 ? "" : "es"}, p50 ${b.p50_ms} ms, p99 ${b.p99_ms} ms`;
    const x = pad + i * bar, w = Math.max(1, bar / 2 - 2);
    for (const [key, s, dx] of [["p50_ms", 0, 0], ["p99_ms", 1, w + 1]]) {
      const h = Math.max(1, (b[key] / top) * (height - 20));
      chart.append(svg("rect", { x: x + dx, y: height - h, width: w, height: h, class: `s${s}`, "data-start": b.start },
        svg("title", {}, words)));
    }
  });
  chart.append(svg("text", { x: pad, y: height + 16, class: "axis" }, clock(buckets[0].start)),
    svg("text", { x: width - 60, y: height + 16, class: "axis" }, clock(buckets[buckets.length - 1].start)));
  const all = searched.reduce((n, b) => n + b.count, 0);
  const asked = Object.entries(data.by_interface || {}).sort((a, b) => b[1] - a[1]).map(([who, n]) => `${who} ${n}`);
  const legend = el("ul", { class: "legend" },
    el("li", {}, el("span", { class: "swatch s0", "aria-hidden": "true" }), "p50 (median)"),
    el("li", {}, el("span", { class: "swatch s1", "aria-hidden": "true" }), "p99"),
    el("li", {}, `${all} search${all === 1 ? "" : "es"}, slowest p99 ${top} ms`),
    asked.length ? el("li", { class: "asked" }, `asked by: ${asked.join(", ")}`) : null);
  return el("figure", {}, chart, el("figcaption", {}, title), legend);
}

export async function stats(main) {
  const [counts, weeks, superseded, took] = await Promise.all([api("/v1/stats"),
    api("/v1/stats/weeks", { params: { weeks: 26 } }), api("/v1/stats/supersessions", { params: { weeks: 26 } }),
    api("/v1/stats/recall-latency")]);
  const kinds = Object.entries(counts.by_kind).map(([k, t]) => [k, t.warm + t.cold]);
  main.append(el("h1", {}, "Stats"),
    el("p", {}, `${counts.total_warm + counts.total_cold} memories (${counts.total_warm} warm, ${counts.total_cold} cold), ` +
      `${counts.superseded} superseded, ${counts.edges.co_occurs + counts.edges.co_inferred} graph edges.`),
    el("h2", {}, "Memories per week, by source"), weekly(weeks, "Memories made per week over the last 26 weeks, by source type", "weeks-title"),
    el("h2", {}, "Kinds"), bars(kinds, "Active memories by kind"),
    el("h2", {}, "Warm and cold"), bars([["warm", counts.total_warm], ["cold", counts.total_cold], ["superseded", counts.superseded]], "Warm, cold and superseded memories"),
    el("h2", {}, "Supersessions over time"),
    weekly({ weeks: superseded.weeks, series: { superseded: superseded.counts } },
      "Memories superseded per week over the last 26 weeks (in the week the newer value came)", "supersessions-title", "superseded"),
    el("h2", {}, "Recall latency, last hour"),
    latency(took, `Server time of every search this API process answered (page, HTTP, CLI, MCP) per ${took.step_min} minutes: median and 99th percentile`));
}
