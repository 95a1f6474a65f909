/**
 * Before each integration test file loads: its database on the run's DynamoDB Local
 * (test/support/dynamodb-lease.ts). Listed after test/support/env-setup.ts, whose copy of the environment
 * is taken first, so what the lease sets is given back after the file too.
 */
import { leaseFileDatabase } from "./dynamodb-lease.js";

await leaseFileDatabase();
