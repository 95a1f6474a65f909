/** Moving dispatch a minute on, for the tests of the packaged stack (the functions read the real clock). */
import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { DISPATCH_NAME } from "../../lib/dispatch/source-state.js";
import { keys } from "../../lib/model/items.js";
import { decodeDispatchState, encodeDispatchState } from "../../lib/store/dispatch-store.js";

const MINUTE = 60_000;

/**
 * A minute later, as far as dispatch can tell: the sources' last polls in the dispatch state a table
 * holds are moved a minute back (the functions read the real clock, and a test does not wait out the
 * minute), and so is the request budget's window.
 */
export async function aMinuteLater(doc: DynamoDBDocumentClient, table: string): Promise<void> {
  const key = keys.dispatch(DISPATCH_NAME);
  const tables = (await doc.send(new ListTablesCommand({}))).TableNames ?? [];
  if (!tables.includes(table)) return; // not made yet: nothing polled
  const { Item } = await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }));
  if (!Item) return;
  // Through the store's own codec (its sources are kept gzipped).
  const state = decodeDispatchState(Item as Parameters<typeof decodeDispatchState>[0]);
  const back = (v: number | undefined) => (v === undefined ? v : v - MINUTE);
  for (const st of Object.values(state.sources)) {
    st.last_polled_at = back(st.last_polled_at);
    if (st.next_allowed_at) st.next_allowed_at = back(st.next_allowed_at);
  }
  state.last_tick_at = back(state.last_tick_at);
  state.budget = { ...state.budget, at: state.budget.at - MINUTE, minutes: state.budget.minutes.map(([m, n]) => [m - 1, n]) };
  await doc.send(new PutCommand({ TableName: table, Item: { ...Item, ...encodeDispatchState(state) } }));
}

