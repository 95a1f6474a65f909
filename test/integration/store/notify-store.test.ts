/** The DynamoDB NotifyStore, on DynamoDB Local, against the adapters' contract. */
import { DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import { newAlertItem } from "../../../lib/alerts/outbox-item.js";
import { DynamoNotifyStore } from "../../../lib/store/notify-store.js";
import { freshTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";
import { notifyStoreContract } from "../../support/notify-store-contract.js";

notifyStoreContract("DynamoDB", async (now) => {
  const { client, tableName } = await freshTable("notify-store");
  const doc = DynamoDBDocumentClient.from(client);
  return {
    store: new DynamoNotifyStore({ client, tableName, retentionMs: TEST_RETENTION_MS, now }),
    raiseAlert: async (detail) => void (await doc.send(new PutCommand({ TableName: tableName, Item: newAlertItem(detail, now().toISOString(), 0) }))),
  };
});
