/** WATCHED_QUEUES as dispatch reads it: a malformed value names what is wrong, and never stops polling. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { watchedQueues } from "../../../../lib/app/cloud/queue-gauge.js";

describe("WATCHED_QUEUES", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it("names what is wrong, and where", () => {
    expect(() => watchedQueues("nope")).toThrow(/^environment variable WATCHED_QUEUES is not JSON: /);
    expect(() => watchedQueues('[{"queue":"PollQueue","dead_letter":false,"what":"polls"}]')).toThrow("environment variable WATCHED_QUEUES: at 0.url: ");
    expect(() => watchedQueues('{"queue":"PollQueue"}')).toThrow("environment variable WATCHED_QUEUES: at the top: ");
    expect(watchedQueues('[{"queue":"PollQueue","url":"https://sqs.us-east-1.amazonaws.com/1/q","dead_letter":false,"what":"polls"}]')).toEqual([
      { queue: "PollQueue", url: "https://sqs.us-east-1.amazonaws.com/1/q", dead_letter: false, what: "polls" },
    ]);
  });

  it("malformed in a deployed function: a gauge whose every sample fails with the error, so the tick still plans and queues its polls", async () => {
    vi.stubEnv("WATCHED_QUEUES", "[{");
    const { cloudQueueGauge } = await import("../../../../lib/app/cloud/queue-gauge.js");
    const gauge = await cloudQueueGauge();
    await expect(gauge!.sample()).rejects.toThrow(/WATCHED_QUEUES is not JSON/);
  });

  it("absent: nothing watched", async () => {
    vi.stubEnv("WATCHED_QUEUES", "");
    const { cloudQueueGauge } = await import("../../../../lib/app/cloud/queue-gauge.js");
    expect(await cloudQueueGauge()).toBeUndefined();
  });
});
