/**
 * A plain HTTP server standing in for the platform with hostile answers: whatever a test puts in a
 * list, at any size or shape the spec would not produce, plus whole answers that stall, bomb or lie.
 * Only the four endpoints Lookout polls (and the project list its start-up check reads) exist here.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { createGzip } from "node:zlib";

export type HostileAnswer =
  | { kind: "json"; body: unknown }
  /** Any text as the body, with a JSON content type. */
  | { kind: "raw"; text: string }
  /** Headers and the start of a body, then nothing more, ever. */
  | { kind: "stall" }
  /** A gzip-encoded body that inflates to `bytes` of zeros, produced as it is sent. */
  | { kind: "gzip-bomb"; bytes: number };

export interface HostilePlatform {
  url: string;
  token: string;
  /** The answer for a path such as `/application/<id>/deploymentHistoryV2`. */
  answer(path: string, a: HostileAnswer): void;
  /** Shorthand: `{ results: items }`. */
  list(path: string, items: unknown[]): void;
  /** Paths requested, in order (query strings dropped). */
  requests: string[];
  close(): Promise<void>;
}

export async function startHostilePlatform(token = "hostile-token"): Promise<HostilePlatform> {
  const answers = new Map<string, HostileAnswer>();
  const requests: string[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0]!;
    requests.push(path);
    if (req.headers.authorization !== `Token ${token}`) return send(res, 401, { status: 401, detail: "bad token" });
    const a = answers.get(path) ?? (/\/project$/.test(path) ? { kind: "json" as const, body: { results: [] } } : undefined);
    if (!a) return send(res, 404, { status: 404, detail: `nothing at ${path}` });
    switch (a.kind) {
      case "json":
        return send(res, 200, a.body);
      case "raw":
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(a.text);
      case "stall":
        open.add(res);
        res.writeHead(200, { "content-type": "application/json" });
        return res.write('{"results": [');
      case "gzip-bomb": {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
        const chunk = Buffer.alloc(1 << 20);
        let left = a.bytes;
        const zeros = new Readable({
          read() {
            if (left <= 0) return this.push(null);
            const n = Math.min(left, chunk.length);
            left -= n;
            this.push(n === chunk.length ? chunk : chunk.subarray(0, n));
          },
        });
        const gz = zeros.pipe(createGzip());
        res.on("close", () => zeros.destroy());
        gz.pipe(res);
        return;
      }
    }
  });
  server.on("connection", (s) => s.on("error", () => undefined));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    answer: (path, a) => void answers.set(path, a),
    list: (path, items) => void answers.set(path, { kind: "json", body: { results: items } }),
    requests,
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Stands for JSON nested `depth` objects deep: JSON.stringify itself would overflow the stack building it. */
export const nestedJson = (depth: number) => `__NESTED_${depth}__`;

function send(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body).replace(/"__NESTED_(\d+)__"/g, (_m, d: string) => `${'{"d":'.repeat(Number(d))}"bottom"${"}".repeat(Number(d))}`);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
