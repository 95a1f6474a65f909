/** The in-memory DispatchStore against the port's contract (test/support/dispatch-store-contract.ts). */
import { MemoryDispatchStore } from "../../../../lib/store/memory/dispatch-store.js";
import { dispatchStoreContract } from "../../../support/dispatch-store-contract.js";

// One store: in memory there is no second client of the same storage.
const store = new MemoryDispatchStore();
dispatchStoreContract("in memory", () => store);
