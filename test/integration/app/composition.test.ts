/**
 * One composition root (lib/app): the deployed functions' runtime and `lookout run`'s pipeline, built
 * from the same configuration, hand polling and notifying the same facts — configured names of
 * applications and clusters, backfill window, retention, routes, notify settings. The cloud side is the
 * real lib/app/cloud (the functions' cold start: poll's ingest, dispatch's, and the Slack function's notify) with the AWS SDK pointed at DynamoDB Local
 * (AWS_ENDPOINT_URL_DYNAMODB); the local side is local/runtime/pipeline.ts on the same DynamoDB Local.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Logger } from "@aws-lambda-powertools/logger";
import { cloudIngest as cloudRuntime } from "../../../lib/app/cloud/ingest.js";
import { cloudDispatch } from "../../../lib/app/cloud/dispatch.js";
import type { IngestServices as CloudRuntime } from "../../../lib/app/ingest.js";
import { cloudSlackNotify as notifyRuntime } from "../../../lib/app/cloud/slack.js";
import { cloudEmailNotify } from "../../../lib/app/cloud/email.js";
import type { NotifyHandlerDeps } from "../../../lib/app/lambda/notify.js";
import { openLocalPipeline, type LocalPipeline } from "../../../local/runtime/pipeline.js";
import { loadConfigFile } from "../../../lib/config/load.js";
import { deploymentDetail } from "../../../lib/alerts/build.js";
import { routeEvent } from "../../../lib/routes/match.js";
import { freshTable, dynamodbEndpoint } from "../../support/dynamodb.js";

const ORG = "5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01";
const API = "3f2e1d0c-9b8a-4765-8432-10fedcba9876";
const WEB = "4a3b2c1d-0e9f-4a8b-9c7d-6e5f4a3b2c1d";
const CLUSTER = "1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9";
const BARE_CLUSTER = "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f";
const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), "lookout-compose-"));
const file = join(dir, "lookout.yaml");
writeFileSync(
  file,
  `platform: { url: "http://127.0.0.1:9", token: "env:COMPOSE_TOKEN", timeout: 7s, max_response_size: 3MB }
watch:
  - organization: ${ORG}
    name: acme
    clusters: [{ id: ${CLUSTER}, name: eu-prod }, ${BARE_CLUSTER}]
    applications:
      - { id: ${API}, name: api, project: shop, environment: production }
      - ${WEB}
backfill_window: 42m
retention: 90d
incidents: { cluster_quiet_period: 12m }
data_dir: ${join(dir, "data")}
routes:
  - name: prod
    match: { kind: deployment, environment: production }
    slack: { channel: "#oncall", token: env:SLACK_BOT_TOKEN }
    severity: { production: critical }
    mention: "@here"
notify:
  slack_rate: { per_second: 2, burst: 7 }
  links: { console: "https://console.example/{service.id}" }
`,
);

const saved = { ...process.env };
let cloud: CloudRuntime;
let cloudNotify: NotifyHandlerDeps;
let local: LocalPipeline;

beforeAll(async () => {
  const { tableName } = await freshTable("compose");
  const endpoint = dynamodbEndpoint();
  // What serverless.yml gives the functions, and the SDK pointed at DynamoDB Local.
  Object.assign(process.env, {
    LOOKOUT_CONFIG_FILE: file, TABLE_NAME: tableName, COMPOSE_TOKEN: "t-compose", SLACK_BOT_TOKEN: "xoxb-compose",
    AWS_ENDPOINT_URL_DYNAMODB: endpoint, AWS_REGION: "us-east-1", AWS_ACCESS_KEY_ID: "local", AWS_SECRET_ACCESS_KEY: "local",
  });
  const logger = new Logger({ serviceName: "compose-test", logLevel: "SILENT" });
  [cloud, cloudNotify] = await Promise.all([cloudRuntime(logger), notifyRuntime(logger)]);
  local = await openLocalPipeline(loadConfigFile(file), {
    env: { ...process.env, DYNAMODB_ENDPOINT: endpoint, LOOKOUT_TABLE: tableName },
    log: { info() {}, warn() {}, error() {} },
  });
});
afterAll(async () => {
  await local?.close();
  process.env = saved;
});

describe("the cloud and one machine are built by one composition root", () => {
  it("polls get the same configured names, cluster names, backfill window and watchlist", () => {
    expect(cloud.pollDeps.configured).toEqual(local.pollDeps.configured);
    expect(cloud.pollDeps.configured!.get(API)).toEqual({
      name: "api", project: { id: "shop", name: "shop" }, environment: { id: "production", name: "production" },
    });
    expect(cloud.pollDeps.configured!.has(WEB)).toBe(false);
    expect(cloud.pollDeps.clusterNames).toEqual(local.pollDeps.clusterNames);
    expect([...cloud.pollDeps.clusterNames!]).toEqual([[CLUSTER, "eu-prod"]]);
    expect(cloud.pollDeps.organizationNames).toEqual(local.pollDeps.organizationNames);
    expect([...cloud.pollDeps.organizationNames!]).toEqual([[ORG, "acme"]]);
    expect(cloud.pollDeps.backfillWindowMs).toBe(42 * 60_000);
    expect(local.pollDeps.backfillWindowMs).toBe(42 * 60_000);
    expect(cloud.pollDeps.clusterQuietMs).toBe(12 * 60_000);
    expect(local.pollDeps.clusterQuietMs).toBe(12 * 60_000);
    expect(cloud.watch.sources).toEqual(local.watch.sources);
    expect(cloud.config).toEqual(local.config);
  });

  it("dispatch plans over the same watchlist and stores, without the platform's token", async () => {
    // Its token unset: dispatch never calls the platform, so its cold start does not read the token.
    delete process.env.COMPOSE_TOKEN;
    try {
      const dispatch = await cloudDispatch();
      expect(dispatch.watch.sources).toEqual(local.watch.sources);
      expect(dispatch.config).toEqual(cloud.config);
      expect(Object.keys(dispatch)).not.toContain("client");
      const days = (expiresAtS: number) => Math.round((expiresAtS * 1000 - Date.now()) / DAY);
      expect(days(dispatch.store.expiresAt())).toBe(90);
    } finally {
      process.env.COMPOSE_TOKEN = "t-compose";
    }
  });

  it("stores keep what they write for the configured retention, in both", () => {
    const days = (expiresAtS: number) => Math.round((expiresAtS * 1000 - Date.now()) / DAY);
    expect(days(cloud.pollDeps.store.expiresAt())).toBe(90);
    expect(days(local.pollDeps.store.expiresAt())).toBe(90);
  });

  it("notifiers get the same routes and settings", () => {
    expect(cloudNotify.routes).toEqual(local.routes);
    expect(cloudNotify.notifier.settings).toEqual(local.notifier.settings);
    expect(cloudNotify.notifier.settings.slackRate).toMatchObject({ perSecond: 2, burst: 7 });
  });

  it("the email function's entry point composes the same routes and settings as the Slack function's", async () => {
    const email = await cloudEmailNotify(new Logger({ serviceName: "compose-test", logLevel: "SILENT" }));
    expect(email.routes).toEqual(cloudNotify.routes);
    expect(email.notifier.settings).toEqual(cloudNotify.notifier.settings);
  });

  it("a route on the configured environment matches what either one would raise", () => {
    for (const deps of [cloud.pollDeps, local.pollDeps]) {
      const detail = deploymentDetail({
        obs: {
          record_kind: "deployment", organization_id: ORG, application_id: API, service_id: API, execution_id: "e-1",
          execution_id_derived: false, status: "BUILD_ERROR", created_at: "2026-03-02T14:00:00Z",
        },
        transition: "failed",
        ctx: deps.configured!.get(API)!,
        observedAt: "2026-03-02T14:01:00Z",
      });
      expect(routeEvent(detail, deps === cloud.pollDeps ? cloudNotify.routes : local.routes).map((d) => d.route.name)).toEqual(["prod"]);
      // Both notifiers present it as the configuration says: the route's severity, mention and links.
      const shown = { ...detail, environment: { ...detail.environment!, type: "PRODUCTION" } };
      for (const present of [cloudNotify.notifier.present!, local.notifier.present!]) {
        expect(present(shown, "prod")).toEqual({ severity: "critical", mentions: ["<!here>"], links: [{ label: "console", url: `https://console.example/${API}` }] });
      }
    }
  });
});
