import type { LaunchOptions } from "playwright-core";

/**
 * How the lab drives a browser, in the browser tests and in the scale benchmark alike: Debian's
 * chromium, headless, with nothing that reaches the network on its own.
 */
export const CHROMIUM_PATH = "/usr/bin/chromium";

export const HEADLESS_CHROMIUM: LaunchOptions = {
  executablePath: CHROMIUM_PATH,
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
};
