/**
 * `lookout mute`, `lookout unmute`, `lookout mutes`: mutes scoped to an organization, project,
 * environment or service, with an end, a reason and who set it. They act on the local store
 * (`data_dir`, or DYNAMODB_ENDPOINT); in the cloud, on the deployed table (`--table`, AWS credentials).
 */
import { randomUUID } from "node:crypto";
import { userInfo } from "node:os";
import { DURATION_LIMITS, durationRangeProblem, parseDuration } from "../../lib/config/duration.js";
import type { Mute, MuteScope } from "../../lib/model/notify-store.js";
import { DynamoNotifyStore } from "../../lib/store/notify-store.js";
import { AuditTrail } from "../../lib/audit/trail.js";
import { DynamoAuditItems } from "../../lib/store/audit-store.js";
import { describeScope, isActive } from "../../lib/notify/mutes.js";
import { UsageError, formatOf, jsonDocument, reportFailure } from "./shared.js";
import { type StoreTarget, type OpenedStore, withStore } from "./store-target.js";
import { NAMED_SCOPES, isUuid, matchName, namesFrom } from "./scope-names.js";

export type { StoreTarget } from "./store-target.js";

/** A mute's arguments that cannot be: said in a line, exit 2. */
export class MuteUsageError extends UsageError {}

async function withNotifyStore<T>(target: StoreTarget, fn: (store: DynamoNotifyStore, opened: OpenedStore) => Promise<T>): Promise<T> {
  return withStore(target, (opened) =>
    fn(new DynamoNotifyStore({ client: opened.client, tableName: opened.tableName, retentionMs: opened.config?.retentionMs ?? 400 * 86_400_000 }), opened),
  );
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
  // A cluster or a webhook is matched by id (lib/notify/mutes.ts): a name would silently match nothing.
  for (const k of ["cluster", "webhook"] as const) {
    const id = args[k];
    if (id === undefined) continue;
    if (!isUuid(id)) throw new MuteUsageError(`--${k} ${id}: give the ${k}'s id (a UUID); a ${k} is muted by id`);
    scope[k] = id.toLowerCase();
  }
  if (!Object.keys(scope).length) throw new MuteUsageError("say what to mute: --organization, --project, --environment, --service, --cluster and/or --webhook");
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
const stderr: Print = (l) => process.stderr.write(`${l}\n`);

/** A mute as `--format json` shows it: the stored mute and whether it silences alerts now. */
export const muteJson = (m: Mute, now: Date) => ({ ...m, active: isActive(m, now) });

/**
 * What a mute's names stand for, said on stderr: a mute matches by name, so a name that stands for
 * several things mutes them all, and one nothing bears yet mutes what first bears it.
 */
async function noteNames(scope: MuteScope, opened: OpenedStore, note: Print, now: Date): Promise<void> {
  const named = NAMED_SCOPES.filter((k): k is Exclude<typeof k, "cluster"> => k !== "cluster" && Boolean(scope[k as keyof MuteScope]) && !isUuid(scope[k as keyof MuteScope]!));
  if (!named.length) return;
  const known = await namesFrom(new AuditTrail(new DynamoAuditItems({ client: opened.client, tableName: opened.tableName })), opened.config, now);
  for (const k of named) {
    const value = scope[k]!;
    if (value.includes("*")) continue;
    const { ids, candidates } = matchName(k, value, known);
    if (!ids.length) note(`lookout mute: note: no ${k} named "${value}" is known yet; the mute matches it by name when one appears`);
    else if (ids.length > 1) note(`lookout mute: note: "${value}" names ${ids.length} ${k}s (${ids.map((id) => candidates.find((c) => c.id === id)!.name + ` ${id}`).join(", ")}); the mute covers them all`);
  }
}

export async function muteCommand(args: MuteArgs & { format?: string }, print: Print = (l) => console.log(l), note: Print = stderr): Promise<number> {
  try {
    const json = formatOf(args.format, ["text", "json"] as const) === "json";
    const now = new Date();
    const mute = buildMute(args, now);
    await withNotifyStore(args, async (store, opened) => {
      await store.putMute(mute);
      await noteNames(mute.scope, opened, note, now);
    });
    print(json ? jsonDocument(muteJson(mute, now)) : `muted ${describeScope(mute.scope)} until ${mute.until} (${mute.id}); alerts are recorded as suppressed, not sent`);
    return 0;
  } catch (err) {
    return reportFailure("mute", err);
  }
}

export async function unmuteCommand(id: string, target: StoreTarget & { format?: string }, print: Print = (l) => console.log(l)): Promise<number> {
  try {
    const json = formatOf(target.format, ["text", "json"] as const) === "json";
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
    print(json ? jsonDocument(muteJson(lifted, new Date())) : `unmuted ${describeScope(lifted.scope)} (${id})`);
    return 0;
  } catch (err) {
    return reportFailure("unmute", err);
  }
}

export async function mutesCommand(opts: StoreTarget & { all?: boolean; format?: string }, print: Print = (l) => console.log(l)): Promise<number> {
  try {
    const json = formatOf(opts.format, ["table", "json"] as const) === "json";
    const now = new Date();
    const mutes = await withNotifyStore(opts, (store) => store.listMutes());
    const shown = mutes.filter((m) => opts.all || isActive(m, now)).sort((a, b) => b.created_at.localeCompare(a.created_at));
    if (json) {
      print(jsonDocument({ mutes: shown.map((m) => muteJson(m, now)) }));
      return 0;
    }
    if (!shown.length) print(opts.all ? "no mutes" : "no active mutes (--all shows ended ones)");
    for (const m of shown) print(muteLine(m, now));
    return 0;
  } catch (err) {
    return reportFailure("mutes", err);
  }
}
