/** The audit API's reader in the cloud: the table named by TABLE_NAME. */
import { AuditTrail, type AuditReader } from "../../audit/trail.js";
import { DynamoAuditItems } from "../../store/audit-store.js";
import { coldStart } from "./container.js";
import { cloudTable } from "./adapters.js";

export const cloudAuditReader = coldStart((): AuditReader => {
  const { dynamodb, tableName } = cloudTable();
  return new AuditTrail(new DynamoAuditItems({ client: dynamodb, tableName }));
});
