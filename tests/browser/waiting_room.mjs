// Drives the waiting-room page in Debian's headless Chromium for tests/waiting_room_page.rs:
// signs in through the page's form, waits until the page shows position 2 and says
// WAITING on stdout, then waits until the page shows the admitted state (the test makes
// the user ahead leave) and saves a screenshot.
// Usage: node waiting_room.mjs PAGE_URL USERNAME PASSWORD SCREENSHOT_PATH
import { chromium } from "playwright-core";

const [url, username, password, screenshot] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
try {
  const page = await browser.newPage();
  await page.goto(url);
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: /sign in/i }).click();
  await page.locator("#position").filter({ hasText: /^2$/ }).waitFor({ timeout: 30000 });
  console.log("WAITING");
  await page.getByRole("heading", { name: "It is your turn" }).waitFor({ timeout: 60000 });
  const until = await page.locator("#until").textContent();
  if (!until || until === "soon") throw new Error("the admitted state shows no pass expiry");
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log("ADMITTED " + until);
} finally {
  await browser.close();
}
