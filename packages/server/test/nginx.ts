// A real nginx (Debian's package, installed by `node scripts/setup.mjs --tests`) in front of
// several service nodes on loopback: round-robin, no affinity, with its own configuration, prefix
// and logs in a temporary directory. Its access log records, for every request, the node nginx
// reached (`x-deckhand-node`) and the session's owner (`x-deckhand-owner`) as the node answered
// them, so that a test can check that a request really landed on a node that does not own the
// session and was served there.
//
// The configuration is the one the README's "Running several nodes" shows.

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export const NGINX = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((file) => existsSync(file));

/** A TCP port free on 127.0.0.1 now (the kernel's pick), for a process that must be told its port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** One line of the access log. */
export interface NginxLogLine {
  method: string;
  uri: string;
  status: number;
  /** The node nginx sent the request to, as it said (x-deckhand-node). */
  node: string;
  /** The session's owner, as that node said (x-deckhand-owner); "-" when none. */
  owner: string;
}

export interface Nginx {
  url: string;
  log(): NginxLogLine[];
  close(): Promise<void>;
}

/** The http block's content: the configuration the README shows, with this test's upstreams. */
export function nginxHttpConfig(upstreams: string[], listen: string): string {
  return `
  map $http_upgrade $connection_upgrade {
    default upgrade;
    ''      '';
  }
  upstream deckhand {
${upstreams.map((address) => `    server ${address};`).join("\n")}
    keepalive 32;
  }
  server {
    listen ${listen};
    client_max_body_size 16m;
    location / {
      proxy_pass http://deckhand;
      proxy_http_version 1.1;
      # The nodes build sessionUrl, debugUrl and cdpUrl from the address the client used.
      proxy_set_header Host $http_host;
      # WebSockets (the CDP proxy, DevTools): the upgrade passes; other requests keep the
      # upstream connection alive.
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      # Event streams and long operations: nothing buffered, nothing cut short.
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 1h;
      proxy_send_timeout 1h;
    }
  }`;
}

export async function startNginx(upstreams: string[]): Promise<Nginx> {
  if (!NGINX) throw new Error("nginx is not installed: run `node scripts/setup.mjs --tests`.");
  const dir = mkdtempSync(path.join(tmpdir(), "deckhand-nginx-"));
  for (const sub of ["logs", "temp"]) mkdirSync(path.join(dir, sub));
  const port = await freePort();
  const accessLog = path.join(dir, "logs", "access.log");
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const config = `
${isRoot ? "user root;" : ""}
worker_processes 1;
daemon off;
master_process on;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections 512; }
http {
  log_format cluster '$request_method $uri $status $upstream_http_x_deckhand_node $upstream_http_x_deckhand_owner';
  access_log ${accessLog} cluster;
  client_body_temp_path ${dir}/temp/body;
  proxy_temp_path ${dir}/temp/proxy;
  fastcgi_temp_path ${dir}/temp/fastcgi;
  uwsgi_temp_path ${dir}/temp/uwsgi;
  scgi_temp_path ${dir}/temp/scgi;
${nginxHttpConfig(upstreams, `127.0.0.1:${port}`)}
}
`;
  const file = path.join(dir, "nginx.conf");
  writeFileSync(file, config);
  const child: ChildProcess = spawn(NGINX, ["-p", dir, "-c", file], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  // Ready when it answers (whatever a node says); an nginx that exited says why.
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    try {
      await fetch(`${url}/healthz`);
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    url,
    log: () =>
      (existsSync(accessLog) ? readFileSync(accessLog, "utf8") : "")
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [method = "", uri = "", status = "0", node = "-", owner = "-"] = line.split(" ");
          return { method, uri, status: Number(status), node, owner };
        }),
    close: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
