/**
 * Fuzzing (issue 7): random and mutated platform payloads through the list parsing of the platform
 * client (`PlatformClient.list`, per-item schemas) and the normalizers, and the redaction.
 *
 * Valid payloads come from the simulator (real responses), then are mutated: fields deleted, types
 * changed, unknown enum strings injected, huge strings, deep nesting. Properties:
 *  - `list` never throws for a well-formed envelope, and every item that is valid on its own is kept
 *    (a bad neighbour never costs a good item); the normalizers never throw on what `list` accepts.
 *  - `redact`: no secret placed under a secret-like key at any depth, nor in a URL's userinfo or
 *    secret query parameter, survives in `JSON.stringify(redact(x))`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { createPlatformClient } from "../../../lib/platform/client.js";
import { ClusterLogEntry, DeploymentHistoryItem, WebhookEvent } from "../../../lib/platform/schemas.js";
import { normalizeClusterLog, normalizeDeployment, normalizeWebhookDelivery } from "../../../lib/poll/normalize.js";
import type { SourceRef } from "../../../lib/model/source.js";
import { redact } from "../../../lib/platform/redact.js";
import { SECRET_KINDS, SecretScanner, plantSecret, textWith } from "../../support/secret-scan.js";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
let sim: Simulator;
const samples: Record<"webhook" | "cluster" | "deployment", Json[]> = { webhook: [], cluster: [], deployment: [] };
const src = (kind: SourceRef["kind"]): SourceRef => ({ kind, organizationId: sim.ids.organizationId, id: "00000000-0000-4000-8000-000000000001" });

beforeAll(async () => {
  sim = await startSimulator({ seed: 5, size: { applications: 2, clusters: 1, webhooks: 1 } });
  const [app] = sim.ids.applicationIds;
  sim.scenario.setWebhookTarget(sim.ids.webhookIds[0]!, { status: 500, body: "boom" });
  sim.scenario.deploy(app!, { outcome: "DEPLOYMENT_ERROR", commit: { git_commit_id: "abcdef123456", message: "m", author_name: "A" } });
  sim.scenario.deploy(sim.ids.applicationIds[1]!, { outcome: "DEPLOYED" });
  sim.scenario.clusterRun(sim.ids.clusterIds[0]!, { entries: 8, errors: 3 });
  sim.clock.advance(10 * 60_000);
  const get = async (path: string) => {
    const res = await fetch(sim.url + path, { headers: { authorization: `Token ${sim.apiToken}` } });
    return ((await res.json()) as { results: Json[] }).results;
  };
  const org = sim.ids.organizationId;
  samples.webhook = await get(`/organization/${org}/webhook/${sim.ids.webhookIds[0]}/event`);
  samples.cluster = await get(`/organization/${org}/cluster/${sim.ids.clusterIds[0]}/logs`);
  samples.deployment = await get(`/application/${app}/deploymentHistoryV2?pageSize=20`);
});
afterAll(() => sim.close());
afterEach(() => sim.faults.clear());

it("has real samples of every list to mutate", () => {
  expect(samples.webhook.length).toBeGreaterThan(0);
  expect(samples.cluster.length).toBeGreaterThan(0);
  expect(samples.deployment.length).toBeGreaterThan(0);
});

// ---- mutations --------------------------------------------------------------------------------

const weird: fc.Arbitrary<Json> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string(),
  fc.constantFrom("QUANTUM_ERROR", "SOMETHING_NEW", "", "2026-13-45T99:99:99Z", "not-a-uuid", "💥<script>&amp;"),
  fc.constant("x".repeat(200_000)),
  fc.constant([] as Json[]),
  fc.constant({} as Json),
  fc.integer({ min: 1, max: 200 }).map((d) => {
    let v: Json = "deep";
    for (let i = 0; i < d; i++) v = i % 2 ? { nested: v } : [v];
    return v;
  }),
);

type Mutation = { path: number[]; op: "delete" | "set" | "extra"; value: Json; key: string };
const mutation: fc.Arbitrary<Mutation> = fc.record({
  path: fc.array(fc.nat(), { maxLength: 4 }),
  op: fc.constantFrom("delete", "set", "extra"),
  value: weird,
  key: fc.constantFrom("unknown_field", "__proto__", "constructor", "x-extra", "status"),
});

/** Applies one mutation at a pseudo-random place of a deep copy (the path picks children by index). */
function mutate(item: Json, m: Mutation): Json {
  const root = structuredClone(item);
  if (root === null || typeof root !== "object") return m.value;
  let node: Json = root;
  for (const step of m.path) {
    const keys: string[] = Object.keys(node as object);
    if (!keys.length) break;
    const child: Json = (node as Record<string, Json>)[keys[step % keys.length]!]!;
    if (child === null || typeof child !== "object") break;
    node = child;
  }
  const keys = Object.keys(node as object);
  const target = keys.length ? keys[(m.path.at(-1) ?? 0) % keys.length]! : m.key;
  if (Array.isArray(node)) {
    if (m.op === "delete") node.splice(Number(target), 1);
    else node[Number(target) || 0] = m.value;
  } else if (m.op === "delete") delete (node as Record<string, Json>)[target];
  else if (m.op === "set") (node as Record<string, Json>)[target] = m.value;
  else Object.defineProperty(node, m.key, { value: m.value, enumerable: true, configurable: true, writable: true });
  return root;
}

/** Replaces one string field (picked by `path`, like `mutate`) with text holding planted secrets; ids are left alone. */
function plantInText(item: Json, path: number[], text: string): Json {
  const strings: Array<[Record<string, Json> | Json[], string | number]> = [];
  const walk = (node: Json) => {
    if (node === null || typeof node !== "object") return;
    for (const [k, v] of Object.entries(node)) {
      if (typeof v === "string" && !/(^|_)id$|^id$|_at$|timestamp/.test(k)) strings.push([node as Record<string, Json>, k]);
      else walk(v as Json);
    }
  };
  walk(item);
  if (!strings.length) return item;
  const [node, key] = strings[(path.reduce((a, b) => a + b, 0)) % strings.length]!;
  (node as Record<string, Json>)[key as string] = text;
  return item;
}

const lists = {
  webhook: { endpoint: "listWebhookEvents", schema: WebhookEvent },
  cluster: { endpoint: "listClusterLogs", schema: ClusterLogEntry },
  deployment: { endpoint: "listDeploymentHistory", schema: DeploymentHistoryItem },
} as const;

/** `PlatformClient.list` over a body we choose, served by the simulator (its raw-body fault), over HTTP. */
async function listOver(kind: keyof typeof lists, bodyText: string) {
  sim.faults.set(lists[kind].endpoint, { rawBody: bodyText, times: 1 });
  const client = createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token", sleep: async () => {}, retry: { maxAttempts: 1 } });
  const org = sim.ids.organizationId;
  switch (kind) {
    case "webhook": return client.list("listWebhookEvents", { path: { organizationId: org, webhookId: sim.ids.webhookIds[0]! } });
    case "cluster": return client.list("listClusterLogs", { path: { organizationId: org, clusterId: sim.ids.clusterIds[0]! } });
    case "deployment": return client.list("listDeploymentHistory", { path: { applicationId: sim.ids.applicationIds[0]! }, query: { pageSize: 20 } });
  }
}

function normalizeAll(kind: keyof typeof lists, items: unknown[]) {
  for (const item of items) {
    if (kind === "webhook") normalizeWebhookDelivery(item as WebhookEvent, src("webhook"));
    else if (kind === "cluster") normalizeClusterLog(item as ClusterLogEntry, src("cluster"));
    else normalizeDeployment(item as DeploymentHistoryItem, src("deployment"));
  }
}

describe.each(Object.keys(lists) as Array<keyof typeof lists>)("list parsing and normalizing: %s", (kind) => {
  it("property: mutated items never crash list() or the normalizer, and no item valid on its own is lost", async () => {
    const { schema } = lists[kind];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(), fc.option(mutation, { nil: undefined, freq: 2 })), { minLength: 1, maxLength: 8 }),
        async (spec) => {
          const results = spec.map(([i, m]) => {
            const base = samples[kind][i % samples[kind].length]!;
            return m ? mutate(base, m) : structuredClone(base);
          });
          const res = await listOver(kind, JSON.stringify({ results }));
          // Every item is accounted for, once: kept or rejected.
          expect(res.items.length + res.rejected.length).toBe(results.length);
          const validAlone = results.map((r) => schema.safeParse(JSON.parse(JSON.stringify(r))).success);
          expect(res.items.length).toBe(validAlone.filter(Boolean).length);
          expect(res.rejected.map((r) => r.index).sort((a, b) => a - b)).toEqual(validAlone.flatMap((ok, i) => (ok ? [] : [i])));
          expect(() => normalizeAll(kind, res.items)).not.toThrow();
          // The rejected are logged redacted; redacting them must not throw either.
          expect(() => JSON.stringify(redact(res.rejected.map((r) => r.raw)))).not.toThrow();
        },
      ),
      { numRuns: 60 },
    );
  });

  it("property: secrets of every kind planted in any text field of mutated items never survive what is kept", async () => {
    const planted = SECRET_KINDS.map((k) => plantSecret(k, `fuzz.${kind}`));
    const scanner = new SecretScanner(planted);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(), fc.array(fc.nat(), { maxLength: 4 }), fc.option(mutation, { nil: undefined })), { minLength: 1, maxLength: 6 }),
        async (spec) => {
          const results = spec.map(([i, path, m]) => {
            const base = samples[kind][i % samples[kind].length]!;
            return plantInText(m ? mutate(base, m) : structuredClone(base), path, textWith(planted));
          });
          const res = await listOver(kind, JSON.stringify({ results }));
          const kept = res.items.map((item) =>
            kind === "webhook" ? normalizeWebhookDelivery(item as WebhookEvent, src("webhook"))
              : kind === "cluster" ? normalizeClusterLog(item as ClusterLogEntry, src("cluster"))
              : normalizeDeployment(item as DeploymentHistoryItem, src("deployment")),
          );
          const found = scanner.scanText(`normalized ${kind}`, JSON.stringify(kept));
          expect(found).toEqual([]);
          expect(scanner.scanText(`rejected ${kind}, as logged`, JSON.stringify(redact(res.rejected.map((r) => r.raw))))).toEqual([]);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("property: random JSON values as items never crash list(); each is kept or rejected", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.jsonValue({ maxDepth: 4 }), { maxLength: 6 }), async (junk) => {
        const results = [...junk, samples[kind][0]!];
        const res = await listOver(kind, JSON.stringify({ results }));
        expect(res.items.length + res.rejected.length).toBe(results.length);
        // The valid sample at the end is never lost beside the junk.
        expect(res.rejected.some((r) => r.index === results.length - 1)).toBe(false);
        normalizeAll(kind, res.items);
      }),
      { numRuns: 60 },
    );
  });

  it("property: a broken envelope or body fails as a whole with a schema error, never anything else", async () => {
    const body = JSON.stringify({ results: samples[kind] });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.nat({ max: body.length - 1 }).map((n) => body.slice(0, n)), // truncated
          fc.jsonValue().filter((v) => !(v && typeof v === "object" && !Array.isArray(v) && Array.isArray((v as { results?: unknown }).results))).map((v) => JSON.stringify(v) ?? "null"),
          fc.constantFrom("<html>502 Bad Gateway</html>", "", "null", '{"results": {}}', '{"results": null}'),
        ),
        async (text) => {
          const err = await listOver(kind, text).then(() => undefined, (e: unknown) => e);
          expect(err).toBeDefined();
          expect((err as { kind?: string }).kind).toBe("schema_mismatch");
        },
      ),
      { numRuns: 60 },
    );
  });
});

// ---- redaction --------------------------------------------------------------------------------

const SECRET_KEYS = [
  "password", "passwd", "Authorization", "authorisation", "api_key", "apiKey", "X-Api-Key", "access_key", "secret",
  "client_secret", "X-Hub-Signature", "token", "refresh_token", "Cookie", "session_id", "private_key", "passphrase",
  "credentials", "signing_key", "bearer", "basic_auth", "key",
];
const SECRET_PARAMS = ["token", "access_token", "api_key", "apikey", "secret", "signature", "sig", "password", "key", "auth", "X-Amz-Signature"];

/** Secrets recognisable in the output: a fixed marker plus random alphanumerics. */
const secret = fc.stringMatching(/^[A-Za-z0-9]{10,24}$/).map((s) => `S3CR3T${s}`);
const harmlessKey = fc.constantFrom("name", "id", "data", "payload", "headers", "items", "body", "meta", "url", "value");

type Planted = { value: Json; secrets: string[] };

const plantedUrl: fc.Arbitrary<Planted> = fc
  .tuple(secret, secret, fc.constantFrom(...SECRET_PARAMS), fc.constantFrom("https", "http", "postgres", "redis"), fc.boolean(), fc.boolean())
  .map(([s1, s2, param, scheme, userinfo, inText]) => {
    const url = userinfo ? `${scheme}://user:${s1}@host.example.com/p?team=a&${param}=${s2}` : `${scheme}://host.example.com/p?${param}=${s2}&team=a`;
    return { value: inText ? `calling ${url} now` : url, secrets: userinfo ? [s1, s2] : [s2] };
  });

const plantedAuth: fc.Arbitrary<Planted> = fc
  .tuple(fc.constantFrom("Bearer", "Token", "Basic"), secret)
  .map(([scheme, s]) => ({ value: `header was ${scheme} ${s} end`, secrets: [s] }));

const plantedJwt: fc.Arbitrary<Planted> = fc
  .tuple(secret, secret)
  .map(([a, b]) => ({ value: `jwt eyJhbGciOiJIUzI1NiJ9.${a}.${b} end`, secrets: [a, b] }));

const plantedUnderKey: fc.Arbitrary<Planted> = fc
  .tuple(fc.constantFrom(...SECRET_KEYS), fc.oneof(secret.map((s) => ({ v: s as Json, s })), secret.map((s) => ({ v: { inner: s, n: 1 } as Json, s })), secret.map((s) => ({ v: [s] as Json, s }))))
  .map(([k, { v, s }]) => ({ value: { [k]: v }, secrets: [s] }));

/** A random tree with planted secrets at random depths. */
const tree: fc.Arbitrary<Planted> = fc.letrec<{ node: Planted }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(plantedUnderKey, plantedUrl, plantedAuth, plantedJwt, fc.jsonValue({ maxDepth: 1 }).map((v) => ({ value: v as Json, secrets: [] }))),
    fc.array(fc.tuple(harmlessKey, tie("node")), { maxLength: 4 }).map((entries) => {
      const value: Record<string, Json> = {};
      const secrets: string[] = [];
      entries.forEach(([k, child], i) => {
        value[`${k}${i}`] = child.value;
        secrets.push(...child.secrets);
      });
      return { value, secrets };
    }),
    fc.array(tie("node"), { maxLength: 3 }).map((children) => ({ value: children.map((c) => c.value), secrets: children.flatMap((c) => c.secrets) })),
  ),
})).node;

describe("redaction", () => {
  it("property: no planted secret survives, at any depth, under a key, in a URL or in free text", () => {
    fc.assert(
      fc.property(tree, ({ value, secrets }) => {
        const out = JSON.stringify(redact(value));
        for (const s of secrets) expect(out).not.toContain(s);
      }),
      { numRuns: 500 },
    );
  });

  it("property: a secret deeper than the walk's limit is refused, not leaked", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 80 }), secret, fc.constantFrom(...SECRET_KEYS, "note"), (depth, s, key) => {
        let v: Json = { [key]: key === "note" ? `Bearer ${s}` : s };
        for (let i = 0; i < depth; i++) v = i % 2 ? { child: v } : [v];
        expect(JSON.stringify(redact(v))).not.toContain(s);
      }),
      { numRuns: 200 },
    );
  });

  it("property: harmless data without secrets comes back unchanged", () => {
    const harmless = fc.jsonValue({ maxDepth: 4 }).filter((v) => !/(secret|token|pass|auth|key|cookie|session|private|signing|bearer|credential|signature|eyJ|:\/\/|Basic|Token|Bearer)/i.test(JSON.stringify(v)));
    fc.assert(fc.property(harmless, (v) => {
      expect(redact(v)).toEqual(v);
    }), { numRuns: 200 });
  });
});
