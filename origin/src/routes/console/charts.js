"use strict";
// Charts of the last minutes, drawn as inline SVG: no library, no external asset, no
// inline style (colours and dashes come from the page's own stylesheet, by class).
// Every drawn thing carries what it stands for, so a test (and a curious operator) can
// read the chart back: a polyline its series (`data-series`), an axis label its value
// (`data-value`) or time (`data-at`), a band segment its state and span.

const PLOT = { width: 400, height: 150, left: 46, right: 12, top: 10, bottom: 22 };
const BAND = { width: 400, height: 44, left: 46, right: 12, top: 4, bottom: 20 };
const SVG_NS = "http://www.w3.org/2000/svg";
const TICK_MS = 5 * 60_000;

function svgNode(name, attributes, text) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text != null) node.textContent = text;
  return node;
}

// The top of the value axis and its step: 0, step, 2·step … ≥ max, at most 5 ticks,
// each step 1, 2 or 5 times a power of ten (and whole, for counts).
function valueTicks(max) {
  const wanted = Math.max(max, 1) / 4;
  const power = 10 ** Math.floor(Math.log10(wanted));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * power).find((s) => s >= wanted));
  const ticks = [];
  for (let value = 0; ticks.length === 0 || ticks[ticks.length - 1] < max; value += step) ticks.push(value);
  if (ticks.length === 1) ticks.push(step);
  return ticks;
}

// Every whole five minutes between `from` and `to`.
function timeTicks(from, to) {
  const ticks = [];
  for (let at = Math.ceil(from / TICK_MS) * TICK_MS; at <= to; at += TICK_MS) ticks.push(at);
  return ticks;
}

function xScale(box, from, to) {
  const span = Math.max(to - from, 1);
  return (at) => box.left + ((at - from) / span) * (box.width - box.left - box.right);
}

function timeAxis(svg, box, from, to, x) {
  for (const at of timeTicks(from, to)) {
    const px = x(at).toFixed(1);
    svg.append(svgNode("line", { class: "grid", x1: px, x2: px, y1: box.top, y2: box.height - box.bottom }));
    svg.append(svgNode("text", { class: "tick-x", x: px, y: box.height - 6, "text-anchor": "middle", "data-at": at }, clock(at)));
  }
}

function figure(title, summary, svg, legend) {
  const node = document.createElement("figure");
  node.className = "chart";
  const caption = document.createElement("figcaption");
  const name = document.createElement("strong");
  name.textContent = title;
  caption.append(name, " ", summary);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `${title}: ${summary}`);
  node.append(caption, svg);
  if (legend) node.append(legend);
  return node;
}

// A series' value now: its last sample's (null when that sample knows none, as when
// no call was made in its interval), for the caption and the legend.
function latest(points) {
  return points.length ? points[points.length - 1][1] : null;
}

// A line chart of `series` ([{name, points: [[atMs, value or null]]}]) from `from` to
// `to`; a null value is a gap (nothing known then).
function lineChart({ title, unit, from, to, series }) {
  const box = PLOT;
  const svg = svgNode("svg", { viewBox: `0 0 ${box.width} ${box.height}`, class: "plot" });
  // Only what is drawn sets the scale: the origin keeps a sample or two from before `from`.
  const drawn = ([at, value]) => value != null && at >= from && at <= to;
  const values = series.flatMap((s) => s.points.filter(drawn).map((p) => p[1]));
  const ticks = valueTicks(values.length ? Math.max(...values) : 0);
  const top = ticks[ticks.length - 1];
  const plotHeight = box.height - box.top - box.bottom;
  const y = (value) => box.top + plotHeight - (value / top) * plotHeight;
  const x = xScale(box, from, to);
  for (const value of ticks) {
    const py = y(value).toFixed(1);
    svg.append(svgNode("line", { class: "grid", x1: box.left, x2: box.width - box.right, y1: py, y2: py }));
    svg.append(svgNode("text", { class: "tick-y", x: box.left - 6, y: py, "text-anchor": "end", "dominant-baseline": "middle", "data-value": value }, count(value)));
  }
  timeAxis(svg, box, from, to, x);
  const legend = document.createElement("ul");
  legend.className = "legend";
  series.forEach((s, index) => {
    let run = [];
    const flush = () => {
      if (run.length) svg.append(svgNode("polyline", { class: `series s${index}`, "data-series": s.name, points: run.join(" ") }));
      run = [];
    };
    for (const point of s.points) {
      if (!drawn(point)) { flush(); continue; }
      run.push(`${x(point[0]).toFixed(1)},${y(point[1]).toFixed(1)}`);
    }
    flush();
    const item = document.createElement("li");
    const swatch = document.createElement("span");
    swatch.className = `swatch s${index}`;
    swatch.setAttribute("aria-hidden", "true");
    const last = latest(s.points);
    item.append(swatch, `${s.name}: ${last == null ? "none now" : count(Math.round(last * 10) / 10) + (unit ? " " + unit : "")}`);
    legend.append(item);
  });
  const summary = series.map((s) => {
    const last = latest(s.points);
    return `${s.name} ${last == null ? "none" : count(Math.round(last * 10) / 10)}`;
  }).join(", ");
  return figure(title, `now — ${summary}${unit ? " (" + unit + ")" : ""}`, svg, legend);
}

const STATE_NAMES = { CLOSED: "closed", OPEN: "open", HALF_OPEN: "half-open" };

// The breaker's state as a band on the time axis from `from` to `to`, as the charts
// above it: known from `start` (≥ `from`; before it, blank), `initial` then (null: not
// known), then each transition ([{to, atMs}], in time order).
function bandChart({ title, from, to, start: known, initial, transitions }) {
  const box = BAND;
  const svg = svgNode("svg", { viewBox: `0 0 ${box.width} ${box.height}`, class: "band" });
  const x = xScale(box, from, to);
  const spans = [];
  const begins = Math.max(from, known == null ? from : known);
  let state = initial;
  let start = begins;
  for (const change of transitions) {
    if (change.atMs <= begins) { state = change.to; continue; }
    if (change.atMs > to) break;
    if (state != null) spans.push({ state, from: start, to: change.atMs });
    state = change.to;
    start = change.atMs;
  }
  if (state != null) spans.push({ state, from: start, to });
  const height = box.height - box.top - box.bottom;
  for (const span of spans) {
    const left = x(span.from);
    const width = Math.max(x(span.to) - left, 0.5);
    svg.append(svgNode("rect", {
      class: `state state-${span.state}`, x: left.toFixed(1), y: box.top, width: width.toFixed(1), height,
      "data-state": span.state, "data-from": span.from, "data-to": span.to,
    }));
    if (width > 40) {
      svg.append(svgNode("text", { class: "state-label", x: (left + 6).toFixed(1), y: box.top + height / 2, "dominant-baseline": "middle" }, STATE_NAMES[span.state] || span.state));
    }
  }
  timeAxis(svg, box, from, to, x);
  const changes = transitions.filter((t) => t.atMs > begins && t.atMs <= to);
  const now = spans.length ? STATE_NAMES[spans[spans.length - 1].state] : "not known";
  const summary = `now ${now}; ${changes.length} change${changes.length === 1 ? "" : "s"}` +
    (changes.length ? `, the last to ${STATE_NAMES[changes[changes.length - 1].to]} at ${clock(changes[changes.length - 1].atMs)}` : "");
  return figure(title, summary, svg, null);
}
