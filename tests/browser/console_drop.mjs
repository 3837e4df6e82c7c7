// Drives a drop from the operator console alone, in Debian's headless Chromium, for
// tests/console_drop.rs: a bad setting refused at its field, then the drop defined with
// its opening typed in Seoul's time; people entering the prequeue (driven by the test)
// seen in the live view; the draw's seed and list; pause, a change from a stale page
// refused, resume, and close (refused until the event id is typed). After
// each step it prints what the console shows (one line, on stdout) and waits for the
// test's word on stdin, which the test sends once it has checked the room through the
// edge. Screenshots of each state at 1280 px and 768 px wide go to SCREENSHOT_DIR, and
// axe-core audits each state (and the confirm dialog) for WCAG 2 A/AA: any violation
// fails the run.
// Usage: node console_drop.mjs CONSOLE_URL TOKEN SCREENSHOT_DIR EVENT_ID
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { launch } from "./launch.mjs";

const [url, token, shots, eventId] = process.argv.slice(2);
const WAIT = { timeout: 60000 };
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
// Long enough for the test to let five people into the prequeue on a slow machine.
const OPENS_IN_MS = 20000;

// `ms` as a datetime-local input's value in Seoul, the browser's zone here.
function seoul(ms) {
  const format = new Intl.DateTimeFormat("sv-SE", {
    timeZone: "Asia/Seoul", year: "numeric", month: "2-digit", day: "2-digit",
    hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23",
  });
  return format.format(new Date(ms)).replace(" ", "T");
}
const reader = createInterface({ input: process.stdin });
const lines = reader[Symbol.asyncIterator]();

async function word(expected) {
  const { value } = await lines.next();
  if (value !== expected) throw new Error(`expected ${expected} from the test, got ${value}`);
}

const browser = await launch();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: "Asia/Seoul", locale: "en-US" });
  const page = await context.newPage();
  const blocked = [];
  const report = (text) => { blocked.push(text); console.error(`PAGE: ${text}`); };
  page.on("console", (message) => { if (/Content Security Policy|Uncaught|Error/i.test(message.text())) report(message.text()); });
  page.on("pageerror", (error) => report(String(error)));
  const card = page.locator(`article.drop[data-event="${eventId}"]`);
  const figure = (name) => card.locator(`[data-figure="${name}"]`);

  // What the card shows now, as one line: `state=… version=… waiting=… …`.
  async function shown() {
    const names = ["state", "version", "waiting", "prequeued", "passesLive", "issued", "sold", "price", "opensAt"];
    const values = await Promise.all(names.map((name) => figure(name).textContent()));
    return names.map((name, i) => `${name}=${values[i].trim()}`).join(" ");
  }

  // axe-core's WCAG 2 A and AA rules on the page as it is now (run through the
  // DevTools protocol, which the page's policy does not govern): none may fail.
  async function audit(name) {
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => {
      const result = await window.axe.run(document, { runOnly: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] });
      return result.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
    });
    if (violations.length) throw new Error(`accessibility, ${name}: ${violations.join(" / ")}`);
  }

  // Both widths, full page: the state named `name`, audited at each.
  async function screenshots(name) {
    for (const width of [1280, 768]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: `${shots}/${name}-${width}.png`, fullPage: true });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      if (overflow > 0) throw new Error(`${name} at ${width} px scrolls sideways by ${overflow} px`);
      await audit(`${name} at ${width} px`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  }

  // Opens the card's control `action`, checks its dialog says what it does, and confirms.
  async function control(action, typed) {
    await card.locator(`button[data-action="${action}"]`).focus();
    await page.keyboard.press("Enter");
    const dialog = page.locator("dialog#confirm");
    await dialog.waitFor({ state: "visible", ...WAIT });
    const text = `${await page.locator("#confirm-title").textContent()} | ${await page.locator("#confirm-text").textContent()}`;
    await audit(`the ${action} dialog`);
    if (typed) {
      await page.keyboard.type(typed.slice(0, -1));
      await page.keyboard.press("Enter");
      const error = await page.locator("#confirm-error").textContent();
      if (!(await dialog.isVisible()) || !error.includes(typed)) throw new Error(`a wrong id was not refused: ${error}`);
      console.log(`CLOSE-REFUSED ${error}`);
      await page.locator("#confirm-input").fill(typed);
      await page.locator("#confirm-input").focus();
    } else {
      await page.locator("#confirm-go").focus();
    }
    await page.keyboard.press("Enter");
    await dialog.waitFor({ state: "hidden", ...WAIT });
    return text;
  }

  await page.goto(url);
  await page.getByLabel("Operator token").focus();
  await page.keyboard.type(token);
  await page.keyboard.press("Enter");
  await page.locator("#no-drops").waitFor({ state: "visible", ...WAIT });

  // A bad setting: refused at its field, named as the route names it.
  const form = page.locator("#drop-form");
  await page.getByLabel("Event id").fill(eventId);
  await page.getByLabel("Name shown to buyers").fill("Spring drop");
  await page.getByLabel("Stock (units)").fill("100");
  await page.getByLabel("Price, in the currency's smallest unit").fill("5000");
  const priceShown = await page.locator("#drop-amount-shown").textContent();
  await page.getByLabel("Passes live at once").fill("0");
  await page.getByLabel("A pass lives (seconds)").fill("600");
  const opensAt = Math.ceil((Date.now() + OPENS_IN_MS) / 1000) * 1000;
  await page.locator("#drop-opensAt").fill(seoul(opensAt));
  await page.locator("#drop-prequeueFrom").fill(seoul(Date.now() - 60000));
  await form.locator("#drop-submit").focus();
  await page.keyboard.press("Enter");
  await page.locator("#drop-admitLimit-error").filter({ hasText: "admitLimit" }).waitFor(WAIT);
  const focused = await page.evaluate(() => document.activeElement.id);
  const invalid = await page.locator("#drop-admitLimit").getAttribute("aria-invalid");
  console.log(`INVALID focus=${focused} invalid=${invalid} ${await page.locator("#drop-admitLimit-error").textContent()}`);
  await page.keyboard.press("Control+A");
  await page.keyboard.type("2");
  await form.locator("#drop-submit").focus();
  await page.keyboard.press("Enter");
  await card.waitFor(WAIT);
  console.log(`DEFINED typedOpensAt=${opensAt} ${await shown()} priceShown=${priceShown}`);
  await screenshots("defined");
  await word("ENTERED");

  await figure("prequeued").filter({ hasText: /^5$/ }).waitFor(WAIT);
  console.log(`PREQUEUED ${await shown()}`);
  await screenshots("prequeued");

  // The opening: the draw's seed, and its list in drawn order.
  await card.locator(".draw-summary").waitFor({ timeout: OPENS_IN_MS + 60000 });
  await card.getByRole("button", { name: "Show the drawn list" }).click();
  const rows = card.locator(".drawn tbody tr");
  await rows.nth(4).waitFor(WAIT);
  const drawn = await rows.evaluateAll((trs) => trs.map((tr) => tr.lastElementChild.textContent));
  const summary = await card.locator(".draw-summary").textContent();
  console.log(`DRAWN users=${drawn.join(",")} summary=${summary}`);
  await screenshots("drawn");

  // The live view follows the line once drawn: two passes, three waiting.
  await figure("waiting").filter({ hasText: /^3$/ }).waitFor(WAIT);
  console.log(`LIVE ${await shown()}`);
  await screenshots("live");
  await word("PAUSE");

  console.log(`CONFIRM ${await control("pause")}`);
  await figure("state").filter({ hasText: "Paused" }).waitFor(WAIT);
  console.log(`PAUSED ${await shown()}`);
  await screenshots("paused");
  await word("CHANGE");

  // A change begun on this page, made stale by another operator meanwhile.
  await card.locator('button[data-action="change"]').click();
  const version = await form.getAttribute("data-version");
  console.log(`EDITING version=${version}`);
  await word("CHANGED");
  await page.getByLabel("Name shown to buyers").fill("Stale name");
  await form.locator("#drop-submit").focus();
  await page.keyboard.press("Enter");
  await page.locator("#drop-form-error").filter({ hasText: "another operator" }).waitFor(WAIT);
  console.log(`STALE ${await page.locator("#drop-form-error").textContent()}`);
  await figure("version").filter({ hasText: new RegExp(`^${Number(version) + 1}$`) }).waitFor(WAIT);
  await screenshots("stale");
  await page.locator("#drop-reset").click();
  await word("RESUME");

  console.log(`CONFIRM ${await control("resume")}`);
  await figure("state").filter({ hasText: "Open" }).waitFor(WAIT);
  console.log(`RESUMED ${await shown()}`);
  await screenshots("resumed");
  await word("CLOSE");

  console.log(`CONFIRM ${await control("close", eventId)}`);
  await figure("state").filter({ hasText: "Closed" }).waitFor(WAIT);
  const disabled = await card.locator("button[data-action]:disabled").count();
  console.log(`CLOSED ${await shown()} disabledControls=${disabled}`);
  await screenshots("closed");
  await word("DONE");
  if (blocked.length) throw new Error(`the page reported: ${blocked.join(" / ")}`);
  console.log("END");
} finally {
  reader.close();
  await browser.close();
}
