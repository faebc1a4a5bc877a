// Debian's Chromium, headless, for the tests that run the package in a browser (never a
// downloaded browser). tests/www/browser.mjs does the same for the playground's own npm folder.
export async function launchChromium() {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}
