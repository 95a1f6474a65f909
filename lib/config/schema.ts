/**
 * The configuration file (YAML or JSON) as a schema. Every field has a default where one makes sense, so
 * the smallest useful file names only the platform and what to watch.
 */
import * as z from "zod/mini";
import { DURATION_LIMITS, durationRangeProblem, parseDuration, unitlessDuration } from "./duration.js";
import { parseSize } from "./size.js";
import { LinkTemplatesFile, routeSchemas } from "./routes.js";

// Any 8-4-4-4-12 hex id, as the platform issues (not only RFC 4122 variants).
const uuid = () => z.guid();

/** A duration string within the field's range (lib/config/duration.ts), turned into milliseconds by the loader. */
const duration = (field: keyof typeof DURATION_LIMITS) =>
  z.string({ error: unitlessDuration }).check(
    z.refine((s) => parseDuration(s) !== undefined, { message: "is not a duration like 90s, 15m, 1h or 400d", abort: true }),
    z.superRefine((s, ctx) => {
      const problem = durationRangeProblem(parseDuration(s)!, DURATION_LIMITS[field]);
      // The value is echoed, cut short: a hostile file must not make a screenful of one line.
      const shown = s.trim().length > 24 ? `${s.trim().slice(0, 20)}…` : s.trim();
      if (problem) ctx.addIssue({ code: "custom", message: `${shown}: ${problem}`, input: s });
    }),
  );

/** A whole number within a range (docs/limits.md). */
const count = (min: number, max: number) => z.int().check(z.minimum(min), z.maximum(max));

/** A size string (`20MB`) from 64KB to 1GB (docs/limits.md), turned into bytes by the loader. */
const SIZE_RANGE = { min: 64 * 1024, max: 1024 ** 3 };
const size = () =>
  z.string().check(
    z.refine((s) => parseSize(s) !== undefined, { message: "is not a size like 512KB, 20MB or 1GB", abort: true }),
    z.refine((s) => parseSize(s)! >= SIZE_RANGE.min && parseSize(s)! <= SIZE_RANGE.max, { message: "must be from 64KB to 1GB" }),
  );

/**
 * Where a secret comes from: `env:NAME`, `ssm:/parameter/name` or `secretsmanager:name`. A literal token
 * is refused so that it never sits in a file that gets committed or logged.
 */
export const SecretRef = z.string().check(
  z.refine((s) => /^(env:[A-Za-z_][A-Za-z0-9_]*|ssm:\/.+|secretsmanager:.+)$/.test(s), {
    message: "must name where the secret is kept: env:NAME, ssm:/path or secretsmanager:name (never the secret itself)",
  }),
);

export const WatchedApplication = z.union([
  uuid(),
  z.strictObject({
    id: uuid(),
    name: z.optional(z.string()),
    project: z.optional(z.string()),
    environment: z.optional(z.string()),
    /** This service's links, overriding the routes' and notify.links by label. */
    links: z.optional(LinkTemplatesFile),
  }),
]);

/** A cluster by id, or `{ id, name }`: the name then appears in its alerts. */
export const WatchedCluster = z.union([uuid(), z.strictObject({ id: uuid(), name: z.optional(z.string()) })]);

// Strict objects throughout: a misspelt key (`backfil_window`) is an error naming it, never ignored.
export const Watch = z.strictObject({
  organization: uuid(),
  name: z.optional(z.string()),
  webhooks: z._default(z.array(uuid()), []),
  clusters: z._default(z.array(WatchedCluster), []),
  applications: z._default(z.array(WatchedApplication), []),
});

export const PlatformSettings = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  token: SecretRef,
  auth: z._default(z.enum(["token", "bearer"]), "token"),
  requests_per_hour: z._default(count(1, 1_000_000), 1000),
  timeout: z._default(duration("platform.timeout"), "10s"),
  /** Larger answers (decompressed) are refused: a runaway or hostile answer must not fill memory. */
  max_response_size: z._default(size(), "20MB"),
});

const Routing = routeSchemas(SecretRef);

export const DEFAULT_CLUSTER_QUIET_PERIOD = "30m";

/** How long records that raised nothing are kept unless `retention_routine` says (never past `retention`). */
export const DEFAULT_ROUTINE_RETENTION = "30d";

export const ConfigFile = z.strictObject({
  platform: PlatformSettings,
  watch: z.array(Watch).check(z.minLength(1)),
  backfill_window: z._default(duration("backfill_window"), "15m"),
  retention: z._default(duration("retention"), "400d"),
  /** Records that raised nothing (a delivery answered 2xx, a routine log line): by default 30 days, at most `retention`. */
  retention_routine: z.optional(duration("retention_routine")),
  data_dir: z._default(z.string(), ".lookout"),
  /** How often the local runner polls; in the cloud the schedule does. */
  poll_interval: z._default(duration("poll_interval"), "1m"),
  /** When Lookout reports on itself (Lookout Health events). */
  health: z._default(
    z.strictObject({
      /** No successful poll of a source for this long: polling stalled. Default: twice a quiet source's interval, at least 30m. */
      stalled_after: z.optional(duration("health.stalled_after")),
      /** This many failed polls of a source in a row: source failing. */
      failing_after: z._default(count(1, 1000), 3),
    }),
    { failing_after: 3 },
  ),
  /** How incidents open and close (docs/events.md, "Incidents"). */
  incidents: z._default(
    z.strictObject({ cluster_quiet_period: z._default(duration("incidents.cluster_quiet_period"), DEFAULT_CLUSTER_QUIET_PERIOD) }),
    { cluster_quiet_period: DEFAULT_CLUSTER_QUIET_PERIOD },
  ),
  /** Who is told about which event (lib/config/routes.ts). */
  routes: Routing.Routes,
  /** Sender settings, storm budget and fallback receivers. */
  notify: Routing.Notify,
});
export type ConfigFile = z.infer<typeof ConfigFile>;
