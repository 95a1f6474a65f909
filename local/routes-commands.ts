/**
 * `lookout check-config` and `lookout routes test`: check a configuration before deploying it, and ask
 * which routes and receivers an event would reach, and why. Receivers are shown by label (the secret's
 * reference at most, never its value). Every expected failure is one line and exit 1.
 */
import { readFileSync } from "node:fs";
import { DETAIL_TYPES, type LookoutEventDetail, detailTypeOf } from "../lib/model/event.js";
import { type ConfigEnv, ConfigError, loadConfigFile } from "../lib/config/load.js";
import { watchlist } from "../lib/ingest/dispatch.js";
import { allReceivers, receiverSecretRefs, unsetEnvSecrets } from "../lib/config/routes.js";
import { coverage, coverageLine } from "../lib/routes/coverage.js";
import { type RouteOutcome, describeCheck, explainRoutes } from "../lib/routes/match.js";
import { receiverLabel } from "../lib/config/receivers.js";
import { receiversOf } from "../lib/config/route-types.js";

export interface Output {
  out(line: string): void;
  err(line: string): void;
}

export const stdio: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** A problem with the event file, said in one line. */
class EventFileError extends Error {}

/**
 * Besides the file itself: every kind of event that would reach nobody (a warning each), and every
 * receiver secret: an `env:` one that is unset here fails the check (`lookout run` would refuse to
 * start); ssm:/secretsmanager: ones are read in the cloud only, so they are listed, not checked.
 */
export async function checkConfigCommand(opts: { configFile: string; env?: ConfigEnv }, io: Output = stdio): Promise<number> {
  try {
    const env = opts.env ?? process.env;
    const config = loadConfigFile(opts.configFile, opts.env);
    const sources = watchlist(config).sources.length;
    const receivers = allReceivers(config.routes, config.notify).length;
    const refs = receiverSecretRefs(config.routes, config.notify);
    const unset = unsetEnvSecrets(refs, env);
    const setUp = `${plural(sources, "source")} watched, ${plural(config.routes.length, "route")}${config.notify.default ? " and the default route" : ""}, ${plural(receivers, "receiver")}`;
    io.out(`${unset.length ? "not ok" : "ok"}: ${setUp}`);
    for (const c of coverage(config.routes, config.notify)) {
      const line = coverageLine(c);
      if (line) io.out(`warning: ${line}`);
    }
    for (const r of refs) if (!r.ref.startsWith("env:")) io.out(`note: ${r.field}: ${r.ref} is read in the cloud; not checked here`);
    for (const r of unset) io.err(`lookout check-config: ${unsetSecretProblem(r)}`);
    return unset.length ? 1 : 0;
  } catch (err) {
    return fail("check-config", err, io);
  }
}

export async function routesTestCommand(
  opts: { configFile: string; eventFile: string; env?: ConfigEnv },
  io: Output = stdio,
): Promise<number> {
  try {
    const config = loadConfigFile(opts.configFile, opts.env);
    const { detail, notes } = readEvent(opts.eventFile);
    io.out(`event: ${describeEvent(detail)}`);
    for (const note of notes) io.out(`note: ${note}`);
    if (!config.routes.length) io.out("no routes are configured");
    const explained = explainRoutes(detail, config.routes);
    for (const o of explained.routes) for (const line of describeOutcome(o)) io.out(line);
    const reached = explained.receivers.map(receiverLabel);
    const matched = explained.routes.filter((o) => o.outcome === "matched").length;
    const fallthrough = matched ? [] : receiversOf(config.notify.default).map(receiverLabel);
    if (fallthrough.length) io.out(`reaches: ${fallthrough.join("; ")} (the default route: no route matches)`);
    else io.out(`reaches: ${reached.length ? reached.join("; ") : matched ? "nobody (the matching routes have no receivers)" : "nobody (no route matches, and there is no notify.default)"}`);
    return 0;
  } catch (err) {
    return fail("routes test", err, io);
  }
}

function fail(command: string, err: unknown, io: Output): number {
  if (err instanceof ConfigError || err instanceof EventFileError) {
    io.err(`lookout ${command}: ${err.message}`);
    return 1;
  }
  throw err;
}

/** One line about an `env:` secret that is not set. */
export const unsetSecretProblem = (r: { field: string; ref: string }): string =>
  `${r.field}: ${r.ref} is not set in this environment; export ${r.ref.slice("env:".length)} (a receiver without it cannot send)`;

/** Why `lookout run` does not start: each unset variable once, with where the file names it. */
export function unsetSecretsLine(unset: ReadonlyArray<{ field: string; ref: string }>): string {
  const byRef = new Map<string, string[]>();
  for (const u of unset) byRef.set(u.ref, [...(byRef.get(u.ref) ?? []), u.field]);
  const each = [...byRef].map(([ref, fields]) => `${ref.slice("env:".length)} is not set (${fields.join(", ")} read ${ref})`);
  return `${each.join("; ")}: export ${byRef.size === 1 ? "it" : "them"}, or \`lookout check-config\` to see every secret; a receiver without its secret cannot send`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** A detail, or a whole envelope as a target receives it. */
function readEvent(file: string): { detail: LookoutEventDetail; notes: string[] } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new EventFileError(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new EventFileError(`${file}: is not valid JSON: ${(err as Error).message.split("\n")[0]}`);
  }
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
  if (!isObject(raw)) throw new EventFileError(`${file}: must be an event detail or an envelope (a JSON object)`);
  const envelope = isObject(raw.detail) && ("detail-type" in raw || "source" in raw) ? raw : undefined;
  const detail = (envelope ? envelope.detail : raw) as Record<string, unknown>;
  if (typeof detail.kind !== "string" || typeof detail.transition !== "string") {
    throw new EventFileError(`${file}: the detail needs kind and transition (docs/events.md)`);
  }
  const notes: string[] = [];
  if (envelope) {
    if (envelope.source !== "lookout") notes.push(`source is ${JSON.stringify(envelope.source)}: the deployed rules match source "lookout" only`);
    const expected = detailTypeFor(detail as unknown as LookoutEventDetail);
    if (expected && envelope["detail-type"] !== expected) {
      notes.push(`detail-type ${JSON.stringify(envelope["detail-type"])} disagrees with the detail (${expected}); Lookout publishes ${expected}`);
    }
  }
  return { detail: detail as unknown as LookoutEventDetail, notes };
}

function detailTypeFor(d: LookoutEventDetail): string | undefined {
  try {
    return detailTypeOf(d.kind, d.transition);
  } catch {
    return undefined;
  }
}

/** `Deployment Failed (error) at acme / storefront / production / api`. */
function describeEvent(d: LookoutEventDetail): string {
  const type = detailTypeFor(d) ?? `${d.kind} ${d.transition} (no such detail-type: ${Object.values(DETAIL_TYPES).join(", ")})`;
  const where = [d.organization, d.project, d.environment, d.service ?? d.cluster ?? d.webhook]
    .filter((r): r is { id: string; name?: string } => Boolean(r))
    .map((r) => r.name ?? r.id);
  return `${type} (${d.severity ?? "no severity"})${where.length ? ` at ${where.join(" / ")}` : ""}${d.id ? ` [${d.id}]` : ""}`;
}

function describeOutcome(o: RouteOutcome): string[] {
  if (o.outcome === "not_considered") {
    return [`${o.index + 1}. ${o.route.name}: not considered (route ${o.stoppedBy} matched and has continue: false)`];
  }
  if (o.outcome === "not_matched") return [`${o.index + 1}. ${o.route.name}: not matched: ${describeCheck(o.failed)}`];
  const d = o.decision;
  const why = d.why.length ? d.why.map(describeCheck).join("; ") : "it matches every event";
  const lines = [`${d.index + 1}. ${d.route.name}: matched: ${why}`];
  lines.push(`   → ${d.receivers.length ? d.receivers.map(receiverLabel).join("; ") : "no receivers (it only stops later routes)"}`);
  if (d.stops) lines.push("   continue: false: later routes are not considered");
  return lines;
}
