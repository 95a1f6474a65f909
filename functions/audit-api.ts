/** Lambda, the audit HTTP API (IAM authorization): GET /events, GET /report and GET /explain/{id} (lib/app/lambda/audit-api.ts). */
import { cloudAuditReader } from "../lib/app/cloud/audit.js";
import { createAuditApiHandler } from "../lib/app/lambda/audit-api.js";

export const handler = createAuditApiHandler(async () => ({ reader: await cloudAuditReader() }));
