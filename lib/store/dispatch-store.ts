/**
 * Dispatch's state in DynamoDB: one item `DISPATCH#<name>` holding the request budget and every watched
 * source's polling state, so that a tick reads and writes once. Optimistic locking (a version attribute
 * and conditional puts) lets dispatch and the pollers update it concurrently without losing a change.
 *
 * The item is written once per tick and, by pollers, only when a poll learned something; every write is
 * billed by the item's size (a write unit per KB), so sources are stored compactly: grouped by
 * organization, each as a list of numbers in `FIELDS` order (65 to 80 bytes a source), and that map
 * gzipped into one binary attribute: 570 sources take about 14 KB rather than 38 to 46 KB, a third of
 * the write units on every tick (BENCHMARKS.md, cost). Ids are random, so gzip cannot go much lower.
 * Items written before compression (a plain `sources` map) are still read.
 */
import { gunzipSync, gzipSync } from "node:zlib";
import { ConditionalCheckFailedException, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { type ItemType, keys, TTL_ATTRIBUTE } from "../model/items.js";
import { type Versioned, VersionedStates } from "./optimistic.js";
import type { BudgetState, DispatchState, FeedLoopState, SourceState } from "../model/dispatch.js";
import type { DispatchStore, FeedLoopStore } from "../model/dispatch-store.js";
import { type SourceKind, parseSourceKey } from "../model/source.js";

export interface DynamoDispatchStoreOptions {
  client: DynamoDBClient;
  tableName: string;
  /** Attempts of an update under contention before giving up. */
  maxAttempts?: number;
  /** The configured retention: the item expires this long after its last write (default 400 days). */
  retentionMs?: number;
}

const DEFAULT_RETENTION_MS = 400 * 86_400_000;

/**
 * Named states, one item each, written on a version attribute with a conditional put: dispatch's state
 * and the change feed loop's share it.
 */
class DynamoVersionedItems<S, Stored extends object> extends VersionedStates<S> {
  private readonly doc: DynamoDBDocumentClient;
  readonly writes = { count: 0 };

  constructor(
    what: string,
    private readonly opts: DynamoDispatchStoreOptions,
    private readonly item: { key: (name: string) => { pk: string; sk: string }; type: ItemType; encode: (s: S) => Stored; decode: (stored: Stored) => S },
  ) {
    super(what, opts.maxAttempts);
    this.doc = DynamoDBDocumentClient.from(opts.client, { marshallOptions: { removeUndefinedValues: true } });
  }

  protected async write(name: string, next: S, readVersion: number | undefined): Promise<boolean> {
    try {
      this.writes.count++;
      await this.doc.send(
        new PutCommand({
          TableName: this.opts.tableName,
          Item: {
            ...this.item.key(name), item_type: this.item.type, version: (readVersion ?? 0) + 1, ...this.item.encode(next),
            // Live state, rewritten every tick: the TTL only removes it once Lookout is gone for a retention.
            [TTL_ATTRIBUTE]: Math.floor((Date.now() + (this.opts.retentionMs ?? DEFAULT_RETENTION_MS)) / 1000),
          },
          ConditionExpression: readVersion !== undefined ? "version = :v" : "attribute_not_exists(pk)",
          ExpressionAttributeValues: readVersion !== undefined ? { ":v": readVersion } : undefined,
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  protected async read(name: string): Promise<Versioned<S> | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.opts.tableName, Key: this.item.key(name), ConsistentRead: true }));
    return Item ? { state: this.item.decode(Item as Stored), version: Item.version as number } : undefined;
  }
}

export class DynamoDispatchStore extends DynamoVersionedItems<DispatchState, StoredDispatch> implements DispatchStore {
  constructor(opts: DynamoDispatchStoreOptions) {
    super("dispatch state", opts, { key: keys.dispatch, type: "dispatch", encode: encodeDispatchState, decode: decodeDispatchState });
  }
}

/** The change feed loop's lease and reads: a small item beside dispatch's, written at each of its ticks. */
export class DynamoFeedLoopStore extends DynamoVersionedItems<FeedLoopState, FeedLoopState> implements FeedLoopStore {
  constructor(opts: DynamoDispatchStoreOptions) {
    super("change feed loop", opts, {
      key: keys.feedLoop,
      type: "feed_loop",
      encode: (s) => ({ beat_at: s.beat_at, reads: s.reads, ...(s.requests ? { requests: s.requests } : {}) }),
      decode: (stored) => ({
        beat_at: Number(stored.beat_at),
        reads: Object.fromEntries(Object.entries(stored.reads ?? {}).map(([k, at]) => [k, Number(at)])),
        ...(stored.requests ? { requests: Number(stored.requests) } : {}),
      }),
    });
  }
}

/**
 * A source's fields in stored order (a new field goes last: items already stored read as before); absent
 * fields are stored as 0 and trailing ones left out. Every field of SourceState has its place: a field
 * left out here would be dropped at every write.
 */
const FIELD_ORDER: { [K in keyof Required<SourceState>]: number } = {
  last_polled_at: 0,
  last_ok_at: 1,
  last_activity_at: 2,
  in_progress: 3,
  hot_until: 4,
  consecutive_failures: 5,
  next_allowed_at: 6,
  last_error: 7,
  backlog: 8,
  watched_since: 9,
  deferred: 10,
  hot_claimed_at: 11,
};
const FIELDS = (Object.keys(FIELD_ORDER) as Array<keyof SourceState>).sort((a, b) => FIELD_ORDER[a] - FIELD_ORDER[b]);

const KIND_CODE: Record<SourceKind, string> = { webhook: "w", deployment: "d", cluster: "c" };
const KIND_OF = Object.fromEntries(Object.entries(KIND_CODE).map(([kind, code]) => [code, kind as SourceKind]));

type StoredSource = Array<number | string>;

/** Organization id → `<kind code>:<source id>` → fields in `FIELDS` order. */
type StoredSources = Record<string, Record<string, StoredSource>>;

export interface StoredDispatch {
  budget: BudgetState;
  last_tick_at?: number;
  outage?: { from: number; to: number };
  queues?: Record<string, number>;
  loop_requests?: number;
  /** The sources' map, as gzipped JSON. */
  sources_gz?: Uint8Array;
  /** The sources' map as written before compression. */
  sources?: StoredSources;
}

export function encodeDispatchState(state: DispatchState): StoredDispatch {
  const sources: StoredSources = {};
  for (const [key, s] of Object.entries(state.sources)) {
    const ref = parseSourceKey(key);
    if (!ref) continue;
    const values: StoredSource = FIELDS.map((f) => s[f] ?? 0);
    while (values.length && !values[values.length - 1]) values.pop();
    (sources[ref.organizationId] ??= {})[`${KIND_CODE[ref.kind]}:${ref.id}`] = values;
  }
  return {
    budget: state.budget,
    ...(state.last_tick_at !== undefined ? { last_tick_at: state.last_tick_at } : {}),
    ...(state.outage ? { outage: state.outage } : {}),
    ...(state.queues && Object.keys(state.queues).length ? { queues: state.queues } : {}),
    ...(state.loop_requests ? { loop_requests: state.loop_requests } : {}),
    sources_gz: gzipSync(JSON.stringify(sources), { level: 9 }),
  };
}

export function decodeDispatchState(stored: StoredDispatch): DispatchState {
  const sources: DispatchState["sources"] = {};
  const storedSources: StoredSources = stored.sources_gz ? JSON.parse(gunzipSync(stored.sources_gz).toString("utf8")) : (stored.sources ?? {});
  for (const [org, bySource] of Object.entries(storedSources)) {
    for (const [code, values] of Object.entries(bySource)) {
      const sep = code.indexOf(":");
      const kind = KIND_OF[code.slice(0, sep)];
      if (!kind) continue;
      const s: Record<string, number | string> = {};
      FIELDS.forEach((f, i) => {
        const v = values[i];
        if (v !== undefined && v !== 0 && v !== "") s[f] = v;
      });
      sources[`${kind}:${org}/${code.slice(sep + 1)}`] = s as SourceState;
    }
  }
  return {
    budget: stored.budget,
    ...(stored.last_tick_at !== undefined ? { last_tick_at: Number(stored.last_tick_at) } : {}),
    ...(stored.outage ? { outage: { from: Number(stored.outage.from), to: Number(stored.outage.to) } } : {}),
    ...(stored.queues ? { queues: Object.fromEntries(Object.entries(stored.queues).map(([q, since]) => [q, Number(since)])) } : {}),
    ...(stored.loop_requests ? { loop_requests: Number(stored.loop_requests) } : {}),
    sources,
  };
}

/**
 * An item's size as DynamoDB bills and limits it: attribute names plus values (strings in UTF-8 bytes,
 * binaries in bytes, numbers about one byte per two significant digits plus one, 3 bytes and 1 per element for maps and lists).
 */
export function itemSizeBytes(value: unknown): number {
  const bytes = (s: string) => Buffer.byteLength(s, "utf8");
  if (typeof value === "string") return bytes(value);
  if (typeof value === "number") return Math.ceil(value.toString().replace(/^-|\.|e.*$/g, "").replace(/^0+|0+$/g, "").length / 2) + 1;
  if (typeof value === "boolean" || value === null) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + itemSizeBytes(v), 0);
  if (typeof value === "object") {
    return 3 + Object.entries(value as object).reduce((sum, [k, v]) => (v === undefined ? sum : sum + bytes(k) + 1 + itemSizeBytes(v)), 0);
  }
  return 0;
}
