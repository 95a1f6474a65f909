/** The ConfigError a configuration text fails with, as its message; a test fails if it loads. */
import { expect } from "vitest";
import { ConfigError, parseConfig } from "../../lib/config/load.js";

export function configProblem(text: string, source = "lookout.yaml"): string {
  try {
    parseConfig(text, source, {});
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
}
