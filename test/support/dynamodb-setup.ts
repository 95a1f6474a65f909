/** Before each test file loads: its database on the run's DynamoDB Local (test/support/dynamodb.ts). */
import { leaseFileDatabase } from "./dynamodb.js";

await leaseFileDatabase();
