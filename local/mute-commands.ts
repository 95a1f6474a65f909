/**
 * `lookout mute`, `lookout unmute`, `lookout mutes`: mutes scoped to an organization, project,
 * environment or service, with an end, a reason and who set it. They act on the local store
 * (`data_dir`, or DYNAMODB_ENDPOINT); in the cloud, on the deployed table (`--table`, AWS credentials).
 */
import { randomUUID } from "node:crypto";
import { userInfo } from "node:os";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { loadConfigFile } from "../lib/config/load.js";
import { DURATION_LIMITS, durationRangeProblem, parseDuration } from "../lib/config/duration.js";
import type { Mute, MuteScope } from "../lib/model/notify-store.js";
import { DynamoNotifyStore } from "../lib/store/notify-store.js";
import { describeScope, isActive } from "../lib/notify/mutes.js";
import { openLocalStore } from "./pipeline.js";
import { reportFailure } from "./commands.js";

export interface StoreTarget {
  config: string;
  /** The deployed table: talk to AWS with the environment's credentials instead of the local store. */
  table?: string;
}

export class MuteUsageError extends Error {}

async function withNotifyStore<T>(target: StoreTarget, fn: (store: DynamoNotifyStore) => Promise<T>): Promise<T> {
  if (target.table) {
    const client = new DynamoDBClient({});
    try {
      return await fn(new DynamoNotifyStore({ client, tableName: target.table, retentionMs: 400 * 86_400_000 }));
    } finally {
      client.destroy();
    }
  }
  const config = loadConfigFile(target.config);
  const local = await openLocalStore(config);
  try {
    return await fn(new DynamoNotifyStore({ client: local.dynamodb, tableName: local.tableName, retentionMs: config.retentionMs }));
  } finally {
    await local.close();
  }
}

export interface MuteArgs extends StoreTarget, MuteScope {
  for?: string;
  until?: string;
  reason?: string;
  by?: string;
}

/** Checks the arguments of `lookout mute` and builds the mute; pure but for the clock and the id. */
export function buildMute(args: MuteArgs, now: Date, id: string = randomUUID()): Mute {
  const scope: MuteScope = {};
  for (const k of ["organization", "project", "environment", "service"] as const) if (args[k]) scope[k] = args[k];
  if (!Object.keys(scope).length) throw new MuteUsageError("say what to mute: --organization, --project, --environment and/or --service");
  if (!args.reason?.trim()) throw new MuteUsageError("say why: --reason \"…\" (it is shown to whoever wonders why nobody was told)");
  let until: number;
  if (args.for && args.until) throw new MuteUsageError("give --for or --until, not both");
  if (args.for) {
    const ms = parseDuration(args.for);
    if (!ms) throw new MuteUsageError(`--for ${args.for}: not a duration like 30m, 2h or 1d`);
    const far = durationRangeProblem(ms, DURATION_LIMITS.lookback);
    if (far) throw new MuteUsageError(`--for ${args.for}: ${far}`);
    until = now.getTime() + ms;
  } else if (args.until) {
    until = Date.parse(args.until);
    if (Number.isNaN(until)) throw new MuteUsageError(`--until ${args.until}: not an ISO date-time`);
    // Date.parse accepts years up to 275760: further than the longest retention is no date to mute until.
    const far = durationRangeProblem(until - now.getTime(), DURATION_LIMITS.lookback);
    if (until > now.getTime() && far) throw new MuteUsageError(`--until ${args.until}: ${far} from now`);
    if (until <= now.getTime()) throw new MuteUsageError(`--until ${args.until}: already past`);
  } else {
    throw new MuteUsageError("say for how long: --for 2h or --until 2026-12-01T08:00:00Z");
  }
  return {
    id, scope, until: new Date(until).toISOString(), reason: args.reason.trim(),
    created_by: args.by ?? process.env.LOOKOUT_USER ?? userInfo().username, created_at: now.toISOString(),
  };
}

export function muteLine(m: Mute, now: Date): string {
  const state = m.lifted_at ? `lifted ${m.lifted_at}` : isActive(m, now) ? `until ${m.until}` : `ended ${m.until}`;
  return `${m.id}  ${describeScope(m.scope).padEnd(40)} ${state.padEnd(32)} by ${m.created_by}: ${m.reason}`;
}

type Print = (line: string) => void;

export async function muteCommand(args: MuteArgs, print: Print = (l) => console.log(l)): Promise<number> {
  try {
    const mute = buildMute(args, new Date());
    await withNotifyStore(args, (store) => store.putMute(mute));
    print(`muted ${describeScope(mute.scope)} until ${mute.until} (${mute.id}); alerts are recorded as suppressed, not sent`);
    return 0;
  } catch (err) {
    return failure("mute", err);
  }
}

export async function unmuteCommand(id: string, target: StoreTarget, print: Print = (l) => console.log(l)): Promise<number> {
  try {
    const lifted = await withNotifyStore(target, async (store) => {
      const m = await store.getMute(id);
      if (!m) return undefined;
      const next = { ...m, lifted_at: new Date().toISOString() };
      await store.putMute(next);
      return next;
    });
    if (!lifted) {
      process.stderr.write(`lookout unmute: no mute ${id} (see lookout mutes --all)\n`);
      return 1;
    }
    print(`unmuted ${describeScope(lifted.scope)} (${id})`);
    return 0;
  } catch (err) {
    return failure("unmute", err);
  }
}

export async function mutesCommand(opts: StoreTarget & { all?: boolean }, print: Print = (l) => console.log(l)): Promise<number> {
  try {
    const now = new Date();
    const mutes = await withNotifyStore(opts, (store) => store.listMutes());
    const shown = mutes.filter((m) => opts.all || isActive(m, now)).sort((a, b) => b.created_at.localeCompare(a.created_at));
    if (!shown.length) print(opts.all ? "no mutes" : "no active mutes (--all shows ended ones)");
    for (const m of shown) print(muteLine(m, now));
    return 0;
  } catch (err) {
    return failure("mutes", err);
  }
}

function failure(command: string, err: unknown): number {
  if (err instanceof MuteUsageError) {
    process.stderr.write(`lookout ${command}: ${err.message}\n`);
    return 2;
  }
  return reportFailure(command, err);
}
