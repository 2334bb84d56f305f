// A TypeScript script of the repository in a Node process of its own (the workspace sources, no
// build), for tests of a caller that is killed: it runs until the script prints a line matching
// `ready`, and the test gets the match and the child to kill.

import { type ChildProcess, spawn } from "node:child_process";

export interface ChildScript {
  child: ChildProcess;
  /** The first match of `ready` in the script's standard output. */
  match: RegExpExecArray;
}

export function startChildScript(
  script: string,
  ready: RegExp,
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ChildScript> {
  const child = spawn(process.execPath, ["--conditions=deckhand-source", "--no-warnings", script], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...options.env },
  });
  return new Promise<ChildScript>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${script} printed nothing matching ${ready} in time: ${out}`));
    }, options.timeoutMs ?? 90_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = ready.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match });
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code ?? signal}) before it was ready: ${out}`));
    });
  });
}
