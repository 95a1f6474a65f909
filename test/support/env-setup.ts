/**
 * Before each test file, both projects: the environment as it was before the file, given back after it.
 * Files share their worker's process and modules (vitest.config.ts, isolate: false), so what one sets in
 * process.env is not left to the next.
 */
import { afterAll } from "vitest";

const env = { ...process.env };
afterAll(() => {
  for (const k of Object.keys(process.env)) if (!(k in env)) delete process.env[k];
  Object.assign(process.env, env);
});
