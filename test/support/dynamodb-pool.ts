/**
 * Databases of their own on the run's one DynamoDB Local. DynamoDB Local slows as tables with stream
 * records pile up in one database, deleted ones too (a write cost ten times as much after twenty such
 * tables): late in a run, every file paid for the files before it. Started without -sharedDb, it keeps
 * a database per access key and region; each lease here is an endpoint of its own, a port of this
 * process that passes requests on with the lease's access key in their signature (DynamoDB Local reads
 * the key and checks no signature). Whatever talks to a lease's endpoint — the test, Lookout in the
 * test's process or in a child — lands in the lease's database; nothing else does.
 *
 * A lease passes bytes, not HTTP messages: each connection has one to DynamoDB Local, a request's head is
 * rewritten (its Authorization header) and its body, answers and all else pass as they came. Parsing and
 * writing each request and answer again, as an HTTP proxy, cost this process about a tenth of a
 * millisecond of CPU a request, on the hundred thousand or so of a run.
 *
 * Runs in vitest's main process (test/support/dynamodb-global-setup.ts, the integration project's); a file leases with a POST to `url`
 * (test/support/dynamodb.ts).
 */
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, type Server, type Socket, connect, createServer } from "node:net";
import { LOCAL_REGION } from "../../local/runtime/dynamodb-local.js";

export interface DynamoDbPool {
  /** POST here: `{ "endpoint": "http://127.0.0.1:<port>" }`, a database nobody else uses. */
  url: string;
  close(): Promise<void>;
}

/** SigV4's credential scope: access key, date, region (`Credential=KEY/20261127/us-east-1/dynamodb/aws4_request`). */
const SCOPE = /Credential=[^/,\s]+\/(\d{8})\/[^/,\s]+\//;

export const withAccessKey = (authorization: string, key: string): string => authorization.replace(SCOPE, `Credential=${key}/$1/${LOCAL_REGION}/`);

const HEAD_END = Buffer.from("\r\n\r\n");
/** A request head longer than this is not one the SDK sends: the connection is refused rather than buffered. */
const MAX_HEAD_BYTES = 64 * 1024;

/**
 * A client's bytes as DynamoDB Local must get them: each request's head with the lease's key in its
 * Authorization header, then its body (Content-Length bytes) as it is, request after request on one
 * connection. Returns what to send for a chunk, or a reason to refuse the connection.
 */
export function requestRewriter(key: string): (chunk: Buffer) => Buffer[] | { refuse: string } {
  let head: Buffer = Buffer.alloc(0);
  let body = 0; // bytes of the current request's body still to pass on
  return (chunk) => {
    const out: Buffer[] = [];
    let rest = chunk;
    while (rest.length) {
      if (body > 0) {
        const n = Math.min(body, rest.length);
        out.push(rest.subarray(0, n));
        body -= n;
        rest = rest.subarray(n);
        continue;
      }
      head = head.length ? Buffer.concat([head, rest]) : rest;
      rest = Buffer.alloc(0);
      const end = head.indexOf(HEAD_END);
      if (end < 0) {
        if (head.length > MAX_HEAD_BYTES) return { refuse: `a request head of over ${MAX_HEAD_BYTES} bytes` };
        break;
      }
      const text = head.subarray(0, end).toString("latin1");
      rest = head.subarray(end + HEAD_END.length);
      head = Buffer.alloc(0);
      if (/\r\ntransfer-encoding:/i.test(text)) return { refuse: "a request body sent in chunks (the AWS SDK sends its Content-Length)" };
      body = Number(/\r\ncontent-length:[ \t]*(\d+)/i.exec(text)?.[1] ?? 0);
      out.push(Buffer.from(`${text.replace(/\r\nauthorization:[^\r]*/i, (h) => withAccessKey(h, key))}\r\n\r\n`, "latin1"));
    }
    return out;
  };
}

const listen = (server: Server | ReturnType<typeof createHttpServer>): Promise<number> =>
  new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => ok((server.address() as AddressInfo).port));
  });

/** One client connection, passed on to DynamoDB Local on a connection of its own. */
function passOn(client: Socket, target: URL, key: string, upstream: string) {
  const db = connect(Number(target.port), target.hostname);
  // A request's head and body may go in two writes: with Nagle's algorithm on, the second waits for the
  // first's delayed acknowledgement (40 ms on Linux).
  db.setNoDelay(true);
  client.setNoDelay(true);
  const rewrite = requestRewriter(key);
  let answered = false;
  // DynamoDB Local gone, or a request this cannot pass on: a 502 saying so, if no answer began.
  const fail = (why: string) => {
    if (!answered && client.writable) client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(why)}\r\nconnection: close\r\n\r\n${why}`);
    else client.destroy();
    db.destroy();
  };
  client.on("data", (chunk: Buffer) => {
    const out = rewrite(chunk);
    if ("refuse" in out) return fail(`the DynamoDB Local lease cannot pass on ${out.refuse}`);
    if (out.length) db.write(out.length === 1 ? out[0]! : Buffer.concat(out));
  });
  db.on("data", (chunk: Buffer) => {
    answered = true;
    client.write(chunk);
  });
  client.on("end", () => db.end());
  db.on("end", () => client.end());
  client.on("error", () => db.destroy());
  db.on("error", (err) => fail(`DynamoDB Local at ${upstream}: ${err.message}`));
  client.on("close", () => db.destroy());
  db.on("close", () => client.destroy());
}

export async function startDynamoDbPool(upstream: string): Promise<DynamoDbPool> {
  const target = new URL(upstream);
  const servers: Server[] = [];
  const sockets = new Set<Socket>();

  let leases = 0;
  const lease = async (): Promise<string> => {
    const key = `lease${++leases}`;
    const server = createServer((client) => {
      sockets.add(client);
      client.once("close", () => sockets.delete(client));
      passOn(client, target, key, upstream);
    });
    servers.push(server);
    return `http://127.0.0.1:${await listen(server)}`;
  };

  const front = createHttpServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    lease().then(
      (endpoint) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ endpoint })),
      (err: Error) => res.writeHead(500).end(err.message),
    );
  });
  const url = `http://127.0.0.1:${await listen(front)}`;

  return {
    url,
    async close() {
      for (const s of sockets) s.destroy();
      front.closeAllConnections();
      await Promise.all([...servers, front].map((s) => new Promise<void>((ok) => s.close(() => ok()))));
    },
  };
}
