/**
 * `lookout check-config` and `lookout routes test`: check a configuration before deploying it, and ask
 * which routes and receivers an event would reach, and why. Receivers are shown by label (the secret's
 * reference at most, never its value). Every expected failure is a line (a configuration's problems, one
 * a line) and exit 1. `--format json`: one JSON document on stdout; problems still go to stderr.
 */
import { readFileSync } from "node:fs";
import { DETAIL_TYPES, type LookoutEventDetail, detailTypeOf } from "../../lib/model/event.js";
import { type Config, type ConfigEnv, ConfigError, type ConfigProblem, loadConfigFile } from "../../lib/config/load.js";
import { watchlist } from "../../lib/dispatch/watchlist.js";
import { receiverSecretRefs, unsetEnvSecrets } from "../../lib/config/routes.js";
import { deployProblems, deployRefusal } from "../../lib/config/deployable.js";
import { coverage, coverageLine } from "../../lib/routes/coverage.js";
import { type RouteOutcome, describeCheck, explainRoutes } from "../../lib/routes/match.js";
import { allReceivers, receiverLabel } from "../../lib/config/receivers.js";
import { receiversOf } from "../../lib/config/route-types.js";
import { type Output, formatOf, jsonDocument, plural, reportFailureTo, shownLines, stdio } from "./shared.js";


/** A problem with the event file, said in one line. */
class EventFileError extends Error {}

/**
 * Besides the file itself: every kind of event that would reach nobody (a warning each), and every
 * receiver secret: an `env:` one that is unset here fails the check (`lookout run` would refuse to
 * start); ssm:/secretsmanager: ones are read in the cloud only, so they are listed, not checked.
 */
/** `lookout check-config --format json`. */
export interface CheckConfigJson {
  ok: boolean;
  source: string;
  sources?: number;
  routes?: number;
  default_route?: boolean;
  receivers?: number;
  warnings: string[];
  notes: string[];
  problems: Array<{ field: string; problem: string }>;
}

export async function checkConfigCommand(opts: { configFile: string; env?: ConfigEnv; format?: string; deploy?: boolean }, io: Output = stdio): Promise<number> {
  let json = false;
  try {
    json = formatOf(opts.format, ["text", "json"] as const) === "json";
    const env = opts.env ?? process.env;
    const config = loadConfigFile(opts.configFile, opts.env);
    const sources = watchlist(config).sources.length;
    const receivers = allReceivers(config.routes, config.notify).length;
    const refs = receiverSecretRefs(config.routes, config.notify);
    const unset = unsetEnvSecrets(refs, env);
    const warnings = [
      ...(sources ? [] : [NOTHING_WATCHED]),
      ...coverage(config.routes, config.notify).map(coverageLine).filter((l): l is string => Boolean(l)),
    ];
    // What deploying refuses (--deploy): a problem each, as packaging would say it.
    const refused = opts.deploy ? refusedWhenDeployed(opts.configFile) : [];
    const problems = [...refused, ...unset.map((r) => ({ field: r.field, problem: unsetSecretProblem(r).slice(r.field.length + 2) }))];
    const ok = !problems.length;
    const notes = [
      ...refs.filter((r) => !r.ref.startsWith("env:")).map((r) => `${r.field}: ${r.ref} is read in the cloud; not checked here`),
      ...(linksConfigured(config) ? [] : [NO_LINKS_NOTE]),
    ];
    if (json) {
      const doc: CheckConfigJson = {
        ok, source: opts.configFile, sources, routes: config.routes.length, default_route: Boolean(config.notify.default),
        receivers, warnings, notes, problems,
      };
      io.out(jsonDocument(doc));
    } else {
      const setUp = `${plural(sources, "source")} watched, ${plural(config.routes.length, "route")}${config.notify.default ? " and the default route" : ""}, ${plural(receivers, "receiver")}`;
      io.out(`${ok ? "ok" : "not ok"}: ${setUp}`);
      for (const line of warnings) io.out(`warning: ${line}`);
      for (const line of notes) io.out(`note: ${line}`);
    }
    // Said as every failure is (shownLines: redacted, the paths as they are).
    const refusal = deployRefusal(opts.configFile, refused);
    for (const line of refusal ? shownLines(refusal) : []) io.err(`lookout check-config: ${line}`);
    for (const r of unset) io.err(`lookout check-config: ${unsetSecretProblem(r)}`);
    return ok ? 0 : 1;
  } catch (err) {
    // A script reading the JSON learns the file's problems there too; the lines still go to stderr.
    if (json && err instanceof ConfigError) {
      const doc: CheckConfigJson = { ok: false, source: err.source, warnings: [], notes: [], problems: [...err.problems] };
      io.out(jsonDocument(doc));
    }
    return fail("check-config", err, io);
  }
}

/**
 * What deploying refuses, the file read as the deployed functions read it: without the environment's
 * PLATFORM_API_URL and PLATFORM_API_TOKEN, which fill in for `platform` here but not there.
 */
function refusedWhenDeployed(file: string): ConfigProblem[] {
  try {
    return deployProblems(loadConfigFile(file, {}));
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
}

/** A configuration that reads nothing raises nothing: said, though it loads. */
export const NOTHING_WATCHED = "nothing is watched: add webhooks, clusters or applications under watch[] (Lookout reads nothing, so it raises nothing)";

/** The platform's answers name a deployment but give no address a person can open: only the configuration's links do. */
export const NO_LINKS_NOTE =
  "no links are configured: a deployment failure's message names its execution but links to no console or logs; " +
  'add notify.links, e.g. { logs: "https://console.example.com/deployments/{execution_id}" } (README, "Link templates")';

/** Whether any event may carry a link of the configuration's: notify.links, a route's links, or a service's. */
const linksConfigured = (config: Config): boolean =>
  Boolean(config.notify.links?.length) ||
  config.routes.some((r) => r.links?.length) ||
  config.watch.some((w) => w.applications.some((a) => a.links?.length));

/** `lookout routes test --format json`. */
export interface RoutesTestJson {
  event: string;
  notes: string[];
  routes: Array<{ position: number; name: string; outcome: RouteOutcome["outcome"]; because: string[]; receivers: string[]; stops: boolean }>;
  reaches: string[];
  /** Who gets it: the matching routes, the default route (none matched), or nobody. */
  via: "routes" | "default" | "nobody";
}

export async function routesTestCommand(
  opts: { configFile: string; eventFile: string; env?: ConfigEnv; format?: string },
  io: Output = stdio,
): Promise<number> {
  try {
    const json = formatOf(opts.format, ["text", "json"] as const) === "json";
    const config = loadConfigFile(opts.configFile, opts.env);
    const { detail, notes } = readEvent(opts.eventFile);
    const explained = explainRoutes(detail, config.routes);
    const reached = explained.receivers.map(receiverLabel);
    const matched = explained.routes.filter((o) => o.outcome === "matched").length;
    const fallthrough = matched ? [] : receiversOf(config.notify.default).map(receiverLabel);
    if (json) {
      const doc: RoutesTestJson = {
        event: describeEvent(detail),
        notes,
        routes: explained.routes.map((o) => ({
          position: (o.outcome === "matched" ? o.decision.index : o.index) + 1,
          name: (o.outcome === "matched" ? o.decision.route : o.route).name, outcome: o.outcome, because: outcomeReasons(o),
          receivers: o.outcome === "matched" ? o.decision.receivers.map(receiverLabel) : [],
          stops: o.outcome === "matched" && o.decision.stops,
        })),
        reaches: fallthrough.length ? fallthrough : reached,
        via: fallthrough.length ? "default" : reached.length ? "routes" : "nobody",
      };
      io.out(jsonDocument(doc));
      return 0;
    }
    io.out(`event: ${describeEvent(detail)}`);
    for (const note of notes) io.out(`note: ${note}`);
    if (!config.routes.length) io.out("no routes are configured");
    for (const o of explained.routes) for (const line of describeOutcome(o)) io.out(line);
    if (fallthrough.length) io.out(`reaches: ${fallthrough.join("; ")} (the default route: no route matches)`);
    else io.out(`reaches: ${reached.length ? reached.join("; ") : matched ? "nobody (the matching routes have no receivers)" : "nobody (no route matches, and there is no notify.default)"}`);
    return 0;
  } catch (err) {
    return fail("routes test", err, io);
  }
}

function fail(command: string, err: unknown, io: Output): number {
  if (err instanceof EventFileError) {
    io.err(`lookout ${command}: ${err.message}`);
    return 1;
  }
  return reportFailureTo(command, err, io.err);
}

/** One line about an `env:` secret that is not set. */
export const unsetSecretProblem = (r: { field: string; ref: string }): string =>
  `${r.field}: ${r.ref} is not set in this environment; export ${r.ref.slice("env:".length)} (a receiver without it cannot send)`;

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

/** Why a route matched or not, a reason each. */
function outcomeReasons(o: RouteOutcome): string[] {
  if (o.outcome === "not_considered") return [`route ${o.stoppedBy} matched and has continue: false`];
  if (o.outcome === "not_matched") return [describeCheck(o.failed)];
  return o.decision.why.length ? o.decision.why.map(describeCheck) : ["it matches every event"];
}

function describeOutcome(o: RouteOutcome): string[] {
  if (o.outcome === "not_considered") return [`${o.index + 1}. ${o.route.name}: not considered (${outcomeReasons(o)[0]})`];
  if (o.outcome === "not_matched") return [`${o.index + 1}. ${o.route.name}: not matched: ${outcomeReasons(o)[0]}`];
  const d = o.decision;
  const lines = [`${d.index + 1}. ${d.route.name}: matched: ${outcomeReasons(o).join("; ")}`];
  lines.push(`   → ${d.receivers.length ? d.receivers.map(receiverLabel).join("; ") : "no receivers (it only stops later routes)"}`);
  if (d.stops) lines.push("   continue: false: later routes are not considered");
  return lines;
}
