import { describe, expect, it } from "vitest";
import { REDACTED, redact, redactText, redactUrl } from "../../lib/ingest/redact.js";

describe("redaction", () => {
  it("redacts secret-like keys at any depth", () => {
    const out = redact({
      headers: { "X-Lookout-Signature": "shh", "X-Hub-Secret": "s", Authorization: "Token abc", "Content-Type": "application/json" },
      payload: { db: { password: "p", api_key: "k", token_count_ok: undefined, name: "api" } },
      list: [{ secret: "x" }],
    });
    expect(out.headers["X-Lookout-Signature"]).toBe(REDACTED);
    expect(out.headers["X-Hub-Secret"]).toBe(REDACTED);
    expect(out.headers.Authorization).toBe(REDACTED);
    expect(out.headers["Content-Type"]).toBe("application/json");
    expect(out.payload.db.password).toBe(REDACTED);
    expect(out.payload.db.api_key).toBe(REDACTED);
    expect(out.payload.db.name).toBe("api");
    expect(out.list[0]!.secret).toBe(REDACTED);
  });

  it("removes credentials from URLs", () => {
    expect(redactUrl("https://user:pass@hooks.example.com/x?token=abc&team=a")).toBe(
      "https://%5BREDACTED%5D@hooks.example.com/x?token=%5BREDACTED%5D&team=a",
    );
    expect(redactUrl("https://hooks.example.com/x?team=a")).toBe("https://hooks.example.com/x?team=a");
    expect(redactUrl("not a url")).toBe("not a url");
  });

  it("redacts tokens inside free text", () => {
    const text = "call https://x.io/h?access_token=s3cr3t with Bearer abcdefghijkl and eyJhbGciOi.eyJzdWIiOiIx.c2lnbmF0dXJl";
    const out = redactText(text);
    expect(out).not.toContain("s3cr3t");
    expect(out).not.toContain("abcdefghijkl");
    expect(out).not.toContain("eyJhbGciOi");
  });

  it("keeps a key named __proto__ as data (JSON may carry one), never as a prototype", () => {
    const out = redact(JSON.parse('{"__proto__": {"password": "p", "name": "x"}, "ok": 1}') as Record<string, unknown>);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(["__proto__", "ok"]);
    expect(Object.getOwnPropertyDescriptor(out, "__proto__")!.value).toEqual({ password: REDACTED, name: "x" });
  });

  it("does not touch the input", () => {
    const input = { password: "p" };
    redact(input);
    expect(input.password).toBe("p");
  });
});
