// The operator console's charts in Debian's headless Chromium, for
// tests/console_charts.rs: in Asia/Seoul and en-US, the page's GET /admin/history,
// GET /admin/events and GET /admin/events/spring are answered with known samples
// (charts_fixture.mjs); every other operator route goes to the real origin. Signs in
// with the keyboard, then reads each chart back from its SVG alone: the axes' labels
// give the scale (a y tick's value at its y, an x tick's time at its x), and every
// sample must be drawn where its value and time put it, a null one leaving a gap.
// Prints one line a check group; exits non-zero, saying what differs, on any mismatch.
// Usage: node console_charts.mjs CONSOLE_URL TOKEN SCREENSHOT_PATH
import { launch } from "./launch.mjs";
import * as fixture from "./charts_fixture.mjs";
import { readCharts, checkLines, checkBand, checkCaption } from "./chart_reading.mjs";

const [url, token, screenshot] = process.argv.slice(2);
const served = { history: fixture.HISTORY };
const browser = await launch();
try {
  const context = await browser.newContext({
    timezoneId: "Asia/Seoul", locale: "en-US", viewport: { width: 1280, height: 900 },
  });
  const page = await context.newPage();
  const answers = {
    "/admin/history": () => served.history,
    "/admin/events": () => fixture.EVENTS,
    "/admin/events/spring": () => fixture.DROP,
  };
  await page.route((address) => address.pathname in answers, async (route) => {
    const request = route.request();
    if (request.method() !== "GET") return route.fallback();
    if (request.headers().authorization !== `Bearer ${token}`) {
      return route.fulfill({ status: 401, json: { code: "UNAUTHORIZED", message: "the fixture wants the token" } });
    }
    return route.fulfill({ json: answers[new URL(request.url()).pathname]() });
  });
  await page.goto(url);
  await page.getByLabel("Operator token").focus();
  await page.keyboard.type(token);
  await page.keyboard.press("Enter");
  await page.locator("#guard-charts figure.chart").nth(3).waitFor({ timeout: 30000 });
  await page.locator("article.drop[data-event=spring] .charts figure.chart").nth(2).waitFor({ timeout: 30000 });
  const charts = await readCharts(page);
  const guard = (title) => charts.find((c) => c.where === "guard" && c.title === title);
  const drop = (title) => charts.find((c) => c.where === "spring" && c.title === title);

  // (1, 2) Each guard chart's points and axes.
  const window = { from: fixture.FROM, to: fixture.NOW, ticks: fixture.WINDOW_TICKS };
  const names = { "PG latency": "LATENCY", "PG calls in flight": "IN_FLIGHT", "Refusals every 5 s": "REFUSALS" };
  for (const [title, series] of Object.entries(fixture.GUARD_SERIES)) {
    const { points, lines } = checkLines(guard(title), series, window);
    console.log(`${names[title]} ok ${points} points in ${lines} line${lines === 1 ? "" : "s"}`);
  }
  // (3) The breaker's band.
  const band = checkBand(guard("Breaker"), fixture.BAND, fixture.WINDOW_TICKS);
  console.log(`BAND ok ${band}`);
  // (4) The drop's charts.
  let dropPoints = 0;
  let dropLines = 0;
  for (const [title, series] of Object.entries(fixture.DROP_SERIES)) {
    const { points, lines } = checkLines(drop(title), series, window);
    dropPoints += points;
    dropLines += lines;
  }
  console.log(`DROP ok ${dropPoints} points in ${dropLines} lines`);
  // (5) The captions and labels say the latest values.
  for (const [title, summary] of Object.entries(fixture.CAPTIONS)) {
    checkCaption(guard(title) || drop(title), summary);
  }
  console.log(`CAPTIONS ok ${Object.keys(fixture.CAPTIONS).length} charts`);
  await page.screenshot({ path: screenshot, fullPage: true });

  // After a restart the band begins when the origin began keeping, in the state the
  // first change left.
  served.history = fixture.RESTARTED;
  await page.locator("#refresh").click();
  // Read in one go once drawn from the new answer (a live refresh already under way may
  // still draw the old one first).
  let restarted = null;
  for (const deadline = Date.now() + 30000; !restarted && Date.now() < deadline; await page.waitForTimeout(200)) {
    restarted = (await readCharts(page)).find((c) => c.where === "guard" && c.title === "Breaker" &&
      c.rects.length > 0 && c.rects[0].from === fixture.RESTART_BAND[0].from);
  }
  if (!restarted) throw new Error("the band was not redrawn from keptSinceMs after the restart");
  console.log(`BAND_RESTART ok ${checkBand(restarted, fixture.RESTART_BAND, fixture.RESTART_TICKS)}`);
} catch (err) {
  console.error(`console_charts: ${err.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
