/**
 * What a poll is given (the platform, the ingest store, the clock, the request budget's spare room):
 * its own module so that poll.ts and the readers it runs both import it, not each other.
 */
import type { PlatformClient } from "../platform/client.js";
import type { LookoutEventDetail } from "../model/event.js";
import type { ServiceContext } from "../model/observations.js";
import type { Suppression } from "../model/alert-item.js";
import type { IngestStore } from "../model/ingest-store.js";
import type { Log } from "../model/log.js";

/**
 * Room in the request budget for what a poll asks beyond its own reads: names (platform-names.ts) and what
 * changed (commit-range.ts). Dispatch keeps the budget and lends it (lib/dispatch/spare-requests.ts).
 */
export interface SpareRequests {
  /** Whether `requests` more may be sent now. */
  room(requests: number): Promise<boolean>;
}

export interface PollDeps {
  /** The platform's list endpoints are all a poll reads. */
  client: Pick<PlatformClient, "list">;
  store: IngestStore;
  now: () => Date;
  backfillWindowMs: number;
  /** Names from configuration, by application id; the change feed's directory fills the rest. */
  configured?: Map<string, ServiceContext>;
  clusterNames?: Map<string, string>;
  /** Organization names from configuration (`watch[].name`), by organization id. */
  organizationNames?: Map<string, string>;
  /** A cluster's incident closes after this long without an error entry (`incidents.cluster_quiet_period`, default 30 minutes). */
  clusterQuietMs?: number;
  log: Log;
  /**
   * The request budget's room for requests beyond the poll's reads (names, what changed): without it,
   * none are sent, and names come from the cache alone.
   */
  spare?: SpareRequests;
  /**
   * A list poll's chunk of records and its time to start chunks (default CHUNK_RECORDS, POLL_WORK_MS in
   * readers/list.ts), and the answer a poll of a batch reads without the large-answer lease (default
   * SMALL_ANSWER_BYTES, lib/platform/answer-memory.ts): tests shrink them.
   */
  bounds?: { chunkRecords?: number; pollWorkMs?: number; smallAnswerBytes?: number };
  /** Told of each alert raised (pending or suppressed), for live views and tests. */
  onAlert?: (detail: LookoutEventDetail, suppression?: Suppression) => void;
}
