/**
 * The local stand-in for Lambda's DynamoDB stream trigger: reads the table's stream through the DynamoDB
 * Streams API (DynamoDB Local serves it on its own endpoint), hands each batch of records to a callback,
 * and checkpoints per shard only after the callback succeeded. At-least-once, like the trigger: a crash
 * before the checkpoint is saved re-delivers the batch on the next run; nothing written is skipped.
 */
import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DescribeTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type Shard,
  type _Record,
} from "@aws-sdk/client-dynamodb-streams";
import type { EventBus } from "../../lib/alerts/bus.js";
import { type OutboxPublishResult, publishOutbox } from "../../lib/alerts/outbox.js";
import type { PublishOptions } from "../../lib/alerts/publish.js";
import type { QuarantinePort } from "../../lib/model/quarantine.js";

export const CHECKPOINT_FILE = "stream-checkpoint.json";

export interface ShardCheckpoint {
  /** The last sequence number whose batch the callback handled successfully. */
  sequenceNumber?: string;
  /** The shard is closed and was read to its end: it is never read again. */
  finished?: boolean;
}

export interface StreamCheckpoint {
  /** A checkpoint belongs to one stream: a re-created table starts over. */
  streamArn: string;
  shards: Record<string, ShardCheckpoint>;
}

export type RecordsHandler = (records: _Record[], shardId: string) => Promise<void>;

export interface OutboxStreamReaderOptions {
  dynamodb: DynamoDBClient;
  streams: DynamoDBStreamsClient;
  tableName: string;
  dataDir: string;
  onRecords: RecordsHandler;
  /** GetRecords limit: the most records handed to the callback at once. Default 100. */
  batchSize?: number;
  /** Errors of the continuous loop (start); the loop carries on at the next interval. */
  onError?: (err: unknown) => void;
}

export async function loadCheckpoint(file: string): Promise<StreamCheckpoint | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const cp = JSON.parse(text) as StreamCheckpoint;
  if (typeof cp?.streamArn !== "string" || typeof cp.shards !== "object" || !cp.shards) {
    throw new Error(`${file} is not a stream checkpoint (delete it to read the stream from its start)`);
  }
  return cp;
}

/** Temp file + rename: a crash mid-write leaves the old checkpoint, never half a file. */
export async function saveCheckpoint(file: string, cp: StreamCheckpoint): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
  await writeFile(tmp, `${JSON.stringify(cp, null, 2)}\n`, "utf8");
  await rename(tmp, file);
}

/** Parents before children: a child shard holds the writes that came after its parent's. */
export function shardsInOrder(shards: Shard[]): Shard[] {
  const ids = new Set(shards.map((s) => s.ShardId));
  const out: Shard[] = [];
  const placed = new Set<string | undefined>();
  const bySeq = [...shards].sort((a, b) => compareSeq(a.SequenceNumberRange?.StartingSequenceNumber, b.SequenceNumberRange?.StartingSequenceNumber));
  while (out.length < bySeq.length) {
    const before = out.length;
    for (const s of bySeq) {
      if (placed.has(s.ShardId)) continue;
      // A parent that is no longer listed was trimmed: its child can be read.
      if (s.ParentShardId && ids.has(s.ParentShardId) && !placed.has(s.ParentShardId)) continue;
      out.push(s);
      placed.add(s.ShardId);
    }
    if (out.length === before) {
      // A lineage cycle cannot happen; if a service ever reports one, read the rest rather than hang.
      out.push(...bySeq.filter((s) => !placed.has(s.ShardId)));
      break;
    }
  }
  return out;
}

/** Sequence numbers are decimal strings of up to 40 digits: compare them as numbers. */
export function compareSeq(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return -1;
  if (b === undefined) return 1;
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : 1;
}

export class OutboxStreamReader {
  readonly checkpointFile: string;
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(private readonly opts: OutboxStreamReaderOptions) {
    this.checkpointFile = join(opts.dataDir, CHECKPOINT_FILE);
  }

  /**
   * Reads everything the stream holds now, batch by batch, and returns how many records were handed to
   * the callback. If the callback throws, drain stops and rejects; that batch's checkpoint is not saved.
   * Calls never overlap: a drain asked for during another runs after it.
   */
  drain(): Promise<number> {
    const run = this.chain.then(() => this.drainOnce());
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Drains now and then every `intervalMs` after the previous drain ended. */
  start(intervalMs = 1_000): void {
    if (this.running) return;
    this.running = true;
    const tick = async () => {
      try {
        await this.drain();
      } catch (err) {
        (this.opts.onError ?? ((e) => console.error("outbox stream:", e)))(err);
      }
      if (this.running) this.timer = setTimeout(tick, intervalMs);
    };
    this.timer = setTimeout(tick, 0);
  }

  /** Stops the loop and waits for a drain in progress to end. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.chain;
  }

  private async drainOnce(): Promise<number> {
    const streamArn = await this.latestStreamArn();
    await mkdir(this.opts.dataDir, { recursive: true });
    const saved = await loadCheckpoint(this.checkpointFile);
    const cp: StreamCheckpoint = saved?.streamArn === streamArn ? saved : { streamArn, shards: {} };

    const shards = await this.listShards(streamArn);
    // Forget shards the stream no longer lists (trimmed after 24 hours), so the file stays small.
    const listed = new Set(shards.map((s) => s.ShardId!));
    for (const id of Object.keys(cp.shards)) if (!listed.has(id)) delete cp.shards[id];

    let handled = 0;
    for (const shard of shardsInOrder(shards)) {
      const id = shard.ShardId!;
      const state = (cp.shards[id] ??= {});
      if (state.finished) continue;
      const parent = shard.ParentShardId ? cp.shards[shard.ParentShardId] : undefined;
      // Keep order: a child waits until its parent is read to its end (a parent still open means this
      // drain caught up with it; its child is read next time).
      if (parent && !parent.finished) continue;
      handled += await this.readShard(streamArn, shard, cp, state);
    }
    return handled;
  }

  private async readShard(streamArn: string, shard: Shard, cp: StreamCheckpoint, state: ShardCheckpoint): Promise<number> {
    const shardId = shard.ShardId!;
    const closed = !!shard.SequenceNumberRange?.EndingSequenceNumber;
    let iterator = await this.shardIterator(streamArn, shardId, state.sequenceNumber);
    let handled = 0;
    while (iterator) {
      const res = await this.opts.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: this.opts.batchSize ?? 100 }));
      const records = res.Records ?? [];
      if (records.length) {
        await this.opts.onRecords(records, shardId);
        // Only now: a batch the callback did not finish is read again by the next drain (or the next run).
        state.sequenceNumber = records[records.length - 1]!.dynamodb?.SequenceNumber ?? state.sequenceNumber;
        handled += records.length;
      }
      if (!res.NextShardIterator) {
        state.finished = true; // a closed shard read to its end
      }
      if (records.length || state.finished) await saveCheckpoint(this.checkpointFile, cp);
      // An open shard that returns nothing is caught up; a closed one is read until its iterator ends.
      if (!res.NextShardIterator || (!records.length && !closed)) break;
      iterator = res.NextShardIterator;
    }
    return handled;
  }

  private async shardIterator(streamArn: string, shardId: string, after: string | undefined): Promise<string | undefined> {
    if (after) {
      try {
        const res = await this.opts.streams.send(
          new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: "AFTER_SEQUENCE_NUMBER", SequenceNumber: after }),
        );
        return res.ShardIterator;
      } catch (err) {
        // The checkpoint is older than the stream's 24-hour retention: read what is left.
        if ((err as Error).name !== "TrimmedDataAccessException") throw err;
      }
    }
    const res = await this.opts.streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: "TRIM_HORIZON" }));
    return res.ShardIterator;
  }

  private async latestStreamArn(): Promise<string> {
    const { Table } = await this.opts.dynamodb.send(new DescribeTableCommand({ TableName: this.opts.tableName }));
    if (!Table?.LatestStreamArn) throw new Error(`table ${this.opts.tableName} has no stream (the outbox needs StreamSpecification)`);
    return Table.LatestStreamArn;
  }

  private async listShards(streamArn: string): Promise<Shard[]> {
    const shards: Shard[] = [];
    let start: string | undefined;
    do {
      const res = await this.opts.streams.send(new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }));
      shards.push(...(res.StreamDescription?.Shards ?? []));
      start = res.StreamDescription?.LastEvaluatedShardId;
    } while (start);
    return shards;
  }
}

/**
 * The callback the local runner gives the reader: publish the batch's pending alerts; if any was not
 * published for a passing reason, throw, so the batch is not checkpointed and is read again (its
 * published alerts too: at-least-once, as with the Lambda trigger's retry from the failed record). With
 * a quarantine port, an alert no retry can publish is quarantined and the batch moves on.
 */
export function outboxPublisher(
  bus: EventBus,
  opts: PublishOptions,
  onResult?: (r: OutboxPublishResult) => void,
  quarantine?: QuarantinePort,
): RecordsHandler {
  return async (records) => {
    const result = await publishOutbox(records, bus, opts, quarantine);
    onResult?.(result);
    const retry = result.failed.filter((f) => !result.quarantined.includes(f));
    if (retry.length) {
      const f = retry[0]!;
      throw new Error(`${retry.length} alert(s) not published, first ${f.id}: ${f.errorCode} ${f.errorMessage}`);
    }
  };
}
