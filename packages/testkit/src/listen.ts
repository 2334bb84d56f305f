// Listening on a random port and closing without waiting for idle clients. Node's server.close()
// waits for keep-alive and upgraded connections to end on their own, which would make a test's
// teardown hang on the browser's idle sockets; so every accepted socket is tracked and destroyed.
import type { Server, Socket } from "node:net";

/** Starts listening on `host` with a free port chosen by the system; resolves to that port. */
export function listenOnFreePort(server: Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(new Error(`cannot listen on ${host}: ${error.message}`));
    server.once("error", onError);
    server.listen(0, host, () => {
      server.off("error", onError);
      const address = server.address();
      if (address === null || typeof address === "string") {
        reject(new Error(`server on ${host} has no TCP address`));
        return;
      }
      resolve(address.port);
    });
  });
}

/**
 * Returns a close function for `server` that stops accepting, destroys every open socket, and
 * resolves once the server is closed. Call it before the server starts listening.
 */
export function trackConnections(server: Server): () => Promise<void> {
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= new Promise<void>((resolve) => {
      // A server that never listened reports an error here; closed is closed either way.
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
    return closing;
  };
}
