/**
 * Dollars a month at public list prices (us-east-1, as of 2026-11, free tiers left out) for 50, 200 and
 * 500 watched applications: a short simulated period per size (local/runtime/simulated-day.ts) counts polls,
 * requests, DynamoDB calls and alerts; the schedule and the functions' settings (serverless.yml, infra/)
 * turn them into invocations; the period is scaled to a month.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, paginateScan } from "@aws-sdk/lib-dynamodb";
import { simulateDay, type DayResult } from "../local/runtime/simulated-day.js";
import { alarmResources, watchedQueues } from "../infra/stack.js";
import { billedBytes, dayProgress, dynamo, firstSightProgress, report, section, stopDynamo } from "./support.js";

const MONTH_HOURS = 730;
const HOURS = 2;

/** Unit prices, us-east-1, 2026-11 (BENCHMARKS.md cites where they come from). */
export const PRICES = {
  lambdaRequest: 0.2 / 1e6,
  lambdaGbSecondArm: 0.0000133334,
  dynamoWru: 0.625 / 1e6,
  dynamoRru: 0.125 / 1e6,
  sqsRequest: 0.4 / 1e6,
  sqsFifoRequest: 0.5 / 1e6,
  pipesRequest: 0.4 / 1e6,
  eventBridgeEvent: 1.0 / 1e6,
  schedulerInvocation: 1.0 / 1e6,
  sesEmail: 0.1 / 1000,
  logsGb: 0.5,
  dynamoStorageGbMonth: 0.25,
  dynamoPitrGbMonth: 0.2,
  alarmMonth: 0.1,
  kmsKeyMonth: 1.0,
  /** Step Functions Express: per execution, and per GB-second (billed by 64 MB and 100 ms). */
  sfnExpressRequest: 1.0 / 1e6,
  sfnExpressGbSecond: 0.00001667,
} as const;

/** The stack's CloudWatch alarms (infra/stack.ts), each billed a month; it keeps no KMS key of its own (infra/bus.yml). */
const ALARMS = Object.values(alarmResources({ service: "lookout", stage: "prod" })).filter((r) => r.Type === "AWS::CloudWatch::Alarm").length;
const KMS_KEYS = 0;
/** The default retention (lib/config/schema.ts): items expire after it, so the table stops growing then. */
const RETENTION_DAYS = 400;
/** The default `retention_routine` (lib/config/schema.ts): what raised nothing expires sooner. */
const ROUTINE_RETENTION_DAYS = 30;
/**
 * Watched applications priced (BENCH_COST_SIZES, comma-separated, to choose), and the targets set for
 * them. 2,000 is asked for by name: on a 2-core machine it ran over 45 minutes without finishing, most
 * of it decoding dispatch's state (2,280 sources) at every poll result.
 */
const SIZES = (process.env.BENCH_COST_SIZES ?? "50,200,500").split(",").map(Number);
const TARGETS: Record<number, number> = { 50: 2.5, 200: 3, 500: 5 };
const MONTH_DAYS = 365 / 12;

/** From serverless.yml: memory (MB), and the event sources' batch sizes. Durations are assumed (not measured in AWS). */
const FUNCTIONS = {
  dispatch: { mb: 256, ms: 200 },
  // The change feed's loop: a feed read, and now and then the services it names.
  feedTick: { mb: 512, ms: 250 },
  // Up to ten sources an invocation, polled at once (serverless.yml): a batch lasts about as long as its
  // slowest poll, assumed half again as long as one poll alone (400 ms).
  poll: { mb: 512, ms: 600, batch: 10 },
  publish: { mb: 256, ms: 150 },
  notify: { mb: 256, ms: 500 },
} as const;

/** Log bytes per invocation: START/END/REPORT lines (~350 B) and a few Powertools JSON lines (~350 B each). */
const LOG_BYTES = { dispatch: 1_050, feedTick: 700, poll: 1_400, publish: 700, notify: 1_050 } as const;

/**
 * Lambda's SQS event source long-polls each queue with 5 pollers, 20 s each, busy or not (assumed, AWS
 * docs); so do the pipes on the inboxes. The queues read that way (infra/queues.yml, infra/pipes.yml):
 * the Slack and email queues and their inboxes (FIFO). Dispatch invokes the poll function directly.
 */
const SQS_IDLE_RECEIVES_PER_MINUTE = 5 * 3;
const SQS_QUEUES = { standard: 0, fifo: 4 } as const;
/** The change feed's loop's queue (standard), polled like the others while a loop runs; a tick sends, receives and deletes one message. */
const FEED_LOOP_REQUESTS_PER_TICK = 3;
/** Dispatch samples every queue of the stack every five minutes (GetQueueAttributes), priced as FIFO requests: an upper bound. */
const QUEUE_SAMPLES_PER_TICK = watchedQueues().length / 5;

/** What the table's key prefixes hold (lib/model/items.ts). */
const ITEM_NAMES: Record<string, string> = {
  REC: "records, with their alerts", RTN: "batches of records that raised nothing", EXEC: "executions, with their alerts", DISPATCH: "dispatch state", DIR: "service directory",
  SRC: "cursors", INC: "incidents", NAMES: "names", ALERT: "alerts", SVC: "service state",
};

interface Stored {
  /** Records that raised nothing (kept for `retention_routine`). */
  routine: number;
  /** Everything else (kept for `retention`). */
  kept: number;
  /** Bytes by the key prefix of the item (its index entries with it). */
  byItem: Record<string, number>;
}

/**
 * Bytes the table bills for storage: each item and each index entry (the keys and the projected
 * attributes), with DynamoDB's 100 bytes of overhead apiece; records that raised nothing apart.
 */
async function storedBytes(client: DynamoDBClient, tableName: string): Promise<Stored> {
  const out: Stored = { routine: 0, kept: 0, byItem: {} };
  for await (const page of paginateScan({ client: DynamoDBDocumentClient.from(client) }, { TableName: tableName })) {
    for (const item of page.Items ?? []) {
      const billed = billedBytes(item);
      const bytes = billed.item + billed.entries;
      // What raised nothing: batches and their pointers; a record stored whole that is no failure (an
      // earlier version's, or one refused in its batch), but for the rare success that closes an incident.
      const routine = item.item_type === "routine_batch" || item.item_type === "record_ref" ||
        (item.item_type === "record" && (item.record as { failed?: boolean } | undefined)?.failed === false);
      out[routine ? "routine" : "kept"] += bytes;
      const prefix = String(item.pk).split("#")[0]!;
      out.byItem[prefix] = (out.byItem[prefix] ?? 0) + bytes;
    }
  }
  return out;
}

/** A period in which nothing happened. */
const EMPTY_DAY: DayResult = {
  deployments: 0, clusterRuns: 0, failures: 0, missed: [], suppressedAfterFirstSight: 0, clusterErrorsAlerted: 0, polls: 0, requests: 0,
  maxRequestsInAnHour: 0, requestsPerHourAllowed: 0, failedPolls: 0, failedPollKinds: {}, deferredPolls: 0, longestClusterGapMin: 0, stalledSources: [], newRecords: 0, writes: 0, dynamoCalls: {},
  dynamoUnits: { read: 0, write: 0, writesByItem: {} }, ticks: 0, dispatchWrites: 0, loopTicks: 0, sources: 0,
  messages: { alerts: 0, incidents: 0, before: 0, after: 0, repeats: 0 },
};

export interface CostLine {
  item: string;
  dollars: number;
}

/**
 * A month's bill from one simulated period, once the table holds what the period stored kept for its
 * retention (`storedByteMonths`: bytes stored over the period times the months they are kept).
 */
export function monthlyCost(r: DayResult, hours: number, storedByteMonths: number, opts: { pitr?: boolean } = {}): { lines: CostLine[]; total: number } {
  const scale = MONTH_HOURS / hours;
  const ticks = r.ticks * scale;
  const alerts = r.messages.alerts * scale;
  const pollInvocations = ticks * Math.ceil(r.polls / Math.max(1, r.ticks) / FUNCTIONS.poll.batch);
  // Every alert: one publish, one Slack and one email notify invocation (assumed routing: both receivers
  // get everything). An email per alert, but repeats within an incident are counted, not sent, and an
  // amendment (changes_listed) is one more message in the incident's conversation.
  const emails = (r.messages.alerts - r.messages.repeats) * scale;
  // Dispatch invokes a notify function to flush held digests only at a tick where alerts are held (storms).
  const loopTicks = r.loopTicks * scale;
  const inv = { dispatch: ticks, feedTick: loopTicks, poll: pollInvocations, publish: alerts, notify: 2 * alerts };
  const gbSeconds = (Object.keys(inv) as Array<keyof typeof inv>).reduce((sum, f) => sum + inv[f] * (FUNCTIONS[f].mb / 1024) * (FUNCTIONS[f].ms / 1000), 0);
  const invocations = Object.values(inv).reduce((a, b) => a + b, 0);

  // Ingest and dispatch as DynamoDB Local reported them consumed (indexes, transactions and item sizes included).
  const storeWru = r.dynamoUnits.write * scale;
  const storeRru = r.dynamoUnits.read * scale;
  // Notify: claim, settle, token bucket (read + write) per alert and receiver; two receivers.
  const notifyWru = alerts * 2 * 3;
  const notifyRru = alerts * 2 * 2;

  const idle = SQS_IDLE_RECEIVES_PER_MINUTE * 60 * MONTH_HOURS;
  // Sends and deletes: each alert into and out of two inboxes and two queues (the polls are invocations, no queue).
  const sqs = SQS_QUEUES.standard * idle + (loopTicks ? idle + FEED_LOOP_REQUESTS_PER_TICK * loopTicks : 0);
  const sqsFifo = SQS_QUEUES.fifo * idle + 2 * 2 * 2 * alerts + QUEUE_SAMPLES_PER_TICK * ticks;
  const logBytes = (Object.keys(inv) as Array<keyof typeof inv>).reduce((sum, f) => sum + inv[f] * LOG_BYTES[f], 0);
  const lines: CostLine[] = [
    { item: "Lambda requests", dollars: invocations * PRICES.lambdaRequest },
    { item: "Lambda GB-seconds (arm64)", dollars: gbSeconds * PRICES.lambdaGbSecondArm },
    { item: "DynamoDB writes", dollars: (storeWru + notifyWru) * PRICES.dynamoWru },
    { item: "DynamoDB reads", dollars: (storeRru + notifyRru) * PRICES.dynamoRru },
    { item: "SQS requests (polled, busy or not)", dollars: sqs * PRICES.sqsRequest + sqsFifo * PRICES.sqsFifoRequest },
    { item: "EventBridge Pipes", dollars: 2 * alerts * PRICES.pipesRequest },
    { item: "EventBridge events", dollars: alerts * PRICES.eventBridgeEvent },
    { item: "EventBridge Scheduler", dollars: ticks * PRICES.schedulerInvocation },
    { item: "SES emails", dollars: emails * PRICES.sesEmail },
    { item: "CloudWatch Logs ingestion", dollars: (logBytes / 1024 ** 3) * PRICES.logsGb },
    { item: `CloudWatch alarms (${ALARMS})`, dollars: ALARMS * PRICES.alarmMonth },
    { item: "KMS keys of the stack", dollars: KMS_KEYS * PRICES.kmsKeyMonth },
    { item: "DynamoDB storage and point-in-time backups", dollars: ((storedByteMonths * scale) / 1024 ** 3) * (PRICES.dynamoStorageGbMonth + (opts.pitr === false ? 0 : PRICES.dynamoPitrGbMonth)) },
  ];
  return { lines, total: lines.reduce((s, l) => s + l.dollars, 0) };
}

export async function benchCost(): Promise<void> {
  section({
    id: "cost",
    title: `Cost: dollars a month at ${SIZES.map((n) => n.toLocaleString("en")).join(", ")} watched applications`,
    method:
      `List prices for us-east-1 as of 2026-11, free tiers left out: Lambda $0.20 per million requests and $0.0000133334 per GB-second (arm64, ` +
      `as deployed); DynamoDB on-demand $0.625 per million write and $0.125 per million read request units; SQS $0.40 (FIFO $0.50) per million requests; EventBridge Pipes $0.40 per million; ` +
      `EventBridge $1.00 per million custom events; EventBridge Scheduler $1.00 per million invocations; SES $0.10 per 1000 emails; ` +
      `CloudWatch Logs $0.50 per GB ingested. For each size the simulator runs ${HOURS} hours of activity after first sight (deployments at ` +
      `0.08 an hour per application, cluster runs at 0.12 an hour per cluster, 1000 requests/hour) through dispatch and the real poller on DynamoDB ` +
      `Local, dispatch's state in the table as deployed; it counts ticks, polls and alerts, and DynamoDB Local reports the read and write units ` +
      `each call consumed (item sizes, transactions and the audit indexes' entries included; a refused conditional write counts one unit); ` +
      `the period is scaled to a 730-hour month. Invocations follow ` +
      `the schedule (dispatch every minute; the change feed's loop every 10 s while the feed is watched, each tick an invocation and 3 standard SQS requests (send, receive, delete), its queue polled like the others, its DynamoDB use measured with the rest; poll once per ten sources of a tick (dispatch invokes it asynchronously with up to ten polls, polled at once, dispatch's state written once a batch); publish, Slack notify and email notify per alert, one email per alert but repeats within an incident); memory sizes ` +
      `from serverless.yml; durations assumed (dispatch 200 ms, a feed tick 250 ms, a poll batch 600 ms, publish 150 ms, notify 500 ms); log bytes estimated per invocation ` +
      `(700 to 1400 B); Lambda's and the pipes' SQS pollers assumed at 15 receives a minute per queue (5 long-polls of 20 s each, busy or not), four queues: the Slack and email queues and their inboxes (FIFO); dispatch's samples of the stack's ${watchedQueues().length} queues every five minutes (GetQueueAttributes, at the FIFO price); notify's DynamoDB ` +
      `use assumed (claim, settle and rate bucket: 3 writes and 2 reads per alert and receiver); dispatch's look for held digests each tick ` +
      `(a Query a receiver, cents) is not counted, nor its flush invocations (only while a storm holds alerts). Fixed: CloudWatch alarms at $0.10 a month each, counted from the stack (${ALARMS}); no KMS key of its own ` +
      `(one would be $1 a month, $2 in its first two years). Storage: DynamoDB Standard at $0.25 and point-in-time backups at $0.20 ` +
      `per GB-month, of what the period stored (items and index entries, scanned) scaled to a month, records that raised nothing kept ` +
      `${ROUTINE_RETENTION_DAYS} days and the rest ${RETENTION_DAYS} (the defaults). Not counted: the audit API, the EventBridge archive, the health log group and SNS requests (cents).`,
  });
  for (const applications of SIZES) {
    const t = await dynamo();
    const size = { applications, clusters: Math.max(1, applications / 10), webhooks: Math.max(1, applications / 25) };
    let before: Stored = { routine: 0, kept: 0, byItem: {} };
    const r = await simulateDay({
      size, hours: HOURS, deploymentsPerHour: applications * 0.08, clusterRunsPerHour: size.clusters * 0.12,
      store: { ...t, retentionMs: 100 * 365 * 86_400_000 }, dispatchInTable: true,
      onSpanStart: async () => void (before = await storedBytes(t.client, t.tableName)),
      onHour: dayProgress(`cost, ${applications} applications`), onFirstSight: firstSightProgress(`cost, ${applications} applications`),
    });
    const end = await storedBytes(t.client, t.tableName);
    await stopDynamo();
    const stored = { routine: end.routine - before.routine, kept: end.kept - before.kept };
    const storedByItem = Object.entries(end.byItem).map(([k, v]): [string, number] => [k, v - (before.byItem[k] ?? 0)]);
    // Once full, the table holds `retention_routine` of what raised nothing and `retention` of the rest.
    const steadyBytes = stored.routine * (ROUTINE_RETENTION_DAYS / MONTH_DAYS) + stored.kept * (RETENTION_DAYS / MONTH_DAYS);
    const { lines, total } = monthlyCost(r, HOURS, steadyBytes);
    const firstMonth = monthlyCost(r, HOURS, (stored.routine + stored.kept) * 0.5).total;
    const keptAll = monthlyCost(r, HOURS, (stored.routine + stored.kept) * (RETENTION_DAYS / MONTH_DAYS)).total;
    // What the product's own choices cost: point-in-time recovery on, the rest kept 400 days (docs/architecture.md, "Storage").
    const kept90 = stored.routine * (ROUTINE_RETENTION_DAYS / MONTH_DAYS) + stored.kept * (90 / MONTH_DAYS);
    const choices = [
      ["without point-in-time backups", monthlyCost(r, HOURS, steadyBytes, { pitr: false }).total],
      ["and what raised something kept 90 days", monthlyCost(r, HOURS, kept90, { pitr: false }).total],
      ["and nothing stored at all", monthlyCost(r, HOURS, 0, { pitr: false }).total - (lines.find((l) => l.item === "DynamoDB writes")?.dollars ?? 0)],
    ] as const;
    const top = [...lines].sort((a, b) => b.dollars - a.dollars);
    const method = `${HOURS} simulated hours at ${applications} applications, ${size.clusters} clusters, ${size.webhooks} webhooks (${r.polls} polls, ${r.messages.alerts} alerts, ${r.ticks} ticks), scaled to a month`;
    const steady = `once the table is full: what raised nothing kept ${ROUTINE_RETENTION_DAYS} days, the rest ${RETENTION_DAYS} (the defaults)`;
    const target = TARGETS[applications];
    report({
      name: `${applications} applications: dollars a month`, value: total.toFixed(2), unit: "$",
      method: `${method}; ${steady}${target ? `; target ≤ $${target}: ${total <= target ? "met" : "not met"}` : ""}`,
    });
    // The change feed's loop, and what the other sub-minute mechanisms would cost in its place (docs/architecture.md, "The change feed's loop").
    const withoutLoop = monthlyCost({ ...r, loopTicks: 0 }, HOURS, steadyBytes).total;
    // Its use of dispatch's items (the lease, dispatch's state), in the measured total above either way.
    const loopUnits = r.dynamoUnits.loop ?? { read: 0, write: 0 };
    const loopDynamo = ((loopUnits.write * PRICES.dynamoWru + loopUnits.read * PRICES.dynamoRru) * MONTH_HOURS) / HOURS;
    const loopMonth = total - withoutLoop + loopDynamo;
    const minutes = MONTH_HOURS * 60;
    const loopTicks = r.loopTicks * (MONTH_HOURS / HOURS);
    const loopQueue = loopTicks ? (SQS_IDLE_RECEIVES_PER_MINUTE * minutes + FEED_LOOP_REQUESTS_PER_TICK * loopTicks) * PRICES.sqsRequest : 0;
    // Instead of the queue: an Express execution each minute (60 s at 64 MB) drives the same invocations.
    const sfn = loopMonth - loopQueue + minutes * (PRICES.sfnExpressRequest + 60 * (64 / 1024) * PRICES.sfnExpressGbSecond);
    // Or one invocation a minute that does its 6 ticks and sleeps between them: 60 s billed, the work included.
    const sleeper = loopDynamo + minutes * (PRICES.lambdaRequest + 60 * (FUNCTIONS.feedTick.mb / 1024) * PRICES.lambdaGbSecondArm);
    report({
      name: `${applications} applications: the change feed's 10-second loop, dollars a month`,
      value: `${loopMonth.toFixed(2)} (Step Functions Express ${sfn.toFixed(2)}; a function awake all minute ${sleeper.toFixed(2)})`,
      unit: "$",
      method: `${method}; the month with the loop less the same month without it (${Math.round(loopTicks).toLocaleString("en")} ticks: invocations, GB-seconds, logs, its queue's requests), and what DynamoDB Local reported its ticks consumed of dispatch's items (the lease and dispatch's state: ${((loopUnits.write * MONTH_HOURS) / HOURS / 1e6).toFixed(2)} M write and ${((loopUnits.read * MONTH_HOURS) / HOURS / 1e6).toFixed(2)} M read units a month, $${loopDynamo.toFixed(2)}; the records its reads stored are the polls', counted with the rest). ` +
        `In brackets, the same ticks driven otherwise: a Step Functions Express execution each minute waiting 10 s between 6 invocations ($1 per million executions, 60 s at 64 MB at $0.00001667 per GB-second) in place of the queue, ` +
        `or one invocation each minute at ${FUNCTIONS.feedTick.mb} MB that does the 6 ticks and sleeps between them (60 s billed)`,
    });
    report({ name: `${applications} applications: dollars a month per 100 services`, value: ((total * 100) / applications).toFixed(2), unit: "$", method: `${steady}; target ≤ $1 a month per 100 services: ${(total * 100) / applications <= 1 ? "met" : "not met"}` });
    report({ name: `${applications} applications: dollars in the first month`, value: firstMonth.toFixed(2), unit: "$", method: `${method}; storage of half a month's growth` });
    report({ name: `${applications} applications: with retention_routine: ${RETENTION_DAYS}d, dollars a month`, value: keptAll.toFixed(2), unit: "$", method: `${method}; everything kept the default ${RETENTION_DAYS} days` });
    report({
      name: `${applications} applications: stored a month, records that raised nothing / the rest`,
      value: `${((stored.routine * MONTH_HOURS) / HOURS / 1024 ** 3).toFixed(2)} / ${((stored.kept * MONTH_HOURS) / HOURS / 1024 ** 3).toFixed(2)}`, unit: "GB",
      method: `${method}; the table's items and audit index entries written over the period (DynamoDB's billed sizes, 100 bytes of overhead each), scaled`,
    });
    report({
      name: `${applications} applications: stored a month by item`,
      value: storedByItem.sort((a, b) => b[1] - a[1]).slice(0, 4)
        .map(([item, bytes]) => `${ITEM_NAMES[item] ?? item} ${((bytes * MONTH_HOURS) / HOURS / 1024 ** 3).toFixed(2)} GB`).join("; "),
      method: `${method}; the items and their audit index entries written over the period, by the key of the item, scaled`,
    });
    report({
      name: `${applications} applications: DynamoDB writes by item`,
      value: Object.entries(r.dynamoUnits.writesByItem).sort((a, b) => b[1] - a[1]).slice(0, 4)
        .map(([item, units]) => `${ITEM_NAMES[item] ?? item} $${((units * MONTH_HOURS) / HOURS * PRICES.dynamoWru).toFixed(2)}`).join("; "),
      method: `${method}; write units as DynamoDB Local reported them, by the key of the item written (a transaction by its first item); records: ${(
        (r.dynamoUnits.writesByItem.REC ?? 0) / Math.max(1, r.newRecords)).toFixed(1)} units a new record (the item and its audit index entries)`,
    });
    report({
      name: `${applications} applications: dollars a month if the product chose otherwise`,
      value: choices.map(([what, dollars]) => `${what} $${dollars.toFixed(2)}`).join("; "),
      method: `${method}; cumulative: point-in-time recovery off; then failures, deployments and alerts kept 90 days instead of ${RETENTION_DAYS}; then no table writes or storage (the rest of the stack alone)`,
    });
    report({
      name: `${applications} applications: what dominates`,
      value: top.slice(0, 3).map((l) => `${l.item} $${l.dollars.toFixed(2)}`).join("; "),
      method: `${method}; ${steady}`,
    });
  }
  // Nothing watched: the schedules, the idle queues, the alarms and the key.
  const idle: DayResult = { ...EMPTY_DAY, ticks: 60 };
  const floor = monthlyCost(idle, 1, 0);
  report({
    name: "0 applications: the fixed floor, dollars a month", value: floor.total.toFixed(2), unit: "$",
    method: `dispatch every minute with nothing to poll, the queues polled idle, the alarms and the key; target ≤ $2: ${floor.total <= 2 ? "met" : "not met"}; ` +
      floor.lines.filter((l) => l.dollars >= 0.01).sort((a, b) => b.dollars - a.dollars).map((l) => `${l.item} $${l.dollars.toFixed(2)}`).join("; "),
  });
}
