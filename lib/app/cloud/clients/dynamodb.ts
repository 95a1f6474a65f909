/**
 * The function's DynamoDB client, one per container, made as the bundle loads: in Lambda's init phase, which
 * runs with a burst of CPU (docs/deploy.md, "Packaging without an account"). Its own module, so that only
 * the functions and chunks that use it load it; pure, so that a bundle that imports it unused drops it.
 * The SDK fixes its endpoint, region and credentials at its first request: a process that imports it
 * in-process (a test) points it at one endpoint for its whole life.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";

export const dynamodb = /* @__PURE__ */ new DynamoDBClient({});
