// A proxy in front of the worker that passes plain requests and, while `blockSockets` is set,
// refuses WebSocket upgrades — a locked-down network as a person behind one sees it.
import { createServer, request } from "node:http";
import type { IncomingMessage, Server } from "node:http";
import { connect } from "node:net";
import type { AddressInfo, Socket } from "node:net";

export type SocketBlockingProxy = {
  url: string;
  /** While true, every WebSocket upgrade is answered 403. */
  blockSockets: boolean;
  /** Upgrades refused, upgrades passed, and requests passed, by path. */
  refused: number;
  upgraded: number;
  requests: string[];
  close(): Promise<void>;
};

export async function startProxy(target: string): Promise<SocketBlockingProxy> {
  const to = new URL(target);
  const port = Number(to.port);
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    proxy.requests.push(`${req.method} ${(req.url ?? "").split("?")[0]}`);
    const upstream = request({ host: to.hostname, port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("upgrade", (req: IncomingMessage, client: Socket, head: Buffer) => {
    if (proxy.blockSockets) {
      proxy.refused++;
      client.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
      return;
    }
    proxy.upgraded++;
    const upstream = connect(port, to.hostname, () => {
      const headers = Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => `${k}: ${x}`) : [`${k}: ${v}`]));
      upstream.write(`${req.method} ${req.url} HTTP/1.1\r\n${headers.join("\r\n")}\r\n\r\n`);
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const proxy: SocketBlockingProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    blockSockets: true,
    refused: 0,
    upgraded: 0,
    requests: [],
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return proxy;
}
