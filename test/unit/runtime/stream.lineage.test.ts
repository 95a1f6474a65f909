/**
 * The stream reader's shard handling, against a scripted Streams API: DynamoDB Local rarely rolls a
 * shard during a test, and never trims one, so lineage and retention are checked here.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
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
import { OutboxStreamReader, compareSeq, loadCheckpoint, saveCheckpoint, shardsInOrder } from "../../../local/runtime/stream.js";

interface ScriptedShard {
  id: string;
  parent?: string;
  closed: boolean;
  seqs: number[];
  /** Records below this sequence number were trimmed. */
  trimmedBelow?: number;
}

const seqStr = (n: number) => String(n).padStart(21, "0");

class ScriptedStreams {
  streamArn = "arn:aws:dynamodb:local:000000000000:table/t/stream/1";
  shards: ScriptedShard[] = [];
  calls: string[] = [];

  readonly dynamodb = {
    send: async (cmd: unknown) => {
      if (cmd instanceof DescribeTableCommand) return { Table: { LatestStreamArn: this.streamArn } };
      throw new Error("unexpected command");
    },
  } as unknown as DynamoDBClient;

  readonly streams = {
    send: async (cmd: unknown) => {
      if (cmd instanceof DescribeStreamCommand) {
        // One shard per page: the reader must follow LastEvaluatedShardId.
        const i = cmd.input.ExclusiveStartShardId ? this.shards.findIndex((s) => s.id === cmd.input.ExclusiveStartShardId) + 1 : 0;
        const s = this.shards[i];
        const shards: Shard[] = s
          ? [{ ShardId: s.id, ParentShardId: s.parent, SequenceNumberRange: { StartingSequenceNumber: seqStr(s.seqs[0] ?? 0), ...(s.closed ? { EndingSequenceNumber: seqStr(s.seqs.at(-1) ?? 0) } : {}) } }]
          : [];
        return { StreamDescription: { Shards: shards, LastEvaluatedShardId: i + 1 < this.shards.length ? s?.id : undefined } };
      }
      if (cmd instanceof GetShardIteratorCommand) {
        const { ShardId, ShardIteratorType, SequenceNumber } = cmd.input;
        this.calls.push(`iterator ${ShardId} ${ShardIteratorType}`);
        const shard = this.shards.find((s) => s.id === ShardId)!;
        let pos = 0;
        if (ShardIteratorType === "AFTER_SEQUENCE_NUMBER") {
          const n = Number(SequenceNumber);
          if (shard.trimmedBelow !== undefined && n < shard.trimmedBelow) {
            throw Object.assign(new Error("trimmed"), { name: "TrimmedDataAccessException" });
          }
          pos = shard.seqs.filter((s) => s <= n).length;
        } else {
          pos = shard.seqs.filter((s) => s < (shard.trimmedBelow ?? 0)).length;
        }
        return { ShardIterator: `${ShardId}|${pos}` };
      }
      if (cmd instanceof GetRecordsCommand) {
        const [id, p] = cmd.input.ShardIterator!.split("|");
        const shard = this.shards.find((s) => s.id === id)!;
        const pos = Number(p);
        const end = Math.min(shard.seqs.length, pos + (cmd.input.Limit ?? 1000));
        const Records: _Record[] = shard.seqs.slice(pos, end).map((n) => ({ eventName: "INSERT", dynamodb: { SequenceNumber: seqStr(n) } }));
        const atEnd = end >= shard.seqs.length;
        return { Records, NextShardIterator: shard.closed && atEnd ? undefined : `${id}|${end}` };
      }
      throw new Error("unexpected command");
    },
  } as unknown as DynamoDBStreamsClient;
}

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "lookout-lineage-"));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

function setup(api: ScriptedStreams, batchSize = 2) {
  const seen: number[] = [];
  const reader = new OutboxStreamReader({
    dynamodb: api.dynamodb,
    streams: api.streams,
    tableName: "t",
    dataDir,
    batchSize,
    onRecords: async (records) => void seen.push(...records.map((r) => Number(r.dynamodb!.SequenceNumber))),
  });
  return { reader, seen };
}

describe("OutboxStreamReader shard lineage", () => {
  it("reads a closed parent to its end before its child, whatever order the shards are listed in", async () => {
    const api = new ScriptedStreams();
    api.shards = [
      { id: "child", parent: "parent", closed: false, seqs: [40, 50] },
      { id: "parent", closed: true, seqs: [10, 20, 30] },
    ];
    const { reader, seen } = setup(api);
    expect(await reader.drain()).toBe(5);
    expect(seen).toEqual([10, 20, 30, 40, 50]);
    const cp = await loadCheckpoint(reader.checkpointFile);
    expect(cp!.shards).toEqual({ parent: { sequenceNumber: seqStr(30), finished: true }, child: { sequenceNumber: seqStr(50) } });

    // A finished shard is not opened again; the open child resumes after its checkpoint.
    api.shards[0]!.seqs.push(60);
    api.calls = [];
    expect(await reader.drain()).toBe(1);
    expect(seen.at(-1)).toBe(60);
    expect(api.calls).toEqual(["iterator child AFTER_SEQUENCE_NUMBER"]);
  });

  it("follows a roll: the open shard closes and a new child takes over", async () => {
    const api = new ScriptedStreams();
    api.shards = [{ id: "s1", closed: false, seqs: [1, 2] }];
    const { reader, seen } = setup(api);
    await reader.drain();
    api.shards[0]!.seqs.push(3);
    api.shards[0]!.closed = true;
    api.shards.push({ id: "s2", parent: "s1", closed: false, seqs: [4] });
    expect(await reader.drain()).toBe(2);
    expect(seen).toEqual([1, 2, 3, 4]);
  });

  it("forgets shards the stream trimmed and reads what is left when the checkpoint is older than the stream", async () => {
    const api = new ScriptedStreams();
    api.shards = [{ id: "old", closed: true, seqs: [1] }, { id: "s", parent: "old", closed: false, seqs: [5, 6, 7, 8] }];
    const { reader, seen } = setup(api);
    await saveCheckpoint(reader.checkpointFile, { streamArn: api.streamArn, shards: { old: { sequenceNumber: seqStr(1), finished: true }, s: { sequenceNumber: seqStr(5) } } });
    api.shards = [{ id: "s", parent: "old", closed: false, seqs: [5, 6, 7, 8], trimmedBelow: 7 }];
    expect(await reader.drain()).toBe(2);
    expect(seen).toEqual([7, 8]);
    expect(Object.keys((await loadCheckpoint(reader.checkpointFile))!.shards)).toEqual(["s"]);
  });

  it("starts over when the table (and so its stream) was re-created", async () => {
    const api = new ScriptedStreams();
    api.shards = [{ id: "s", closed: false, seqs: [1, 2] }];
    const { reader, seen } = setup(api);
    await saveCheckpoint(reader.checkpointFile, { streamArn: "arn:older-stream", shards: { s: { sequenceNumber: seqStr(2) } } });
    expect(await reader.drain()).toBe(2);
    expect(seen).toEqual([1, 2]);
  });

  it("serializes overlapping drains", async () => {
    const api = new ScriptedStreams();
    api.shards = [{ id: "s", closed: false, seqs: [1, 2, 3] }];
    const { reader, seen } = setup(api, 1);
    const counts = await Promise.all([reader.drain(), reader.drain(), reader.drain()]);
    expect(counts).toEqual([3, 0, 0]);
    expect(seen).toEqual([1, 2, 3]);
  });
});

describe("shardsInOrder and compareSeq", () => {
  it("orders parents before children and by starting sequence number", () => {
    const s = (id: string, start: string, parent?: string): Shard => ({ ShardId: id, ParentShardId: parent, SequenceNumberRange: { StartingSequenceNumber: start } });
    const ordered = shardsInOrder([s("c", "5", "b"), s("b", "3", "a"), s("x", "1"), s("a", "2", "gone")]);
    expect(ordered.map((x) => x.ShardId)).toEqual(["x", "a", "b", "c"]);
  });

  it("compares sequence numbers as numbers", () => {
    expect(compareSeq("9", "10")).toBeLessThan(0);
    expect(compareSeq("000000000000000000011", "000000000000000000002")).toBeGreaterThan(0);
    expect(compareSeq("5", "5")).toBe(0);
  });
});
