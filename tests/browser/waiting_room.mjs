// Drives the waiting-room page in Debian's headless Chromium for tests/waiting_room_page.rs:
// signs in through the page's form, waits until the page shows position 2 and says
// WAITING on stdout, then waits for the page's last state, which the test brings about:
// - `admitted` (the default; the user ahead leaves): the admitted state, with a
//   screenshot, and ADMITTED with the pass's expiry on stdout;
// - `sold-out` (the event sells out): the sold-out state, then no request to the queue
//   for longer than the page's poll interval, and SOLD_OUT on stdout;
// - `paused` (the origin's breaker is open): the paused notice with its expected end, the
//   position still shown, a screenshot, and PAUSED on stdout.
// - `prequeue` (a drop before its opening, held by its operator): the prequeue notice
//   with the draw's time (PREQUEUED), then after the draw the position with the progress
//   bar and the held notice (POSITION n), then once resumed the admitted state
//   (ADMITTED): a screenshot of each, named SCREENSHOT_PATH with -prequeue, -position,
//   -admitted before its extension.
// VIEWPORT is `desktop` (1280×800, the default) or `phone` (375×740).
// Usage: node waiting_room.mjs PAGE_URL USERNAME PASSWORD SCREENSHOT_PATH [admitted|sold-out|paused|prequeue] [VIEWPORT]
import { launch } from "./launch.mjs";

const [url, username, password, screenshot, ending = "admitted", viewport = "desktop"] = process.argv.slice(2);
const sizes = { desktop: { width: 1280, height: 800 }, phone: { width: 375, height: 740 } };
const shot = (step) => screenshot.replace(/(\.png)$/, `-${step}$1`);
/** A drop's prequeue, its draw, the position while it is held, and the admitted state. */
async function prequeueToAdmitted(page, blocked) {
  await page.getByRole("heading", { name: "You're in the prequeue" }).waitFor({ timeout: 30000 });
  const at = await page.locator("#drawn-at").textContent();
  if (!at) throw new Error("the prequeue notice shows no time of the draw");
  await page.screenshot({ path: shot("prequeue"), fullPage: true });
  console.log("PREQUEUED " + at);
  await page.locator("#position").filter({ hasText: /^\d+$/ }).waitFor({ timeout: 60000 });
  await page.getByRole("heading", { name: "The drop is paused" }).waitFor({ timeout: 10000 });
  await page.getByRole("progressbar", { name: "Progress toward your turn" }).waitFor({ timeout: 10000 });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  if (wide > sizes[viewport].width) throw new Error(`the page is ${wide}px wide on a ${sizes[viewport].width}px screen`);
  await page.screenshot({ path: shot("position"), fullPage: true });
  console.log("POSITION " + (await page.locator("#position").textContent()));
  await page.getByRole("heading", { name: "It is your turn" }).waitFor({ timeout: 60000 });
  await page.screenshot({ path: shot("admitted"), fullPage: true });
  if (blocked.length) throw new Error(`the page's policy blocked: ${blocked.join("; ")}`);
  console.log("ADMITTED " + (await page.locator("#until").textContent()));
}

const browser = await launch();
try {
  const page = await browser.newPage({ viewport: sizes[viewport] });
  // The page runs under a strict Content-Security-Policy: anything it blocks is a failure.
  const blocked = [];
  page.on("console", (message) => { if (/Content Security Policy/i.test(message.text())) blocked.push(message.text()); });
  let queueCalls = 0;
  page.on("request", (request) => { if (new URL(request.url()).pathname.startsWith("/queue/") && request.resourceType() === "fetch") queueCalls += 1; });
  await page.goto(url);
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: /sign in/i }).click();
  if (ending === "prequeue") {
    await prequeueToAdmitted(page, blocked);
  } else {
    await page.locator("#position").filter({ hasText: /^2$/ }).waitFor({ timeout: 30000 });
    console.log("WAITING");
  }
  if (ending === "sold-out") {
    await page.getByRole("heading", { name: "Sold out" }).waitFor({ timeout: 60000 });
    await page.screenshot({ path: screenshot, fullPage: true });
    // At position 2 the page polled every 2 s; it must not ask again.
    const seen = queueCalls;
    await page.waitForTimeout(3000);
    if (queueCalls !== seen) throw new Error(`the page kept polling after sold out (${queueCalls - seen} more calls)`);
    if (blocked.length) throw new Error(`the page's policy blocked: ${blocked.join("; ")}`);
    console.log("SOLD_OUT");
  } else if (ending === "paused") {
    await page.getByRole("heading", { name: "Payments are paused" }).waitFor({ timeout: 60000 });
    const until = await page.locator("#paused-until").textContent();
    if (!until) throw new Error("the paused notice shows no expected end");
    const position = await page.locator("#position").textContent();
    if (position !== "2") throw new Error(`the place was not kept: position ${position}`);
    await page.screenshot({ path: screenshot, fullPage: true });
    if (blocked.length) throw new Error(`the page's policy blocked: ${blocked.join("; ")}`);
    console.log("PAUSED " + until);
  } else if (ending === "admitted") {
    await page.getByRole("heading", { name: "It is your turn" }).waitFor({ timeout: 60000 });
    const until = await page.locator("#until").textContent();
    if (!until || until === "soon") throw new Error("the admitted state shows no pass expiry");
    await page.screenshot({ path: screenshot, fullPage: true });
    if (blocked.length) throw new Error(`the page's policy blocked: ${blocked.join("; ")}`);
    console.log("ADMITTED " + until);
  }
} finally {
  await browser.close();
}
