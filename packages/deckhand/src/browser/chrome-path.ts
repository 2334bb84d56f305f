// Where Chrome lives. Order: the `executablePath` option, CHROME_PATH, then the usual install
// locations of Chrome and Chromium on Linux, macOS and Windows. On Debian the real binary
// (/usr/lib/chromium/chromium) comes before the /usr/bin/chromium shell wrapper, which would
// source /etc/chromium.d on every start and add tens of milliseconds to launch.

import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";

function candidates(): string[] {
  switch (process.platform) {
    case "darwin":
      return [
        "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
        "/Applications/Chromium.app/Contents/MacOS/Chromium",
        "/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary",
      ];
    case "win32": {
      const roots = [process.env.PROGRAMFILES, process.env["PROGRAMFILES(X86)"], process.env.LOCALAPPDATA];
      return roots
        .filter((r): r is string => Boolean(r))
        .flatMap((r) => [
          join(r, "Google/Chrome/Application/chrome.exe"),
          join(r, "Chromium/Application/chrome.exe"),
        ]);
    }
    default:
      return [
        "/usr/lib/chromium/chromium",
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome-stable",
        "/usr/bin/google-chrome",
        "/opt/google/chrome/chrome",
        "/snap/bin/chromium",
      ];
  }
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Every place that was looked at, in order, for error messages. */
export function chromeSearchPaths(): string[] {
  return [...(process.env.CHROME_PATH ? [process.env.CHROME_PATH] : []), ...candidates()];
}

/** The first Chrome or Chromium executable found, or undefined. */
export function findChrome(): string | undefined {
  return chromeSearchPaths().find(isExecutableFile);
}
