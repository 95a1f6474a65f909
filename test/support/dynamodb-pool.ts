/**
 * Databases of their own on the run's one DynamoDB Local. DynamoDB Local slows as tables with stream
 * records pile up in one database, deleted ones too (a write cost ten times as much after twenty such
 * tables): late in a run, every file paid for the files before it. Started without -sharedDb, it keeps
 * a database per access key and region; each lease here is an endpoint of its own, a port of this
 * process that passes requests on with the lease's access key in their signature (DynamoDB Local reads
 * the key and checks no signature). Whatever talks to a lease's endpoint — the test, Lookout in the
 * test's process or in a child — lands in the lease's database; nothing else does.
 *
 * Runs in vitest's main process (test/support/dynamodb-global-setup.ts, the integration project's); a file leases with a POST to `url`
 * (test/support/dynamodb.ts).
 */
import { createServer, request, Agent, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { LOCAL_REGION } from "../../local/runtime/dynamodb-local.js";

export interface DynamoDbPool {
  /** POST here: `{ "endpoint": "http://127.0.0.1:<port>" }`, a database nobody else uses. */
  url: string;
  close(): Promise<void>;
}

/** SigV4's credential scope: access key, date, region (`Credential=KEY/20261127/us-east-1/dynamodb/aws4_request`). */
const SCOPE = /Credential=[^/,\s]+\/(\d{8})\/[^/,\s]+\//;

export const withAccessKey = (authorization: string, key: string): string => authorization.replace(SCOPE, `Credential=${key}/$1/${LOCAL_REGION}/`);

const listen = (server: Server): Promise<number> =>
  new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => ok((server.address() as AddressInfo).port));
  });

export async function startDynamoDbPool(upstream: string): Promise<DynamoDbPool> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true });
  const servers: Server[] = [];

  const passOn = (key: string) => (req: IncomingMessage, res: ServerResponse) => {
    const headers = { ...req.headers, host: target.host };
    if (headers.authorization) headers.authorization = withAccessKey(headers.authorization, key);
    const out = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    // A client that gives up (its timeout) ends the request it passed on; DynamoDB Local gone is a 502.
    res.once("close", () => void (res.writableFinished || out.destroy()));
    out.once("error", (err) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`DynamoDB Local at ${upstream}: ${err.message}`);
    });
    req.pipe(out);
  };

  let leases = 0;
  const lease = async (): Promise<string> => {
    const server = createServer(passOn(`lease${++leases}`));
    servers.push(server);
    return `http://127.0.0.1:${await listen(server)}`;
  };

  const front = createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    lease().then(
      (endpoint) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ endpoint })),
      (err: Error) => res.writeHead(500).end(err.message),
    );
  });
  servers.push(front);
  const url = `http://127.0.0.1:${await listen(front)}`;

  return {
    url,
    async close() {
      await Promise.all(servers.map((s) => new Promise<void>((ok) => {
        s.closeAllConnections();
        s.close(() => ok());
      })));
      agent.destroy();
    },
  };
}
