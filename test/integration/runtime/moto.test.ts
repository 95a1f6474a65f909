/**
 * moto_server that never answers is a start-up problem said in one line (cloud-local, the tests), not a
 * stack trace: MOTO_ENDPOINT pointing at nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startMoto } from "../../../local/runtime/moto.js";
import { PreflightError } from "../../../local/runtime/preflight.js";
import { failureLines } from "../../../local/cli/shared.js";

describe("moto_server at MOTO_ENDPOINT, not answering", () => {
  const saved = process.env.MOTO_ENDPOINT;
  afterEach(() => {
    if (saved === undefined) delete process.env.MOTO_ENDPOINT;
    else process.env.MOTO_ENDPOINT = saved;
  });

  it("is one line that says where it looked and what to do", async () => {
    process.env.MOTO_ENDPOINT = "http://127.0.0.1:1";
    const err = await startMoto({ readyTimeoutMs: 300 }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(PreflightError);
    expect(failureLines("cloud-local", err)).toEqual([
      "lookout cloud-local: moto_server did not answer at http://127.0.0.1:1 within 0.3 s; is it running there? (unset MOTO_ENDPOINT to have one started here)",
    ]);
  });
});
