// The reason the fixture server has three hosts: under --site-per-process, frames from
// 127.0.0.2 and 127.0.0.3 must be separate DevTools targets (out-of-process iframes).
import { afterAll, beforeAll, expect, it } from "vitest";
import WebSocket from "ws";
import { type FixtureServer, startFixtureServer, waitForNoChrome } from "../src/index.ts";
import { launchTestChrome, type TestChrome } from "./support/chrome.ts";

interface TargetInfo {
  targetId: string;
  type: string;
  url: string;
}

let server: FixtureServer;
let chrome: TestChrome | undefined;

beforeAll(async () => {
  server = await startFixtureServer();
});

afterAll(async () => {
  await chrome?.kill();
  await server?.close();
});

/** Target.getTargets over the browser's WebSocket: one request, one answer. */
async function getTargets(wsEndpoint: string): Promise<TargetInfo[]> {
  const socket = new WebSocket(wsEndpoint);
  try {
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    return await new Promise<TargetInfo[]>((resolve, reject) => {
      socket.on("message", (data) => {
        const message = JSON.parse(String(data)) as { id?: number; result?: { targetInfos: TargetInfo[] } };
        if (message.id === 1 && message.result) resolve(message.result.targetInfos);
      });
      socket.once("error", reject);
      socket.send(JSON.stringify({ id: 1, method: "Target.getTargets" }));
    });
  } finally {
    socket.close();
  }
}

it("puts the frames of the second and third site in their own iframe targets", async () => {
  const pageUrl = server.url("frames/nested-cross.html");
  const middleUrl = server.crossUrl("frames/cross-middle.html");
  const childUrl = server.thirdUrl("frames/child.html");
  chrome = await launchTestChrome(pageUrl, ["--site-per-process"]);

  let targets: TargetInfo[] = [];
  // Ends as soon as both frames are there; only a stall reaches the minute.
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    targets = await getTargets(chrome.wsEndpoint);
    if (targets.filter((t) => t.type === "iframe").length >= 2) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(targets.filter((t) => t.type === "page").map((t) => t.url)).toContain(pageUrl);
  const frames = targets.filter((t) => t.type === "iframe").map((t) => t.url);
  expect(frames.sort()).toEqual([middleUrl, childUrl].sort());

  // The HTTP listing agrees.
  const listed = (await (await fetch(`${chrome.httpEndpoint}/json/list`)).json()) as {
    type: string;
    url: string;
  }[];
  expect(listed.filter((t) => t.type === "iframe").map((t) => t.url)).toEqual(expect.arrayContaining(frames));

  const dir = chrome.userDataDir;
  await chrome.kill();
  chrome = undefined;
  expect(await waitForNoChrome(dir)).toEqual([]);
});
