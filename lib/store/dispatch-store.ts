/**
 * Dispatch's state in DynamoDB: one item `DISPATCH#<name>` holding the request budget and every watched
 * source's polling state, so that a tick reads and writes once. Optimistic locking (a version attribute
 * and conditional puts) lets dispatch and the pollers update it concurrently without losing a change.
 *
 * The item is written once per tick and, by pollers, only when a poll learned something; every write is
 * billed by the item's size, so sources are stored compactly: grouped by organization, each as a list
 * of numbers in `FIELDS` order: 65 to 80 bytes a source, so 570 sources take 38 to 46 KB of the 400 KB
 * limit (plain JSON would take 96 to 121 KB).
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { keys, TTL_ATTRIBUTE } from "../model/items.js";
import { type DispatchState, type SourceState, type Watchlist, applyPollResult, initialState } from "../ingest/dispatch.js";
import type { BudgetState } from "../ingest/budget.js";
import type { PollResult } from "../ingest/poll.js";
import { type SourceKind, parseSourceKey } from "../model/source.js";

export interface DispatchStore {
  get(name: string): Promise<DispatchState | undefined>;
  /**
   * Reads the state, applies `fn` and writes the result unless `fn` returns undefined (nothing to
   * write). When someone else wrote in between, reads again and applies `fn` again.
   */
  update(name: string, fn: (current: DispatchState | undefined) => DispatchState | undefined): Promise<Updated>;
  /** Folds a poll's result into the state; writes only when it changed something worth storing. */
  recordPollResult(name: string, result: PollResult, now: number, watch: Watchlist): Promise<boolean>;
  /** Writes attempted, for benchmarks and the steady-state test. */
  readonly writes: { count: number };
}

export interface Updated {
  state: DispatchState | undefined;
  written: boolean;
}

export interface DynamoDispatchStoreOptions {
  client: DynamoDBClient;
  tableName: string;
  /** Attempts of an update under contention before giving up. */
  maxAttempts?: number;
  /** The configured retention: the item expires this long after its last write (default 400 days). */
  retentionMs?: number;
}

const DEFAULT_RETENTION_MS = 400 * 86_400_000;

export class DynamoDispatchStore implements DispatchStore {
  private readonly doc: DynamoDBDocumentClient;
  private readonly table: string;
  readonly writes = { count: 0 };

  constructor(private readonly opts: DynamoDispatchStoreOptions) {
    this.doc = DynamoDBDocumentClient.from(opts.client, { marshallOptions: { removeUndefinedValues: true } });
    this.table = opts.tableName;
  }

  async get(name: string): Promise<DispatchState | undefined> {
    return (await this.read(name))?.state;
  }

  async update(name: string, fn: (current: DispatchState | undefined) => DispatchState | undefined): Promise<Updated> {
    const attempts = this.opts.maxAttempts ?? 20;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const current = await this.read(name);
      const next = fn(current?.state);
      if (!next) return { state: current?.state, written: false };
      try {
        this.writes.count++;
        await this.doc.send(
          new PutCommand({
            TableName: this.table,
            Item: {
              ...keys.dispatch(name), item_type: "dispatch", version: (current?.version ?? 0) + 1, ...encodeDispatchState(next),
              // Live state, rewritten every tick: the TTL only removes it once Lookout is gone for a retention.
              [TTL_ATTRIBUTE]: Math.floor((Date.now() + (this.opts.retentionMs ?? DEFAULT_RETENTION_MS)) / 1000),
            },
            ConditionExpression: current ? "version = :v" : "attribute_not_exists(pk)",
            ExpressionAttributeValues: current ? { ":v": current.version } : undefined,
          }),
        );
        return { state: next, written: true };
      } catch (err) {
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
        // Lost a race: the winner's change is re-read and ours applied on top. A little jitter keeps a
        // batch of pollers finishing together from colliding in lockstep.
        await new Promise((r) => setTimeout(r, Math.random() * 10 * (attempt + 1)));
      }
    }
    throw new Error(`dispatch state ${name}: too much contention, gave up after ${attempts} attempts`);
  }

  async recordPollResult(name: string, result: PollResult, now: number, watch: Watchlist): Promise<boolean> {
    const { written } = await this.update(name, (current) => {
      // No state yet (`run --once` plans nothing; a first poll before dispatch wrote): start one, so a
      // failure is counted whichever way Lookout runs (README, "Lookout's health").
      const applied = applyPollResult(current ?? initialState(watch, now), result, now, watch);
      return applied.changed ? applied.state : undefined;
    });
    return written;
  }

  private async read(name: string): Promise<{ state: DispatchState; version: number } | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.dispatch(name), ConsistentRead: true }));
    return Item ? { state: decodeDispatchState(Item as StoredDispatch), version: Item.version as number } : undefined;
  }
}

/** A source's fields in stored order; absent fields are stored as 0 and trailing ones left out. */
const FIELDS = [
  "last_polled_at",
  "last_ok_at",
  "last_activity_at",
  "in_progress",
  "hot_until",
  "consecutive_failures",
  "next_allowed_at",
  "last_error",
] as const satisfies ReadonlyArray<keyof SourceState>;

const KIND_CODE: Record<SourceKind, string> = { webhook: "w", deployment: "d", cluster: "c" };
const KIND_OF = Object.fromEntries(Object.entries(KIND_CODE).map(([kind, code]) => [code, kind as SourceKind]));

type StoredSource = Array<number | string>;

export interface StoredDispatch {
  budget: BudgetState;
  last_tick_at?: number;
  outage?: { from: number; to: number };
  /** Organization id → `<kind code>:<source id>` → fields in `FIELDS` order. */
  sources: Record<string, Record<string, StoredSource>>;
}

export function encodeDispatchState(state: DispatchState): StoredDispatch {
  const sources: StoredDispatch["sources"] = {};
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
    sources,
  };
}

export function decodeDispatchState(stored: StoredDispatch): DispatchState {
  const sources: DispatchState["sources"] = {};
  for (const [org, bySource] of Object.entries(stored.sources ?? {})) {
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
    sources,
  };
}

/**
 * An item's size as DynamoDB bills and limits it: attribute names plus values (strings in UTF-8 bytes,
 * numbers about one byte per two significant digits plus one, 3 bytes and 1 per element for maps and lists).
 */
export function itemSizeBytes(value: unknown): number {
  const bytes = (s: string) => Buffer.byteLength(s, "utf8");
  if (typeof value === "string") return bytes(value);
  if (typeof value === "number") return Math.ceil(value.toString().replace(/^-|\.|e.*$/g, "").replace(/^0+|0+$/g, "").length / 2) + 1;
  if (typeof value === "boolean" || value === null) return 1;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + itemSizeBytes(v), 0);
  if (typeof value === "object") {
    return 3 + Object.entries(value as object).reduce((sum, [k, v]) => (v === undefined ? sum : sum + bytes(k) + 1 + itemSizeBytes(v)), 0);
  }
  return 0;
}
