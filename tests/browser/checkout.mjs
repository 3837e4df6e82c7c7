// Drives a purchase in Debian's headless Chromium for tests/checkout_page.rs: signs in on
// the waiting-room page, waits for the admitted state, follows "Go to checkout", checks the
// order (name and amount), presses Pay, checks the simulator's window (name, amount), and
// then, by ENDING:
// - `receipt`: Pay in the window, the receipt (order, ₩5,000, time) — RECEIPT orderId on
//   stdout — then the same success address reloaded shows the same receipt (RELOADED);
// - `cancel`: Cancel in the window, the page says why and offers to try again while the
//   pass lives (CANCELLED with the pass's expiry), and Try again opens the window anew
//   for another order (RETRIED);
// - `declined`: Pay in the window with a card the PG declines: the page says the card was
//   declined, nothing charged, and offers to try again (DECLINED orderId);
// - `unknown`: Pay in the window while the PG holds its answer: "we are confirming"
//   (CONFIRMING orderId), then the receipt once the test settles the payment (RECEIPT).
// - `unconfigured`: PAGE_URL is a checkout page, which says checkout is not configured
//   (UNCONFIGURED).
// Screenshots at every step: SCREENSHOT_PREFIX-step.png (-failed.png when one fails). No page may be wider than the
// screen, and nothing may be blocked by a page's Content-Security-Policy.
// VIEWPORT is `desktop` (1280×800, the default) or `phone` (375×740).
// Usage: node checkout.mjs PAGE_URL USERNAME PASSWORD SCREENSHOT_PREFIX ENDING [VIEWPORT]
import { launch } from "./launch.mjs";

const [url, username, password, prefix, ending, viewport = "desktop"] = process.argv.slice(2);
const sizes = { desktop: { width: 1280, height: 800 }, phone: { width: 375, height: 740 } };
const long = { timeout: 60000 };

function expect(what, seen, wanted) {
  if (!(wanted instanceof RegExp ? wanted.test(seen || "") : seen === wanted)) {
    throw new Error(`${what}: ${JSON.stringify(seen)}, not ${wanted}`);
  }
}

async function step(page, name, blocked) {
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  if (wide > sizes[viewport].width) throw new Error(`${name}: ${wide}px wide on a ${sizes[viewport].width}px screen`);
  if (blocked.length) throw new Error(`${name}: the page's policy blocked: ${blocked.join("; ")}`);
  await page.screenshot({ path: `${prefix}-${name}.png`, fullPage: true });
}

/** From the waiting room to the simulator's window; the order id the window shows. */
async function toWindow(page, blocked) {
  await page.goto(url);
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: /sign in/i }).click();
  await page.getByRole("heading", { name: "It is your turn" }).waitFor(long);
  await step(page, "admitted", blocked);
  await page.getByRole("link", { name: "Go to checkout" }).click();
  await page.getByRole("heading", { name: "Your order" }).waitFor(long);
  expect("the order's event", await page.locator("#order-name").textContent(), "Spring drop");
  expect("the order's amount", await page.locator("#order-amount").textContent(), "₩5,000");
  expect("the pass's expiry", await page.locator("#order-until").textContent(), /\d/);
  await step(page, "order", blocked);
  return openWindow(page, blocked, "Pay ₩5,000");
}

async function openWindow(page, blocked, button) {
  await page.getByRole("button", { name: button }).click();
  await page.getByRole("heading", { name: "Card payment" }).waitFor(long);
  expect("the window's order", await page.locator("#order-name").textContent(), "Spring drop");
  expect("the window's amount", await page.locator("#amount").textContent(), "₩5,000");
  await step(page, "window", blocked);
  return new URL(page.url()).searchParams.get("orderId");
}

async function receipt(page, orderId) {
  await page.getByRole("heading", { name: "Payment complete" }).waitFor({ timeout: 90000 });
  expect("the receipt's order", await page.locator("#receipt-order").textContent(), orderId);
  expect("the receipt's amount", await page.locator("#receipt-amount").textContent(), "₩5,000");
  expect("the receipt's event", await page.locator("#receipt-name").textContent(), "Spring drop");
  expect("the receipt's time", await page.locator("#receipt-time").textContent(), /\d/);
}

const browser = await launch();
const page = await browser.newPage({ viewport: sizes[viewport] });
try {
  const blocked = [];
  page.on("console", (message) => { if (/Content Security Policy/i.test(message.text())) blocked.push(message.text()); });
  if (ending === "unconfigured") {
    await page.goto(url);
    await page.getByRole("heading", { name: "Checkout is not configured" }).waitFor(long);
    await step(page, "unconfigured", blocked);
    console.log("UNCONFIGURED");
  } else if (ending === "receipt") {
    const orderId = await toWindow(page, blocked);
    await page.getByRole("button", { name: "Pay", exact: true }).click();
    await receipt(page, orderId);
    await step(page, "receipt", blocked);
    console.log("RECEIPT " + orderId);
    await page.reload();
    await receipt(page, orderId);
    console.log("RELOADED");
  } else if (ending === "cancel") {
    const first = await toWindow(page, blocked);
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("heading", { name: "Payment not completed" }).waitFor(long);
    expect("the reason", await page.locator("#failure-reason").textContent(), /You cancelled the payment in the payment window/);
    await page.getByRole("button", { name: "Try again" }).waitFor(long);
    const until = await page.locator("#again-until").textContent();
    expect("the pass's expiry", until, /\d/);
    await step(page, "cancelled", blocked);
    console.log("CANCELLED " + until);
    const second = await openWindow(page, blocked, "Try again");
    if (!second || second === first) throw new Error(`the retry's order is ${second}, the first was ${first}`);
    console.log("RETRIED");
  } else if (ending === "declined") {
    const orderId = await toWindow(page, blocked);
    await page.getByRole("button", { name: "Pay", exact: true }).click();
    await page.getByRole("heading", { name: "Payment not completed" }).waitFor(long);
    expect("the reason", await page.locator("#failure-reason").textContent(), /card was declined.*Nothing was charged/);
    await page.getByRole("button", { name: "Try again" }).waitFor(long);
    await step(page, "declined", blocked);
    console.log("DECLINED " + orderId);
  } else if (ending === "unknown") {
    const orderId = await toWindow(page, blocked);
    await page.getByRole("button", { name: "Pay", exact: true }).click();
    await page.getByRole("heading", { name: "We are confirming your payment" }).waitFor(long);
    expect("the check's time", await page.locator("#unknown-checked").textContent(), /^Last checked at /);
    await step(page, "confirming", blocked);
    console.log("CONFIRMING " + orderId);
    await receipt(page, orderId);
    await step(page, "receipt", blocked);
    console.log("RECEIPT " + orderId);
  } else {
    throw new Error(`no ending ${ending}`);
  }
} catch (err) {
  // What the page showed instead, for the test's report.
  await page.screenshot({ path: `${prefix}-failed.png`, fullPage: true }).catch(() => {});
  const shown = await page.locator("body").innerText().catch(() => "(no page)");
  throw new Error(`${err.message}\n${page.url()} shows:\n${shown}`);
} finally {
  await browser.close();
}
