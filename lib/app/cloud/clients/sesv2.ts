/**
 * The function's SES v2 client, one per container, made as the bundle loads: in Lambda's init phase, which
 * runs with a burst of CPU (docs/deploy.md, "Packaging without an account"). Its own module, so that only
 * the functions and chunks that use it load it; pure, so that a bundle that imports it unused drops it.
 * The SDK fixes its endpoint, region and credentials at its first request: a process that imports it
 * in-process (a test) points it at one endpoint for its whole life.
 */
import { SESv2Client } from "@aws-sdk/client-sesv2";

// One attempt a send, and an answer within 10 s (as every receiver's): SendEmail is not idempotent, so
// the transport retries it (lib/notify/email/transport.ts); the SDK's default would wait for ever.
export const sesv2 = /* @__PURE__ */ new SESv2Client({ maxAttempts: 1, requestHandler: { requestTimeout: 10_000, throwOnRequestTimeout: true } });
