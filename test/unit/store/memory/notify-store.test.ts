/** The in-memory NotifyStore against the adapters' contract. */
import { MemoryNotifyStore } from "../../../support/memory-notify-store.js";
import { notifyStoreContract } from "../../../support/notify-store-contract.js";

notifyStoreContract("in memory", async (now) => {
  const store = new MemoryNotifyStore({ now });
  return { store, raiseAlert: async (detail) => store.putAlert(detail) };
});
