/**
 * The packaging's rewrite of the AWS SDK clients' schemas (infra/sdk-schema-keys.cjs): a computed key that
 * names a string constant becomes that string. test/integration/infra/sdk-schema-keys.test.ts bundles the
 * clients' schemas both ways and compares them.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const { withStringKeys } = createRequire(import.meta.url)("../../../infra/sdk-schema-keys.cjs") as { withStringKeys: (s: string) => string };

describe("the SDK schemas' trait keys", () => {
  it("are written as the strings their constants hold, and nothing else changes", () => {
    const source = 'const _h = "http";\nconst _e = "error";\nexport var A$ = [9, n0, _A, { [_h]: ["GET", "/a", 200] }, () => B$];\nexport var E$ = [-3, n0, _E, { [_e]: _c, [other]: 1 }, [], []];\n';
    expect(withStringKeys(source)).toBe(source.replace("[_h]:", '["http"]:').replace("[_e]:", '["error"]:'));
  });
});
