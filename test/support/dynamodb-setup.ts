/** Before each test file loads: its database on the run's DynamoDB Local (test/support/dynamodb-lease.ts). */
import { leaseFileDatabase } from "./dynamodb-lease.js";

await leaseFileDatabase();
