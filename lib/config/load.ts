/**
 * Loads and checks the configuration. Every problem is reported with the file and the path of the bad
 * field (`lookout.yaml: watch[0].organization: is not a valid uuid`), at start, before anything runs.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { ConfigFile, DEFAULT_ROUTINE_RETENTION } from "./schema.js";
import { parseDuration } from "./duration.js";
import { parseSize } from "./size.js";
import { allowedKeysAt, closestWord, compareInputPaths, describeIssue, inputPath, jsonPath } from "../model/issues.js";
import { routingProblems, toLinks, toNotify, toRoutes } from "./routes.js";
import type { LinkTemplate, NotifySettings, Route } from "./route-types.js";
import type * as z from "zod/mini";
import { ConfigError, type ConfigProblem } from "./error.js";

// Kept apart so that what deployed functions load at run time carries no schema (lib/app/cloud/config.ts).
export { ConfigError, type ConfigProblem } from "./error.js";
export { resolveSecret } from "./secrets.js";

export interface WatchedApplication {
  id: string;
  name?: string;
  project?: string;
  environment?: string;
  /** Links shown with this service's events, overriding the routes' by label. */
  links?: LinkTemplate[];
}

export interface WatchedCluster {
  id: string;
  name?: string;
}

export interface Watch {
  organization: string;
  name?: string;
  webhooks: string[];
  clusters: WatchedCluster[];
  applications: WatchedApplication[];
}

export interface HealthSettings {
  failingAfter: number;
  stalledAfterMs?: number;
}

/** The checked configuration, durations in milliseconds and the token still a reference. */
export interface Config {
  source: string;
  platform: {
    url: string;
    tokenRef: string;
    auth: "token" | "bearer";
    requestsPerHour: number;
    timeoutMs: number;
    /** Answers larger than this, decompressed, are refused (the loader always sets it; default 20 MB). */
    maxResponseBytes?: number;
  };
  watch: Watch[];
  backfillWindowMs: number;
  retentionMs: number;
  /** Records that raised nothing (immutable, no alert): usually shorter, they are most of what is stored. */
  routineRetentionMs: number;
  pollIntervalMs: number;
  health: HealthSettings;
  incidents: {
    /** A cluster incident with no error entry for this long closes (when no successful step closed it). */
    clusterQuietMs: number;
  };
  dataDir: string;
  /** In order: the first routes with continue: false stop later ones from matching. */
  routes: Route[];
  notify: NotifySettings;
}

/** Environment variables that override the file, for pointing the same file at a real platform. */
export interface ConfigEnv {
  PLATFORM_API_URL?: string;
  PLATFORM_API_TOKEN?: string;
  [name: string]: string | undefined;
}

export function loadConfigFile(path: string, env: ConfigEnv = process.env): Config {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(path, "", code === "ENOENT" ? "not found" : `cannot be read (${code ?? (err as Error).message})`);
  }
  return parseConfig(text, path, env);
}

export function parseConfig(text: string, source: string, env: ConfigEnv = process.env): Config {
  let raw: unknown;
  try {
    raw = /\.json$/i.test(source) ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError(source, "", `is not valid ${/\.json$/i.test(source) ? "JSON" : "YAML"}: ${syntaxProblem(err as Error, text)}`);
  }
  return checkConfig(raw, source, env);
}

/**
 * A parser's message on one line. The YAML parser's first line ends in a colon before its code frame:
 * the line it points at is quoted instead, so the message does not end on a dangling colon.
 */
function syntaxProblem(err: Error & { linePos?: Array<{ line: number }> }, text: string): string {
  let first = err.message.split("\n")[0]!.replace(/:\s*$/, "");
  let line = err.linePos?.[0]?.line;
  // JSON.parse names a character position only (Node 20): its line and column, and that line quoted.
  const at = /at position (\d+)/.exec(first);
  if (line === undefined && at) {
    const before = text.slice(0, Number(at[1])).split(/\r?\n/);
    line = before.length;
    if (!/\bline\b/.test(first)) first += ` (line ${line}, column ${before.at(-1)!.length + 1})`;
  }
  const near = line === undefined ? undefined : text.split(/\r?\n/)[line - 1]?.trim();
  return near ? `${first}: ${JSON.stringify(near.length > 80 ? `${near.slice(0, 79)}…` : near)}` : first;
}

export function checkConfig(raw: unknown, source: string, env: ConfigEnv = process.env): Config {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new ConfigError(source, "", "must be a mapping with at least `platform` and `watch`");
  }
  const withEnv = applyEnvOverrides(raw as Record<string, unknown>, env);
  const parsed = ConfigFile.safeParse(withEnv);
  if (!parsed.success) throw ConfigError.of(source, schemaProblems(parsed.error.issues, withEnv));
  const c = parsed.data;
  const ms = (s: string) => parseDuration(s)!;
  const routes = toRoutes(c.routes);
  const notify = toNotify(c.notify);
  const routing = routingProblems(routes, notify);
  if (routing.length) throw ConfigError.of(source, routing);
  if (c.retention_routine && ms(c.retention_routine) > ms(c.retention)) {
    throw new ConfigError(source, "retention_routine", `${c.retention_routine} is longer than retention (${c.retention}): records that raised nothing are kept at most as long as the rest`);
  }
  return {
    source,
    platform: {
      url: c.platform.url.replace(/\/+$/, ""),
      tokenRef: c.platform.token,
      auth: c.platform.auth,
      requestsPerHour: c.platform.requests_per_hour,
      timeoutMs: ms(c.platform.timeout),
      maxResponseBytes: parseSize(c.platform.max_response_size)!,
    },
    watch: c.watch.map((w) => ({
      organization: w.organization.toLowerCase(),
      ...(w.name ? { name: w.name } : {}),
      webhooks: w.webhooks,
      clusters: w.clusters.map((c) => (typeof c === "string" ? { id: c } : c)),
      applications: w.applications.map((a) => {
        if (typeof a === "string") return { id: a };
        const { links, ...named } = a;
        return { ...named, ...(links ? { links: toLinks(links) } : {}) };
      }),
    })),
    backfillWindowMs: ms(c.backfill_window),
    retentionMs: ms(c.retention),
    routineRetentionMs: c.retention_routine ? ms(c.retention_routine) : Math.min(ms(DEFAULT_ROUTINE_RETENTION), ms(c.retention)),
    pollIntervalMs: ms(c.poll_interval),
    health: {
      failingAfter: c.health.failing_after,
      ...(c.health.stalled_after ? { stalledAfterMs: ms(c.health.stalled_after) } : {}),
    },
    incidents: { clusterQuietMs: ms(c.incidents.cluster_quiet_period) },
    dataDir: c.data_dir,
    routes,
    notify,
  };
}

/**
 * Every schema issue as the file is written: the path without the `[0]` of a "one or a list" field
 * written as one, each unknown key on its own line with the allowed key it was likely meant to be,
 * in file order.
 */
function schemaProblems(issues: readonly z.core.$ZodIssue[], input: unknown): ConfigProblem[] {
  const found: Array<{ path: PropertyKey[]; problem: string }> = [];
  for (const raw of issues) {
    const issue = branchIssue(raw);
    if (issue.code === "unrecognized_keys") {
      const allowed = allowedKeysAt(ConfigFile, issue.path);
      for (const key of issue.keys) {
        const near = closestWord(key, allowed);
        found.push({ path: [...issue.path, key], problem: `unknown field${near ? `; did you mean ${near}?` : ""}` });
      }
      continue;
    }
    // A schema's own message (custom, or a type error it words itself) as written; zod's defaults in ours.
    const own = issue.code === "custom" || (issue.code === "invalid_type" && !issue.message.startsWith("Invalid input"));
    found.push({ path: issue.path as PropertyKey[], problem: own ? issue.message : describeIssue(issue, input) });
  }
  found.sort((a, b) => compareInputPaths(input, a.path, b.path));
  const lines = found.map((f) => ({ field: jsonPath(inputPath(input, f.path)).replace(/^\$\.?/, ""), problem: f.problem }));
  return lines.filter((l, i) => lines.findIndex((o) => o.field === l.field && o.problem === l.problem) === i);
}

/**
 * A value that fits none of a field's forms (`uuid` or `{ id, … }`, a severity or a map): the issue of
 * the one form whose shape it has, at its own path, when just one has it; else the field's own message.
 */
function branchIssue(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== "invalid_union") return issue;
  const shaped = issue.errors.filter((branch) => !branch.some((i) => i.code === "invalid_type" && i.path.length === 0));
  if (shaped.length !== 1 || !shaped[0]![0]) return issue;
  const inner = shaped[0]![0];
  return branchIssue({ ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue);
}

function applyEnvOverrides(raw: Record<string, unknown>, env: ConfigEnv): Record<string, unknown> {
  const platform = { ...((raw.platform as Record<string, unknown> | undefined) ?? {}) };
  if (env.PLATFORM_API_URL) platform.url = env.PLATFORM_API_URL;
  if (env.PLATFORM_API_TOKEN && platform.token === undefined) platform.token = "env:PLATFORM_API_TOKEN";
  return { ...raw, platform };
}
