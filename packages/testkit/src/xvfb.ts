// A virtual X display for tests of a windowed (headless: false) browser: Debian's Xvfb, started on
// a free display number it picks itself (-displayfd), no TCP listener, stopped by close(). Tests
// that need it skip when Xvfb is not installed; `npm test` installs it (scripts/setup.mjs --tests).

import { type ChildProcess, spawn, spawnSync } from "node:child_process";

export interface VirtualDisplay {
  /** For the DISPLAY environment variable, e.g. ":1". */
  display: string;
  close(): Promise<void>;
}

/** Whether Xvfb can be started here. */
export function xvfbAvailable(): boolean {
  return spawnSync("sh", ["-c", "command -v Xvfb"], { stdio: "ignore" }).status === 0;
}

export async function startXvfb(options: { width?: number; height?: number } = {}): Promise<VirtualDisplay> {
  const screen = `${options.width ?? 1280}x${options.height ?? 800}x24`;
  // fd 3 is where Xvfb writes the display number it took, once it accepts connections.
  const child: ChildProcess = spawn("Xvfb", ["-displayfd", "3", "-screen", "0", screen, "-nolisten", "tcp"], {
    stdio: ["ignore", "ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const display = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`Xvfb did not start within 10 s: ${stderr}`)), 10_000);
    (child.stdio[3] as NodeJS.ReadableStream).on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^(\d+)\n/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(`:${match[1]}`);
      }
    });
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`Xvfb exited (${code}) before it was ready: ${stderr}`));
    });
  }).catch(async (error: unknown) => {
    child.kill("SIGKILL");
    await exited;
    throw error;
  });
  return {
    display,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const forced = setTimeout(() => child.kill("SIGKILL"), 3000);
        await exited;
        clearTimeout(forced);
      }
    },
  };
}
