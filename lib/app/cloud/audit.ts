/** The audit API's reader in the cloud: the table named by TABLE_NAME. */
import { DynamoAuditStore, type AuditReader } from "../../audit/dynamo.js";
import { coldStart } from "./container.js";
import { cloudTable } from "./table.js";

export const cloudAuditReader = coldStart((): AuditReader => {
  const { dynamodb, tableName } = cloudTable();
  return new DynamoAuditStore({ client: dynamodb, tableName });
});
