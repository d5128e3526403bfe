// A local webhook receiver for the tests: records every request (id, timestamp, signature,
// body) and answers with the status its rule gives; `verify` checks a request as a receiver
// would, with the `standardwebhooks` package (never with Mimo's own signing code).
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import type { WebhookPayload } from "../../protocol/ts/protocol.ts";
import { sleep } from "./clients.ts";

export type Received = { id: string; timestamp: string; signature: string; body: string; status: number; payload: WebhookPayload };

/** A local receiver: records every request and answers with what `answer` says for it. */
export class Receiver {
  readonly requests: Received[] = [];
  private server!: Server;
  url = "";
  private readonly answer: (n: number, r: Received) => number;
  constructor(answer: (n: number, r: Received) => number = () => 204) {
    this.answer = answer;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        const h = req.headers as IncomingHttpHeaders;
        const r: Received = {
          id: String(h["webhook-id"]),
          timestamp: String(h["webhook-timestamp"]),
          signature: String(h["webhook-signature"]),
          body,
          status: 0,
          payload: JSON.parse(body) as WebhookPayload,
        };
        r.status = this.answer(this.requests.length, r);
        this.requests.push(r);
        res.writeHead(r.status).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Requests answered 2xx, first per webhook-id. */
  delivered(): Received[] {
    return this.requests.filter((r) => r.status < 300);
  }

  async waitFor(what: string, done: () => boolean, timeoutMs = 15_000): Promise<void> {
    for (const deadline = Date.now() + timeoutMs; !done(); ) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.requests.map((r) => [r.id, r.payload.type, r.status]))}`);
      await sleep(25);
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Whether `secret` verifies the request as a receiver would (throws otherwise). */
export function verify(secret: string, r: Received): unknown {
  return new Webhook(secret).verify(r.body, { "webhook-id": r.id, "webhook-timestamp": r.timestamp, "webhook-signature": r.signature });
}

