// Drives the origin's operator console in Debian's headless Chromium for
// tests/operator_console.rs, with the keyboard only: types the operator token and
// presses Enter, waits for the reconciliation exceptions (PENDING n, n > 0, on stdout),
// checks the approval guard's concurrency limit and refusals against GET /admin/guard
// (CONCURRENCY mode IN_FLIGHT calls on stdout), takes a screenshot, then tabs to the first item's note,
// types it, presses Enter, and waits until the count is one less (RESOLVED n-1 on stdout).
// Usage: node console.mjs CONSOLE_URL TOKEN SCREENSHOT_PATH
import { launch } from "./launch.mjs";

const [url, token, screenshot] = process.argv.slice(2);
const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const blocked = [];
  page.on("console", (message) => { if (/Content Security Policy/i.test(message.text())) blocked.push(message.text()); });
  await page.goto(url);
  await page.getByLabel("Operator token").focus();
  await page.keyboard.type(token);
  await page.keyboard.press("Enter");
  const count = page.locator("#pending-count");
  await page.locator("#items tr").first().waitFor({ timeout: 30000 });
  const before = Number(await count.textContent());
  if (!(before > 0)) throw new Error(`no pending item shown (${before})`);
  const state = await page.locator("#breaker").textContent();
  if (!["CLOSED", "OPEN", "HALF_OPEN"].includes(state)) throw new Error(`the breaker shows ${state}`);
  const event = await page.locator("#events tr").first().textContent();
  if (!/spring/.test(event)) throw new Error(`the events table shows ${event}`);
  console.log("PENDING " + before);
  // The approval guard as the console shows it, against what the route answers.
  const guard = await page.evaluate(async (token) => {
    const response = await fetch("/admin/guard", { headers: { "Authorization": "Bearer " + token } });
    return response.json();
  }, token);
  const limit = guard.concurrency;
  const shown = await page.locator("#concurrency tr").first().locator("td").allTextContents();
  const expected = [
    "Approval guard",
    limit.mode,
    limit.limit != null ? `${limit.limit} (${limit.floor}–${limit.ceiling})` : "—",
    String(guard.inFlight),
    String(limit.waiting),
    limit.limit != null ? `${limit.maxWaitMs} ms` : "—",
  ];
  if (shown.join(" | ") !== expected.join(" | ")) throw new Error(`the concurrency limit shows ${shown.join(" | ")}, not ${expected.join(" | ")}`);
  const refused = await page.locator("#refusals tr", { hasText: "CONCURRENCY_LIMITED" }).locator("td").allTextContents();
  if (refused[0] !== "CONCURRENCY_LIMITED" || refused[1] !== String(guard.refusals.CONCURRENCY_LIMITED)) {
    throw new Error(`the refusals show ${refused.join(" | ") || "no CONCURRENCY_LIMITED"}`);
  }
  console.log("CONCURRENCY " + limit.mode + " IN_FLIGHT " + shown[3]);
  await page.screenshot({ path: screenshot, fullPage: true });
  // The first item's note, reached by Tab from the breaker's Set button.
  await page.getByRole("button", { name: "Set" }).focus();
  await page.keyboard.press("Tab");
  const focused = await page.evaluate(() => document.activeElement.getAttribute("aria-label") || "");
  if (!/^Note for order /.test(focused)) throw new Error(`Tab reached ${focused || "something else"}, not a note`);
  await page.keyboard.type("settled by hand with the PG");
  await page.keyboard.press("Enter");
  await count.filter({ hasText: new RegExp(`^${before - 1}$`) }).waitFor({ timeout: 30000 });
  if (blocked.length) throw new Error(`the page's policy blocked: ${blocked.join("; ")}`);
  console.log("RESOLVED " + (before - 1));
} finally {
  await browser.close();
}
