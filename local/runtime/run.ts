/**
 * `lookout run`: the pipeline on one machine. `--once` polls every configured source once, publishes
 * what was raised, and exits; without it, dispatch polls within the request budget every interval.
 */
import pMap from "p-map";
import { setTimeout as delay } from "node:timers/promises";
import type { Config } from "../../lib/config/load.js";
import type { Log } from "../../lib/model/log.js";
import type { PollRequest, PollResult } from "../../lib/model/poll.js";
import { everySource, recordRefusedPolls, recordUnplannedPolls } from "../../lib/dispatch/tick.js";
import { feedTick } from "../../lib/dispatch/feed-tick.js";
import { raiseHealth } from "../../lib/dispatch/health-watch.js";
import { pollAndRecord } from "../../lib/dispatch/poll-batch.js";
import { DISPATCH_NAME } from "../../lib/dispatch/source-state.js";
import { feedFirst } from "../../lib/poll/together.js";
import { FEED_LOOP, feedReadsPerTick } from "../../lib/dispatch/feed-loop.js";
import { PreflightError } from "./preflight.js";
import { openLocalPipeline, PREVIEW_RECEIVER, type LocalPipeline, type OpenOptions } from "./pipeline.js";
import { PREVIEW_ROUTE } from "./preview-route.js";
import { startActionsEndpoint, type ActionsEndpoint } from "./actions-endpoint.js";
import { composeActions } from "../../lib/app/actions.js";
import { dispatchTick } from "../../lib/app/dispatch-tick.js";
import { oneLine } from "../../lib/notify/view/index.js";
import type { SlackSender } from "../../lib/notify/types.js";
import {
  PlatformError,
  PlatformForbiddenError,
  PlatformNetworkError,
  PlatformNotFoundError,
  PlatformTimeoutError,
  PlatformUnauthenticatedError,
} from "../../lib/platform/errors.js";
import { alertLine, deliveryLine, pollLine } from "./view.js";
import { terminalSlack, type TerminalSlackOptions } from "./terminal-slack.js";
import { type Delivery, flushDigests, flushEscalations } from "../../lib/notify/notifier.js";
import { receiverSecretRefs, unsetEnvSecrets } from "../../lib/config/routes.js";
import { allReceivers, receiverId } from "../../lib/config/receivers.js";
import { redactUrl } from "../../lib/platform/redact.js";

export interface RunOptions {
  config: Config;
  /** A watching run serves Slack's interactivity endpoint here when notify.slack_actions is configured (0: a free port). */
  actionsPort?: number;
  /** Told the endpoint's URL once it listens (the demo clicks through it). */
  onActionsEndpoint?: (url: string) => void;
  /** Told of each message the terminal preview posts (the demo clicks its buttons). */
  onPreviewPost?: TerminalSlackOptions["onPosted"];
  once: boolean;
  env?: NodeJS.ProcessEnv;
  log: Log;
  /** Where the live view goes. */
  print: (line: string) => void;
  /** Stops a continuous run. */
  signal?: AbortSignal;
  now?: () => Date;
  /** Print a line for every poll, not only those with news. */
  verbosePolls?: boolean;
  /** How often the change feed's loop ticks, in real time (default FEED_LOOP.everyMs; the demo's faster clock ticks it sooner). */
  feedEveryMs?: number;
  /** The Slack sender's waits between attempts (tests on a simulated clock shorten them). */
  slackRetry?: OpenOptions["slackRetry"];
  /** Waits in delivery (tests on a simulated clock shorten them). */
  sleep?: OpenOptions["sleep"];
}

export interface RunSummary {
  polls: number;
  requests: number;
  newRecords: number;
  alerts: number;
  published: number;
  failedPolls: number;
  /** Events whose delivery is unfinished after the run (a receiver failing, a sender holding it): the next run retries them. */
  owed?: number;
  /** Alerts held for a receiver's digest after the run: a later run's flush sends them. */
  held?: number;
}

/** Sources polled at once: the platform is one service; a few in flight keep a tick short. */
const POLL_CONCURRENCY = 4;

export async function runLookout(opts: RunOptions): Promise<RunSummary> {
  const now = opts.now ?? (() => new Date());
  const summary: RunSummary = { polls: 0, requests: 0, newRecords: 0, alerts: 0, published: 0, failedPolls: 0 };
  // Before anything starts: a receiver whose secret is unset would drop alerts at the first failure.
  const unset = unsetEnvSecrets(receiverSecretRefs(opts.config.routes, opts.config.notify), opts.env ?? process.env);
  if (unset.length) throw new PreflightError(unsetSecretsLine(unset));
  // No Slack receiver configured: show here what Lookout would post, threads and edits included — in a
  // watching run (`npm start`), not in a `--once` run: cron's output is a log, and nobody reads a preview there.
  const preview = opts.once || allReceivers(opts.config.routes, opts.config.notify).some((r) => r.type === "slack")
    ? undefined
    : terminalSlack(opts.print, now, "slack (not configured: shown here)", opts.onPreviewPost ? { onPosted: opts.onPreviewPost } : {});
  const pipeline = await openLocalPipeline(opts.config, {
    ...(preview ? { preview } : {}),
    env: opts.env,
    log: opts.log,
    now,
    ...(opts.slackRetry ? { slackRetry: opts.slackRetry } : {}),
    ...(opts.sleep ? { sleep: opts.sleep } : {}),
    onDelivery: (detail, deliveries) => {
      // The preview prints its messages itself; only what did not go out is worth a line.
      for (const d of deliveries) if (d.route !== PREVIEW_ROUTE || d.outcome !== "sent") opts.print(deliveryLine(detail, d, now()));
    },
    onPublished: (r) => {
      summary.published += r.published.length;
      if (r.published.length) opts.print(`${now().toISOString().slice(11, 19)} published ${r.published.length} event(s) to the local bus`);
    },
  });
  pipeline.pollDeps.onAlert = (detail, suppression) => opts.print(alertLine(detail, suppression, now()));
  let actions: ActionsEndpoint | undefined;
  try {
    await preflightOrCount(pipeline, opts, now);
    if (opts.once) {
      const polls = await everySource(pipeline.dispatch, pipeline.watch, now().getTime());
      await recordUnplannedPolls(pipeline.dispatch, pipeline.watch, polls, now().getTime());
      await pollEach(pipeline, polls, { ...opts, verbosePolls: true }, summary);
      // The failures recorded across runs (the table keeps them) raise health as dispatch's tick would.
      const state = await pipeline.dispatch.get(DISPATCH_NAME);
      if (state) await raiseHealth(state, pipeline.watch, now(), pipeline.store, (d) => opts.print(alertLine(d, undefined, now())), opts.config.health);
      await pipeline.reader.drain();
      summary.owed = await pipeline.notifyRetries.retry();
      await flushHeld(pipeline, opts.print);
      // What this run leaves to a later one is said in its summary, never left silent.
      summary.held = await heldCount(pipeline);
    } else {
      actions = await serveSlackActions(pipeline, opts, preview);
      await runContinuously(pipeline, opts, summary);
    }
  } finally {
    await actions?.close();
    await pipeline.close();
  }
  return summary;
}

/**
 * Slack's interactivity endpoint while Lookout watches (docs/actions.md), when notify.slack_actions is
 * configured: the buttons of Slack's messages, and of the terminal preview's, act through it.
 */
async function serveSlackActions(p: LocalPipeline, opts: RunOptions, preview: SlackSender | undefined): Promise<ActionsEndpoint | undefined> {
  const configured = opts.config.notify.slackActions;
  if (!configured) return undefined;
  const given = (opts.env ?? process.env).LOOKOUT_ACTIONS_PORT;
  const port = opts.actionsPort ?? (given === undefined ? 0 : Number(given));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new PreflightError(`LOOKOUT_ACTIONS_PORT: ${JSON.stringify(given)} is not a port (0 to 65535; 0 or unset picks a free one)`);
  const ports = composeActions(opts.config, { dynamodb: p.dynamodb, tableName: p.tableName, resolveSecret: p.resolveSecret, log: opts.log, now: opts.now ?? (() => new Date()), slack: p.slack }, preview ? [PREVIEW_RECEIVER] : []);
  const endpoint = await startActionsEndpoint({
    signingSecret: await p.resolveSecret(configured.signingSecretRef), ports, log: opts.log, port,
    // The name is Slack's, and printed on one line whatever it holds.
    onActed: (e, outcome) => opts.print(`${(opts.now ?? (() => new Date()))().toISOString().slice(11, 19)} slack action: ${e.request.kind} by ${oneLine(e.request.user.name || e.request.user.id)}: ${outcome.outcome.replace(/_/g, " ")}`),
  });
  opts.print(`slack actions: POST ${endpoint.url} (the Slack app's interactivity Request URL, through a tunnel to this machine)`);
  opts.onActionsEndpoint?.(endpoint.url);
  return endpoint;
}

/** Why `lookout run` does not start: each unset variable once, with where the file names it. */
export function unsetSecretsLine(unset: ReadonlyArray<{ field: string; ref: string }>): string {
  const byRef = new Map<string, string[]>();
  for (const u of unset) byRef.set(u.ref, [...(byRef.get(u.ref) ?? []), u.field]);
  const each = [...byRef].map(([ref, fields]) => `${ref.slice("env:".length)} is not set (${fields.join(", ")} read ${ref})`);
  return `${each.join("; ")}: export ${byRef.size === 1 ? "it" : "them"}, or \`lookout check-config\` to see every secret; a receiver without its secret cannot send`;
}


/**
 * The preflight; in a `--once` run (cron), a platform that refuses the token or cannot be reached is
 * also every source's failed poll, counted across runs and raised as health, as dispatch would.
 */
async function preflightOrCount(p: LocalPipeline, opts: RunOptions, now: () => Date): Promise<void> {
  try {
    await preflight(p);
  } catch (err) {
    if (!opts.once || !(err instanceof PreflightError) || !err.failure) throw err;
    // A token refused or a platform unreachable fails every source; an organization refused, only its own.
    const orgOnly = err.failure.kind === "forbidden" || err.failure.kind === "not_found";
    const polls = (await everySource(p.dispatch, p.watch, now().getTime())).filter((r) => !orgOnly || r.source.organizationId === p.config.watch[0]?.organization);
    const state = await recordRefusedPolls(p.dispatch, p.watch, polls, err.failure, now().getTime());
    await raiseHealth(state, p.watch, now(), p.store, (d) => opts.print(alertLine(d, undefined, now())), opts.config.health);
    await p.reader.drain();
    await p.notifyRetries.retry();
    throw err;
  }
}

/**
 * One request before anything runs, so that an unreachable platform or a rejected token is a clear
 * instruction at start rather than a stream of failing polls.
 */
async function preflight(p: LocalPipeline): Promise<void> {
  const org = p.config.watch[0]?.organization;
  if (!org) return;
  try {
    await p.client.listProjects({ path: { organizationId: org } });
  } catch (err) {
    const failure = err instanceof PlatformError ? { kind: err.kind, ...(err.status !== undefined ? { status: err.status } : {}), message: err.message } : undefined;
    const url = redactUrl(p.config.platform.url); // a URL may carry a password (docs/security.md)
    if (err instanceof PlatformNetworkError || err instanceof PlatformTimeoutError) {
      throw new PreflightError(`cannot reach the platform at ${url} (${err.message.split(" (")[1]?.split(")")[0] ?? err.kind}): check PLATFORM_API_URL or platform.url`, failure);
    }
    if (err instanceof PlatformUnauthenticatedError) {
      throw new PreflightError(`the platform at ${url} rejected the token (401): check the token that platform.token names (${p.config.platform.tokenRef})`, failure);
    }
    if (err instanceof PlatformForbiddenError || err instanceof PlatformNotFoundError) {
      throw new PreflightError(`the token may not read organization ${org} (${err.status}): check watch[0].organization and the token's permissions`, failure);
    }
    // Anything else (5xx, rate limiting) is the platform's passing trouble: polling copes with it.
  }
}

function tally(summary: RunSummary, r: PollResult) {
  summary.polls++;
  summary.requests += r.requests;
  summary.newRecords += r.newRecords;
  summary.alerts += r.alerts;
  if (!r.ok) summary.failedPolls++;
}

/** Polls the given sources (a few at a time), prints a line for each, and records them for dispatch. */
async function pollEach(p: LocalPipeline, polls: PollRequest[], opts: RunOptions, summary: RunSummary) {
  // The change feed first: the services it names are known to the deployment polls after it.
  await feedFirst(polls, (batch) => pMap(
    batch,
    async (req) => {
      const r = await pollAndRecord(req, p.pollDeps, p.dispatch, p.watch);
      tally(summary, r);
      if (r.newRecords || !r.ok || opts.verbosePolls) opts.print(pollLine(r, p.pollDeps.now()));
    },
    { concurrency: POLL_CONCURRENCY },
  ));
}

/** How many alerts wait in the receivers' digests. */
async function heldCount(p: LocalPipeline): Promise<number> {
  const held = await Promise.all(allReceivers(p.config.routes, p.config.notify).map((r) => p.notifier.store.heldFor(receiverId(r))));
  return held.reduce((n, h) => n + h.length, 0);
}

/**
 * What storms held back goes out as digests now, whether or not another alert comes; and what is due
 * is escalated (docs/actions.md, "Escalation"), as dispatch's tick has the notify functions do in the
 * cloud. Either one's failure fails the call after both were tried.
 */
export async function flushHeld(p: LocalPipeline, print?: (line: string) => void): Promise<number> {
  let failed: unknown;
  const sent = await flushDigests(allReceivers(p.config.routes, p.config.notify), p.notifier).catch((err: unknown) => ((failed = err), 0));
  const escalated = await flushEscalations(["slack", "email"], p.notifier).catch((err: unknown): Delivery[] => ((failed ??= err), []));
  for (const d of escalated) if (d.escalated) print?.(deliveryLine(d.escalated, d, p.notifier.now(), "escalate"));
  if (failed) throw failed;
  return sent;
}

/** The run loop's flush: a failure is said and the loop goes on (what stays held is tried next time). */
const flushHeldInLoop = (p: LocalPipeline, opts: RunOptions) =>
  flushHeld(p, opts.print).catch((err: unknown) => opts.print(`digest flush failed: ${(err as Error).message}; what is held stays held and is tried again`));

/**
 * One pass of the watching loop: dispatch's tick, as the deployed function runs it (lib/app/dispatch-tick.ts),
 * its polls sent to this process; then owed deliveries retried and digests flushed.
 */
export async function loopPass(p: LocalPipeline, opts: RunOptions, summary: RunSummary): Promise<void> {
  const now = p.pollDeps.now();
  const { failure } = await dispatchTick(
    {
      store: p.dispatch, watch: p.watch, outbox: p.store, health: opts.config.health, feedLoop: { loops: p.loops },
      polls: { send: async (polls) => ((await pollEach(p, polls, opts, summary)), { unsent: [], reasons: [] }) },
    },
    now.getTime(),
    { log: opts.log, onHealth: (d) => opts.print(alertLine(d, undefined, now)) },
  );
  if (failure) throw failure;
  await p.notifyRetries.retry();
  await flushHeldInLoop(p, opts);
}

/**
 * One tick of the change feed's loop (lib/dispatch/feed-loop.ts): the feed read and the services it names
 * polled at once. A failure is said and the loop goes on; the minute's pass reads the feed meanwhile.
 */
export async function feedPass(p: LocalPipeline, opts: RunOptions, summary: RunSummary): Promise<void> {
  try {
    const { results } = await feedTick({ dispatch: p.dispatch, loops: p.loops, watch: p.watch, pollDeps: p.pollDeps }, p.pollDeps.now().getTime());
    for (const r of results) {
      tally(summary, r);
      if (r.newRecords || !r.ok || opts.verbosePolls) opts.print(`${pollLine(r, p.pollDeps.now())} (change feed loop)`);
    }
  } catch (err) {
    opts.print(`change feed tick failed: ${(err as Error).message}; the next one comes in ${(opts.feedEveryMs ?? FEED_LOOP.everyMs) / 1000} s`);
  }
}

async function runContinuously(p: LocalPipeline, opts: RunOptions, summary: RunSummary) {
  p.reader.start(1_000);
  // Between polling passes: the change feed's loop ticks (when the feed is watched and the budget has
  // room for it), and digests are flushed at least every digest_within.
  const every = opts.feedEveryMs ?? FEED_LOOP.everyMs;
  const feedEvery = feedReadsPerTick(p.watch) && opts.config.pollIntervalMs > every ? every : Infinity;
  const flushEvery = Math.min(opts.config.pollIntervalMs, opts.config.notify.digestWithinMs);
  let fed = 0; // (not -Infinity: with no loop, feedEvery is Infinity, and fed + feedEvery must stay Infinity)
  while (!opts.signal?.aborted) {
    const started = Date.now();
    await loopPass(p, opts, summary);
    let flushed = Date.now();
    // Not sooner than its interval after the last tick (the lease would refuse it, and the loop skip a beat).
    if (feedEvery !== Infinity && Date.now() >= fed + feedEvery) {
      fed = Date.now();
      await feedPass(p, opts, summary);
    }
    for (;;) {
      const at = Date.now();
      const wait = Math.min(fed + feedEvery, flushed + flushEvery, started + opts.config.pollIntervalMs) - at;
      if (started + opts.config.pollIntervalMs <= at || opts.signal?.aborted) break;
      if (wait > 0) await delay(wait, undefined, { signal: opts.signal }).catch(() => undefined);
      if (opts.signal?.aborted || Date.now() >= started + opts.config.pollIntervalMs) break;
      if (Date.now() >= fed + feedEvery) {
        fed = Date.now();
        await feedPass(p, opts, summary);
      }
      if (Date.now() >= flushed + flushEvery) {
        flushed = Date.now();
        await flushHeldInLoop(p, opts);
      }
    }
  }
  // Stopped (Ctrl-C): what the last polls raised is published and delivered before the process ends
  // (usually a second; as long as a failing receiver's retries, and a second Ctrl-C ends it at once);
  // then what is left (held for a digest, owed) is counted for the summary, never left silent.
  await p.reader.stop();
  await p.reader.drain().catch((err: unknown) =>
    opts.log.error("could not publish what the last polls raised before stopping; the next start publishes it", { error: (err as Error).message }));
  summary.owed = await p.notifyRetries.pending().catch(() => undefined);
  summary.held = await heldCount(p).catch(() => undefined);
}
