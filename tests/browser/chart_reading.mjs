// Reads the console's SVG charts back (charts.js marks what each drawn thing stands for)
// and checks them against the samples they were drawn from, for console_charts.mjs.
// The scales come from the axes' own labels, so the checks hold whatever the geometry.

// Drawn coordinates are rounded to a tenth; scales read off two ticks carry that too.
const NEAR = 0.3;

function fail(chart, message) {
  throw new Error(`${chart ? chart.where + " / " + chart.title : "?"}: ${message}`);
}

// Every chart on the page, as plain data.
export function readCharts(page) {
  return page.evaluate(() => [...document.querySelectorAll("figure.chart")].map((figure) => {
    const svg = figure.querySelector("svg");
    const drop = figure.closest("article.drop");
    const number = (node, name) => Number(node.getAttribute(name));
    return {
      where: drop ? drop.dataset.event : "guard",
      title: figure.querySelector("figcaption strong").textContent,
      caption: figure.querySelector("figcaption").textContent,
      label: svg.getAttribute("aria-label"),
      yTicks: [...svg.querySelectorAll("text.tick-y")].map((t) => ({ value: Number(t.dataset.value), y: number(t, "y"), text: t.textContent })),
      xTicks: [...svg.querySelectorAll("text.tick-x")].map((t) => ({ at: Number(t.dataset.at), x: number(t, "x"), text: t.textContent })),
      lines: [...svg.querySelectorAll("polyline")].map((p) => ({ cls: p.getAttribute("class"), series: p.dataset.series, points: p.getAttribute("points") })),
      rects: [...svg.querySelectorAll("rect")].map((r) => ({
        cls: r.getAttribute("class"), state: r.dataset.state, from: Number(r.dataset.from), to: Number(r.dataset.to),
        x: number(r, "x"), width: number(r, "width"),
      })),
    };
  }));
}

// The linear map from a tick's `key` (value or time) to its `position`, through the
// first and last tick; every tick between must lie on it.
function scaleOf(chart, ticks, key, position) {
  if (ticks.length < 2) fail(chart, `${ticks.length} ${key} ticks: no scale to read`);
  const [a, b] = [ticks[0], ticks[ticks.length - 1]];
  const map = (v) => a[position] + ((v - a[key]) * (b[position] - a[position])) / (b[key] - a[key]);
  for (const tick of ticks) {
    if (!(Math.abs(map(tick[key]) - tick[position]) <= NEAR)) fail(chart, `the ${key} tick ${tick[key]} at ${tick[position]} is off the axis's scale`);
  }
  return map;
}

// The x axis: a label at every whole five minutes of the window, HH:MM in the zone.
function checkTimeAxis(chart, expected) {
  const drawn = chart.xTicks.map((t) => `${t.at}=${t.text}`).join(" ");
  const wanted = expected.map(([at, text]) => `${at}=${text}`).join(" ");
  if (drawn !== wanted) fail(chart, `x ticks ${drawn}, not ${wanted}`);
  return scaleOf(chart, chart.xTicks, "at", "x");
}

// The y axis: from 0 up in equal steps, its top the first tick at or above `max`, higher
// values drawn higher, each label the value as en-US counts it.
function checkValueAxis(chart, max) {
  const values = chart.yTicks.map((t) => t.value);
  if (values[0] !== 0) fail(chart, `the y axis starts at ${values[0]}`);
  const step = values[1] - values[0];
  if (!(step > 0) || values.some((v, i) => Math.abs(v - i * step) > 1e-9)) fail(chart, `y ticks ${values.join(", ")} are not equal steps from 0`);
  const top = values[values.length - 1];
  if (!(top >= max) || (max > 0 && values[values.length - 2] >= max)) fail(chart, `y ticks ${values.join(", ")} for a maximum of ${max}`);
  if (!(chart.yTicks[values.length - 1].y < chart.yTicks[0].y)) fail(chart, "the y axis is upside down");
  for (const tick of chart.yTicks) {
    if (tick.text !== tick.value.toLocaleString("en-US")) fail(chart, `the y tick ${tick.value} is labelled ${tick.text}`);
  }
  return scaleOf(chart, chart.yTicks, "value", "y");
}

// A series' unbroken runs inside [from, to]: a null value, or a time outside, breaks it.
function runsOf(points, from, to) {
  const runs = [[]];
  for (const [at, value] of points) {
    if (value == null || at < from || at > to) { if (runs[runs.length - 1].length) runs.push([]); continue; }
    runs[runs.length - 1].push([at, value]);
  }
  return runs.filter((run) => run.length);
}

// `chart`'s polylines against `series` ([{name, points: [[atMs, value]]}]) over `window`
// ({from, to, ticks}); the number of points and lines checked.
export function checkLines(chart, series, window) {
  if (!chart) fail(null, "a chart is missing");
  const inWindow = series.flatMap((s) => runsOf(s.points, window.from, window.to).flat().map((p) => p[1]));
  const y = checkValueAxis(chart, Math.max(...inWindow));
  const x = checkTimeAxis(chart, window.ticks);
  const names = series.map((s) => s.name);
  const stray = chart.lines.find((line) => !names.includes(line.series) || !/^series\b/.test(line.cls));
  if (stray) fail(chart, `a line of ${stray.series} (${stray.cls}) not among ${names.join(", ")}`);
  let points = 0;
  for (const { name, points: samples } of series) {
    const runs = runsOf(samples, window.from, window.to);
    const drawn = chart.lines.filter((line) => line.series === name);
    if (drawn.length !== runs.length) fail(chart, `${name} is drawn in ${drawn.length} lines, not ${runs.length}`);
    runs.forEach((run, r) => {
      const xy = drawn[r].points.trim().split(/\s+/).map((pair) => pair.split(",").map(Number));
      if (xy.length !== run.length) fail(chart, `${name}'s line ${r + 1} has ${xy.length} points, not ${run.length}`);
      run.forEach(([at, value], i) => {
        const [px, py] = xy[i];
        if (!(Math.abs(px - x(at)) <= NEAR && Math.abs(py - y(value)) <= NEAR)) {
          fail(chart, `${name} at ${new Date(at).toISOString()} (${value}) is drawn at ${px},${py}, not ${x(at).toFixed(1)},${y(value).toFixed(1)}`);
        }
      });
      points += run.length;
    });
  }
  return { points, lines: chart.lines.length };
}

// The band's rects against `spans` ([{state, from, to}]), in order, and nothing else; the
// states in order, as a word list.
export function checkBand(chart, spans, ticks) {
  if (!chart) fail(null, "the band is missing");
  const x = checkTimeAxis(chart, ticks);
  const drawn = chart.rects.map((r) => `${r.cls} ${r.state} ${r.from}–${r.to}`).join("; ");
  const wanted = spans.map((s) => `state state-${s.state} ${s.state} ${s.from}–${s.to}`).join("; ");
  if (drawn !== wanted) fail(chart, `the band is [${drawn}], not [${wanted}]`);
  spans.forEach((span, i) => {
    const rect = chart.rects[i];
    const width = Math.max(x(span.to) - x(span.from), 0.5);
    if (!(Math.abs(rect.x - x(span.from)) <= NEAR && Math.abs(rect.width - width) <= NEAR)) {
      fail(chart, `${span.state} from ${span.from} is drawn at x ${rect.x} width ${rect.width}, not ${x(span.from).toFixed(1)} width ${width.toFixed(1)}`);
    }
  });
  return spans.map((s) => s.state).join(" ");
}

// The caption (title, then `summary`) and the image's label say the same.
export function checkCaption(chart, summary) {
  if (!chart) fail(null, `no chart for "${summary}"`);
  if (chart.caption !== `${chart.title} ${summary}`) fail(chart, `the caption says "${chart.caption}", not "${chart.title} ${summary}"`);
  if (chart.label !== `${chart.title}: ${summary}`) fail(chart, `the label says "${chart.label}", not "${chart.title}: ${summary}"`);
}
