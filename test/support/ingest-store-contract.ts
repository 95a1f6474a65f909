/**
 * What every IngestStore adapter does (lib/model/ingest-store.ts), run against each of them:
 * test/unit/store/memory/ingest-store.test.ts and test/integration/store/ingest-store.test.ts.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type ExecutionDecider, type IngestStore, type OrganizationNames, RecordUnwritable, type SourceCursor, type StoredExecution } from "../../lib/model/ingest-store.js";
import type { LookoutEventDetail } from "../../lib/model/event.js";
import type { AlertItem } from "../../lib/model/alert-item.js";
import type { IncidentState } from "../../lib/model/transitions.js";
import { newAlertItem } from "../../lib/alerts/outbox-item.js";
import { recordItem } from "../../lib/model/items.js";
import { normalizeDeployment, normalizeWebhookDelivery } from "../../lib/poll/normalize.js";
import { setAside } from "../../lib/alerts/quarantine.js";
import { EXAMPLE_DETAILS } from "../fixtures/event-examples.js";

export const NOW = new Date("2026-03-02T10:00:00Z");
/** Long: DynamoDB Local enforces TTL, and NOW is in the past (test/support/dynamodb.ts, TEST_RETENTION_MS). */
export const RETENTION_MS = 100 * 365 * 86_400_000;

export interface IngestStoreUnderTest {
  store: IngestStore;
  /** Every item stored, as a scan of the table gives. */
  scan(): Promise<Array<Record<string, unknown>>>;
  /** Whether it refuses what DynamoDB cannot hold (nesting past 32 levels): memory holds anything. */
  refusesUnwritable: boolean;
}

const ORG = "0a000000-0000-4000-8000-000000000000";
const alertOf = (id: string, store: IngestStore): AlertItem =>
  newAlertItem({ ...EXAMPLE_DETAILS["Deployment Failed"], id } as LookoutEventDetail, NOW.toISOString(), store.expiresAt());
const delivery = (id: string) =>
  recordItem(normalizeWebhookDelivery({ id, target_response_status_code: 502 }, { kind: "webhook", organizationId: ORG, id: "w" }), undefined, NOW.toISOString());
const observation = (serviceId: string, executionId: string, status: string) =>
  normalizeDeployment({ identifier: { service_id: serviceId, execution_id: executionId }, status }, { kind: "deployment", organizationId: ORG, id: serviceId });
const execution = (serviceId: string, executionId: string, status: string): Omit<StoredExecution, "version"> => ({
  status, first_seen_at: NOW.toISOString(), first_seen_status: status, entered: [{ status, times: 1 }],
  observation: observation(serviceId, executionId, status), history: [{ status, observed_at: NOW.toISOString() }],
});

/** A value nested past the 32 levels DynamoDB holds. */
const tooDeep = (): unknown => Array.from({ length: 40 }).reduce<unknown>((inner) => ({ inner }), "bottom");

/** `open()` gives a store (and a way to see its items) with `now` as its clock and RETENTION_MS. */
export function ingestStoreContract(adapter: string, open: () => IngestStoreUnderTest): void {
  describe(`IngestStore contract: ${adapter}`, () => {
    it("saves a cursor once per version: a save on a stale version, or a second first save, is refused", async () => {
      const { store } = open();
      const source = `webhook:${ORG}/${randomUUID()}`;
      expect(await store.getCursor(source)).toBeUndefined();
      const first: SourceCursor = { source, version: 1, seen: ["a"], first_polled_at: NOW.toISOString() };
      expect(await store.saveCursor(first, undefined)).toBe(true);
      expect(await store.saveCursor({ ...first, seen: ["other"] }, undefined)).toBe(false);
      const second = { ...first, version: 2, seen: ["a", "b"] };
      expect(await store.saveCursor(second, 1)).toBe(true);
      expect(await store.saveCursor({ ...first, version: 2, seen: ["late"] }, 1)).toBe(false);
      expect(await store.getCursor(source)).toEqual(second);
    });

    it("keeps seen parts by their hash beside the cursor: read back, absent once deleted or never written", async () => {
      const { store, scan } = open();
      const source = `cluster:${ORG}/${randomUUID()}`;
      const ids = Array.from({ length: 5_000 }, (_, i) => `hash-${i}`);
      await store.putSeenParts(source, [{ part: "p1", ids }, { part: "p2", ids: ["x"] }]);
      await store.putSeenParts(source, [{ part: "p1", ids }]); // the same part again: the same item
      expect(await store.getSeenParts(source, ["p1", "p2", "never"])).toEqual(new Map([["p1", ids], ["p2", ["x"]]]));
      expect((await scan()).filter((i) => i.item_type === "seen" && String(i.pk).includes(source))).toHaveLength(2);
      await store.deleteSeenParts(source, ["p1"]);
      expect([...(await store.getSeenParts(source, ["p1", "p2"])).keys()]).toEqual(["p2"]);
    });

    it("saves an incident once per version, with its watermark's nanoseconds, as an item of its own", async () => {
      const { store, scan } = open();
      const subject = `webhook:${randomUUID()}:hooks.acme.io`;
      expect(await store.getIncident(subject)).toBeUndefined();
      const first: IncidentState = {
        subject, version: 1,
        open: {
          incident_id: "alert-1", opened_at: NOW.toISOString(), failures: 1, last_failure_at: NOW.toISOString(), last_signature: "502",
          refs: { service: { id: "svc-1", name: "api" } },
        },
        watermark: { at: { ms: NOW.getTime(), nanos: 123_456 }, id: "dl-1" },
      };
      expect(await store.saveIncident(first, undefined)).toBe(true);
      expect(await store.saveIncident({ ...first, open: undefined }, undefined)).toBe(false);
      const closed: IncidentState = { subject, version: 2, watermark: { at: { ms: NOW.getTime() + 1, nanos: 0 }, id: "dl-2" } };
      expect(await store.saveIncident(closed, 1)).toBe(true);
      expect(await store.saveIncident({ ...first, version: 2 }, 1)).toBe(false);
      expect(await store.getIncident(subject)).toEqual(closed);
      expect((await scan()).filter((i) => i.item_type === "incident" && (i.state as IncidentState).subject === subject)).toHaveLength(1);
    });

    it("inserts a record once, and a record with its alert both or neither", async () => {
      const { store, scan } = open();
      const [a, b, c] = [delivery(randomUUID()), delivery(randomUUID()), delivery(randomUUID())];
      expect(await store.insertRecord(a)).toBe("inserted");
      expect(await store.insertRecord(a)).toBe("exists");

      const alert = alertOf(randomUUID(), store);
      expect(await store.insertRecord(b, alert)).toBe("inserted");
      // The alert is in the outbox already: the record beside it is not stored either.
      expect(await store.insertRecord(c, alert)).toBe("exists");
      const items = await scan();
      expect(items.filter((i) => i.pk === alert.pk)).toHaveLength(1);
      expect(items.some((i) => i.pk === b.pk)).toBe(true);
      expect(items.some((i) => i.pk === c.pk)).toBe(false);
      expect(await store.insertRecord(c)).toBe("inserted");
      expect(items.find((i) => i.pk === a.pk)).toMatchObject({ item_type: "record", expires_at: store.expiresAt() });
    });

    it("writes records without alerts in batches: the same item a conditional insert stores, and a rewrite changes nothing", async () => {
      const { store, scan } = open();
      const records = Array.from({ length: 60 }, () => delivery(randomUUID()));
      const writes = store.writes.count;
      expect(await store.insertRecords(records)).toEqual([]);
      // One write a record, and a few for the batches that hold them where the adapter keeps them compactly.
      expect(store.writes.count - writes).toBeGreaterThanOrEqual(60);
      expect(store.writes.count - writes).toBeLessThanOrEqual(63);
      const single = delivery(randomUUID());
      expect(await store.insertRecord(single)).toBe("inserted");
      const before = await scan();
      const find = (items: Array<Record<string, unknown>>, pk: string) => items.filter((i) => i.pk === pk);
      for (const r of records) expect(find(before, r.pk)).toEqual([{ ...r, expires_at: store.expiresAt() }]);
      // The same attributes (audit index attributes, TTL) as the conditional write's.
      expect(Object.keys(find(before, records[1]!.pk)[0]!).sort()).toEqual(Object.keys(find(before, single.pk)[0]!).sort());
      // A record stored already (by a batch or conditionally) written again, twice in one call: still one item, the same.
      expect(await store.insertRecords([records[0]!, single, records[0]!])).toEqual([]);
      const after = await scan();
      expect(find(after, single.pk)).toEqual(find(before, single.pk));
      expect(find(after, records[0]!.pk)).toEqual(find(before, records[0]!.pk));
      expect(await store.insertRecords([])).toEqual([]);
    });

    it("refuses a record or an execution it cannot hold as RecordUnwritable, nothing of the write stored (an adapter that holds anything refuses nothing)", async () => {
      const { store, scan, refusesUnwritable } = open();
      const record = { ...delivery(randomUUID()), deep: tooDeep() };
      const alert = alertOf(randomUUID(), store);
      const ref = { serviceId: randomUUID(), executionId: randomUUID() };
      const deepExecution = { ...execution(ref.serviceId, ref.executionId, "BUILD_ERROR"), observation: { ...observation(ref.serviceId, ref.executionId, "BUILD_ERROR"), deep: tooDeep() } };
      const inserting = store.insertRecord(record, alert);
      const observing = store.observeExecution(ref, () => ({ changed: true, execution: deepExecution }));
      if (!refusesUnwritable) {
        expect(await inserting).toBe("inserted");
        expect(await observing).toMatchObject({ changed: true });
        return;
      }
      await expect(inserting).rejects.toBeInstanceOf(RecordUnwritable);
      await expect(observing).rejects.toBeInstanceOf(RecordUnwritable);
      const items = await scan();
      expect(items.filter((i) => i.pk === record.pk || i.pk === alert.pk)).toEqual([]);
      expect(items.filter((i) => i.item_type === "execution" && (i.state as StoredExecution).observation.service_id === ref.serviceId)).toEqual([]);
    });

    it("raises an alert once", async () => {
      const { store, scan } = open();
      const alert = alertOf(randomUUID(), store);
      expect(await store.raiseAlert(alert)).toBe(true);
      expect(await store.raiseAlert({ ...alert, state: "suppressed" })).toBe(false);
      expect((await scan()).find((i) => i.pk === alert.pk)).toMatchObject({ state: "pending", alert_id: alert.alert_id });
    });

    it("observes an execution: the decider sees what is stored, versions count up, no change writes nothing", async () => {
      const { store, scan } = open();
      const ref = { serviceId: randomUUID(), executionId: randomUUID() };
      const seen: Array<[StoredExecution | undefined, number]> = [];
      const to = (status: string, failing: boolean): ExecutionDecider<string> => (prev, svc) => {
        seen.push([prev, svc.version]);
        if (prev?.status === status) return { changed: false };
        return { changed: true, execution: execution(ref.serviceId, ref.executionId, status), service: { ...svc, failing }, outcome: status };
      };
      expect(await store.observeExecution(ref, to("BUILDING", false))).toEqual({ changed: true, outcome: "BUILDING" });
      expect(await store.observeExecution(ref, to("BUILD_ERROR", true))).toEqual({ changed: true, outcome: "BUILD_ERROR" });
      const writes = store.writes.count;
      expect(await store.observeExecution(ref, to("BUILD_ERROR", true))).toEqual({ changed: false });
      expect(store.writes.count).toBe(writes);

      expect(seen.map(([prev, svcVersion]) => [prev?.status, prev?.version, svcVersion])).toEqual([
        [undefined, undefined, 0], ["BUILDING", 1, 1], ["BUILD_ERROR", 2, 2],
      ]);
      expect(seen[2]![0]).toMatchObject({ ...execution(ref.serviceId, ref.executionId, "BUILD_ERROR"), version: 2 });
      const items = await scan();
      expect(items.filter((i) => i.item_type === "execution" && (i.state as StoredExecution).observation.service_id === ref.serviceId))
        .toEqual([expect.objectContaining({ version: 2 })]);
    });

    it("keeps an execution's audit row in its audit index attributes", async () => {
      const { store, scan } = open();
      const ref = { serviceId: randomUUID(), executionId: randomUUID() };
      const at = NOW.toISOString();
      await store.observeExecution(ref, () => ({
        changed: true, execution: execution(ref.serviceId, ref.executionId, "DEPLOYED"),
        audit: {
          type: "execution", kind: "deployment", id: `${ref.serviceId}:${ref.executionId}`, at, observed_at: at, organization: ORG,
          service: { id: ref.serviceId }, summary: "api deployed",
        },
      }));
      const item = (await scan()).find((i) => i.item_type === "execution" && (i.row as { id?: string } | undefined)?.id === `${ref.serviceId}:${ref.executionId}`);
      // The row on the item; what filters read of it (and no more) where every index entry repeats it.
      expect(item).toMatchObject({ row: { type: "execution", service: { id: ref.serviceId } }, ix_at: expect.any(String) });
      expect(item!.audit).toEqual({ type: "execution", kind: "deployment" });
    });

    it("writes the change without an alert already in the outbox, deciding again", async () => {
      const { store, scan } = open();
      const ref = { serviceId: randomUUID(), executionId: randomUUID() };
      const alert = alertOf(randomUUID(), store);
      await store.raiseAlert(alert);
      let decided = 0;
      const res = await store.observeExecution(ref, (_prev, svc) => {
        decided++;
        return { changed: true, execution: execution(ref.serviceId, ref.executionId, "BUILD_ERROR"), service: { ...svc, failing: true }, alert, outcome: "raised" };
      });
      expect(res).toEqual({ changed: true, alertExisted: true });
      expect(decided).toBe(2);
      const items = await scan();
      expect(items.some((i) => i.item_type === "execution" && (i.state as StoredExecution).observation.execution_id === ref.executionId)).toBe(true);
      expect(items.find((i) => i.item_type === "service" && String(i.pk).includes(ref.serviceId))).toMatchObject({ version: 1, state: { failing: true } });
    });

    it("records one transition once however many observe it at once", async () => {
      const { store, scan } = open();
      const ref = { serviceId: randomUUID(), executionId: randomUUID() };
      const alert = alertOf(randomUUID(), store);
      const decide: ExecutionDecider<AlertItem> = (prev, svc) =>
        prev?.status === "BUILD_ERROR"
          ? { changed: false }
          : { changed: true, execution: execution(ref.serviceId, ref.executionId, "BUILD_ERROR"), service: { ...svc, failing: true }, alert, outcome: alert };
      const results = await Promise.all(Array.from({ length: 10 }, () => store.observeExecution(ref, decide)));
      expect(results.filter((r) => r.outcome)).toHaveLength(1);
      expect(results.filter((r) => r.changed)).toHaveLength(1);
      expect((await scan()).filter((i) => i.pk === alert.pk)).toHaveLength(1);
    });

    it("learns service names, writing only what differs from what is known", async () => {
      const { store } = open();
      const id = randomUUID();
      const other = randomUUID();
      expect(await store.getServiceContexts([id])).toEqual(new Map());
      expect(await store.learnServices([])).toBe(0);
      expect(await store.learnServices([{ id, ctx: { name: "api" } }])).toBe(1);
      expect(await store.learnServices([{ id, ctx: { name: "api" } }])).toBe(0);
      const writes = store.writes.count;
      expect(await store.learnServices([
        { id, ctx: { project: { id: "p1", name: "shop" } } },
        { id, ctx: { environment: { id: "e1" } } },
        { id: other, ctx: { name: "web" } },
      ])).toBe(3);
      expect(store.writes.count).toBe(writes + 3);
      expect(await store.getServiceContexts([id, other, id, randomUUID()])).toEqual(new Map([
        [id, { name: "api", project: { id: "p1", name: "shop" }, environment: { id: "e1" } }],
        [other, { name: "web" }],
      ]));
    });

    it("keeps an organization's names, the last save winning, apart from other organizations", async () => {
      const { store } = open();
      const [org, other] = [randomUUID(), randomUUID()];
      expect(await store.getOrganizationNames(org)).toBeUndefined();
      const names: OrganizationNames = {
        organization_id: org, projects: [{ id: "p1", name: "shop" }], members: [{ id: "u1", name: "Ada", email: "ada@example.test" }],
        refreshed_at: NOW.toISOString(), refresh_after: new Date(NOW.getTime() + 3_600_000).toISOString(),
      };
      const writes = store.writes.count;
      await store.saveOrganizationNames(names);
      await store.saveOrganizationNames({ ...names, projects: [{ id: "p1", name: "shop v2" }] });
      expect(store.writes.count).toBe(writes + 2);
      expect(await store.getOrganizationNames(org)).toEqual({ ...names, projects: [{ id: "p1", name: "shop v2" }] });
      expect(await store.getOrganizationNames(other)).toBeUndefined();
    });

    it("quarantines a thing once, with its health alert", async () => {
      const { store, scan } = open();
      const id = randomUUID();
      const entry = {
        stage: "ingest" as const, kind: "webhook_delivery", id, source: `webhook:${ORG}/w`, organization: ORG,
        reason: "DynamoDB refused the write", content: { id },
      };
      expect(await setAside(store, entry, NOW)).toBe(true);
      expect(await setAside(store, entry, NOW)).toBe(false);
      const items = await scan();
      const kept = items.filter((i) => i.item_type === "quarantine" && i.subject_id === id);
      expect(kept).toHaveLength(1);
      expect(items.filter((i) => i.item_type === "alert" && i.alert_id === kept[0]!.health_alert_id)).toHaveLength(1);
    });

    it("counts what it writes, and expires what it writes a retention after now", async () => {
      const { store, scan } = open();
      expect(store.expiresAt()).toBe(Math.floor((NOW.getTime() + RETENTION_MS) / 1000));
      const before = store.writes.count;
      const source = `cluster:${ORG}/${randomUUID()}`;
      await store.saveCursor({ source, version: 1, first_polled_at: NOW.toISOString() }, undefined);
      await store.insertRecord(delivery(randomUUID()), alertOf(randomUUID(), store));
      await store.raiseAlert(alertOf(randomUUID(), store));
      expect(store.writes.count).toBe(before + 4);
      expect((await scan()).find((i) => i.item_type === "cursor" && (i.cursor as SourceCursor).source === source))
        .toMatchObject({ version: 1, expires_at: store.expiresAt() });
    });
  });
}
