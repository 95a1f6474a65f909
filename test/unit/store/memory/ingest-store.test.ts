/** The in-memory IngestStore against the port's contract (test/support/ingest-store-contract.ts). */
import { MemoryIngestStore } from "../../../support/memory-ingest-store.js";
import { NOW, RETENTION_MS, ingestStoreContract } from "../../../support/ingest-store-contract.js";

ingestStoreContract("in memory", () => {
  const store = new MemoryIngestStore({ retentionMs: RETENTION_MS, now: () => NOW });
  return { store, scan: async () => store.scan(), refusesUnwritable: false };
});
