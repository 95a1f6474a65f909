/**
 * The event bus port: EventBridge's PutEvents contract, reduced to what Lookout uses. The publisher talks
 * only to this port; the cloud adapter (below), the local bus (local/runtime/local-bus.ts) and the test fake
 * (test/support/fake-eventbridge.ts) implement it, so each behaves like PutEvents does.
 */
import { EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";

/** PutEvents accepts at most 10 entries per call. */
export const MAX_ENTRIES_PER_CALL = 10;
/** PutEvents rejects an entry, and a request, whose size (computed as in `entrySize`) is above 256 KB. */
export const MAX_ENTRY_BYTES = 256 * 1024;
export const MAX_REQUEST_BYTES = 256 * 1024;

export interface BusEntry {
  Source: string;
  DetailType: string;
  /** The detail as a JSON object string. */
  Detail: string;
  EventBusName: string;
  Time?: Date;
  Resources?: string[];
}

export type PutEventsResultEntry = { EventId: string } | { ErrorCode: string; ErrorMessage: string };

export interface PutEventsResult {
  FailedEntryCount: number;
  /** One per entry sent, in the same order. */
  Entries: PutEventsResultEntry[];
}

export interface EventBus {
  /** Throws for a call that fails as a whole (validation, network); per-entry failures come back in the result. */
  putEvents(entries: BusEntry[]): Promise<PutEventsResult>;
}

export const isFailedEntry = (e: PutEventsResultEntry): e is { ErrorCode: string; ErrorMessage: string } =>
  "ErrorCode" in e;

/**
 * The size EventBridge counts against the 256 KB limit ("Calculating PutEvents event entry size"):
 * 14 bytes for a Time, plus the UTF-8 bytes of Source, DetailType, Detail and each Resource.
 */
export function entrySize(e: Pick<BusEntry, "Source" | "DetailType" | "Detail" | "Time" | "Resources">): number {
  let size = e.Time ? 14 : 0;
  size += Buffer.byteLength(e.Source, "utf8");
  size += Buffer.byteLength(e.DetailType, "utf8");
  size += Buffer.byteLength(e.Detail, "utf8");
  for (const r of e.Resources ?? []) size += Buffer.byteLength(r, "utf8");
  return size;
}

/** The adapter over the AWS SDK. It is bound to one bus: an entry naming another is a wiring mistake. */
export function eventBridgeBus(client: EventBridgeClient, busName: string): EventBus {
  return {
    async putEvents(entries) {
      const stray = entries.find((e) => e.EventBusName !== busName);
      if (stray) throw new Error(`entry for bus "${stray.EventBusName}" sent through the adapter of bus "${busName}"`);
      const out = await client.send(new PutEventsCommand({ Entries: entries }));
      // The SDK types every field optional; the port promises one result per entry, in order.
      const results: PutEventsResultEntry[] = entries.map((_, i) => {
        const r = out.Entries?.[i];
        if (r?.EventId && !r.ErrorCode) return { EventId: r.EventId };
        return {
          ErrorCode: r?.ErrorCode ?? "InternalFailure",
          ErrorMessage: r?.ErrorMessage ?? (r ? "no event id and no error code" : "no result for this entry"),
        };
      });
      return { FailedEntryCount: results.filter(isFailedEntry).length, Entries: results };
    },
  };
}
