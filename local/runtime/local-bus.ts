/**
 * The local bus: an EventBus that keeps every event it accepts as the envelope EventBridge would hand to
 * a target, one JSON object per line in `<dataDir>/events.ndjson` (the local archive), and passes it to
 * subscribers (the local router). It validates like PutEvents so that what works here works in the cloud.
 *
 * Unlike EventBridge's archive, the file holds each alert once: the outbox is read at least once, and a
 * crash between a put and the stream checkpoint puts the same alert again on the next run. The bus
 * remembers the detail ids the file holds (read once, at the first put) and does not write a line for
 * one again; subscribers are still told, since the crash may have come before they finished.
 */
import { createReadStream } from "node:fs";
import { appendFile, mkdir } from "node:fs/promises";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import {
  type BusEntry,
  type EventBus,
  MAX_ENTRIES_PER_CALL,
  MAX_ENTRY_BYTES,
  type PutEventsResult,
  type PutEventsResultEntry,
  entrySize,
} from "../../lib/alerts/bus.js";
import type { LookoutEventDetail, LookoutEventEnvelope } from "../../lib/model/event.js";
import { toEnvelope } from "../../lib/alerts/publish.js";

export const LOCAL_ACCOUNT = "000000000000";
export const LOCAL_BUS_REGION = "us-east-1";
export const EVENTS_FILE = "events.ndjson";

export type EventSubscriber = (envelope: LookoutEventEnvelope) => void | Promise<void>;

export class BusValidationError extends Error {
  override name = "ValidationException";
}

export interface LocalBusOptions {
  dataDir: string;
  account?: string;
  region?: string;
  now?: () => Date;
  newId?: () => string;
  /** A subscriber that throws does not fail the put (EventBridge delivers to targets on its own); told here. */
  onSubscriberError?: (err: unknown, envelope: LookoutEventEnvelope) => void;
}

export class LocalBus implements EventBus {
  readonly file: string;
  private readonly subscribers = new Set<EventSubscriber>();
  /** Appends one put after another, so that lines of concurrent puts never interleave. */
  private writes: Promise<unknown> = Promise.resolve();
  /** Detail ids in the file: loaded at the first put, then kept up to date. */
  private written: Promise<BusFileState> | undefined;

  constructor(private readonly opts: LocalBusOptions) {
    this.file = join(opts.dataDir, EVENTS_FILE);
  }

  /** Returns the function that unsubscribes. */
  subscribe(onEvent: EventSubscriber): () => void {
    this.subscribers.add(onEvent);
    return () => this.subscribers.delete(onEvent);
  }

  async putEvents(entries: BusEntry[]): Promise<PutEventsResult> {
    if (entries.length < 1 || entries.length > MAX_ENTRIES_PER_CALL) {
      throw new BusValidationError(
        `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length less than or equal to ${MAX_ENTRIES_PER_CALL}`,
      );
    }
    const total = entries.reduce((n, e) => n + entrySize(e), 0);
    if (total > MAX_ENTRY_BYTES) throw new BusValidationError("Total size of the entries in the request is over the limit.");

    const results: PutEventsResultEntry[] = [];
    const accepted: LookoutEventEnvelope[] = [];
    for (const e of entries) {
      const checked = this.check(e);
      if ("ErrorCode" in checked) {
        results.push(checked);
        continue;
      }
      const eventId = this.opts.newId?.() ?? randomUUID();
      accepted.push(
        toEnvelope(checked.detail, {
          account: this.opts.account ?? LOCAL_ACCOUNT,
          region: this.opts.region ?? LOCAL_BUS_REGION,
          time: e.Time ?? this.opts.now?.() ?? new Date(),
          eventId,
        }),
      );
      results.push({ EventId: eventId });
    }

    if (accepted.length) {
      const write = this.writes.then(async () => {
        const file = await (this.written ??= readBusFile(this.file));
        const fresh = accepted.filter((env) => !file.ids.has(env.detail.id));
        if (!fresh.length) return;
        await mkdir(this.opts.dataDir, { recursive: true });
        // After a line torn by a crash, start on a line of our own.
        const lead = file.torn ? "\n" : "";
        await appendFile(this.file, lead + fresh.map((env) => `${JSON.stringify(env)}\n`).join(""), "utf8");
        file.torn = false;
        for (const env of fresh) file.ids.add(env.detail.id);
      });
      this.writes = write.catch(() => undefined);
      await write;
      // Awaited so that a `--once` run and the tests see deliveries finished when the put returns. In the
      // order things happened (the outbox stream's order is the writes', which a poll makes in parallel),
      // so that an incident's opening is told before what follows it, as people would read them.
      for (const env of [...accepted].sort(inOrderOfHappening)) {
        for (const sub of this.subscribers) {
          try {
            await sub(env);
          } catch (err) {
            (this.opts.onSubscriberError ?? defaultSubscriberError)(err, env);
          }
        }
      }
    }
    return { FailedEntryCount: results.filter((r) => "ErrorCode" in r).length, Entries: results };
  }

  /** Per-entry checks, with EventBridge's error codes. */
  private check(e: BusEntry): { detail: LookoutEventDetail } | { ErrorCode: string; ErrorMessage: string } {
    if (!e.Source) return { ErrorCode: "InvalidArgument", ErrorMessage: "Parameter Source is not valid. Reason: Source is a required argument." };
    if (!e.DetailType) return { ErrorCode: "InvalidArgument", ErrorMessage: "Parameter DetailType is not valid. Reason: DetailType is a required argument." };
    let detail: unknown;
    try {
      detail = JSON.parse(e.Detail);
    } catch {
      return { ErrorCode: "MalformedDetail", ErrorMessage: "Detail is malformed." };
    }
    if (!detail || typeof detail !== "object" || Array.isArray(detail)) return { ErrorCode: "MalformedDetail", ErrorMessage: "Detail is malformed." };
    try {
      // The envelope's detail-type is derived from the detail; an entry that disagrees is a publisher bug.
      const env = toEnvelope(detail as LookoutEventDetail, { account: "", region: "", time: new Date(0), eventId: "" });
      if (env["detail-type"] !== e.DetailType || env.source !== e.Source) {
        return { ErrorCode: "InvalidArgument", ErrorMessage: `entry says ${e.Source}/${e.DetailType}, its detail says ${env.source}/${env["detail-type"]}` };
      }
    } catch (err) {
      return { ErrorCode: "InvalidArgument", ErrorMessage: (err as Error).message };
    }
    return { detail: detail as LookoutEventDetail };
  }
}

interface BusFileState {
  ids: Set<string>;
  /** The file ends in the middle of a line (a crash during an append). */
  torn: boolean;
}

/** The detail ids of the envelopes a bus file holds; none when there is no file yet. A torn line is skipped. */
async function readBusFile(file: string): Promise<BusFileState> {
  const ids = new Set<string>();
  let last = "";
  const input = createReadStream(file, "utf8");
  input.on("data", (chunk) => (last = chunk.length ? (chunk as string) : last));
  const lines = createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (!line) continue;
      try {
        const id = (JSON.parse(line) as { detail?: { id?: unknown } }).detail?.id;
        if (typeof id === "string") ids.add(id);
      } catch {
        // a line cut short by a crash mid-append: its alert is written again whole
      }
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  return { ids, torn: last !== "" && !last.endsWith("\n") };
}

const defaultSubscriberError = (err: unknown, env: LookoutEventEnvelope) =>
  console.error(`local bus: subscriber failed for event ${env.id} (${env["detail-type"]} ${env.detail.id}):`, err);

export const localBus = (opts: LocalBusOptions) => new LocalBus(opts);

/** By when it happened, then an incident's opening before the events that follow it. */
function inOrderOfHappening(a: LookoutEventEnvelope, b: LookoutEventEnvelope): number {
  const t = (Date.parse(a.detail.occurred_at) || 0) - (Date.parse(b.detail.occurred_at) || 0);
  if (t) return t;
  const opens = (e: LookoutEventEnvelope) => (e.detail.incident_id === e.detail.id ? 0 : 1);
  return opens(a) - opens(b);
}
