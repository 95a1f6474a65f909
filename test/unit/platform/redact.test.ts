import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { REDACTED, fingerprint, isSecretKey, knownSecretsOf, redact, redactSlackTarget, redactText, redactUrl } from "../../../lib/platform/redact.js";
import { SECRET_KINDS, plantSecret, type SecretKind } from "../../support/secret-scan.js";

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

  it("removes credentials from URLs and keeps the host, path and other parameters", () => {
    expect(redactUrl("https://user:pass@hooks.example.com/x?token=abc&team=a")).toBe(
      "https://[redacted:url-credentials]@hooks.example.com/x?token=[redacted:url-credentials]&team=a",
    );
    expect(redactUrl("https://hooks.example.com/x?team=a")).toBe("https://hooks.example.com/x?team=a");
    expect(redactUrl("https://app.example.com/cb#access_token=abc&state=1")).toBe("https://app.example.com/cb#access_token=[redacted:url-credentials]&state=1");
    expect(redactUrl("https://s3.example.com/o?X-Amz-Signature=abc&X-Amz-Date=1")).toBe("https://s3.example.com/o?X-Amz-Signature=[redacted:url-credentials]&X-Amz-Date=1");
    expect(redactUrl("postgres://app:hunter22@db.internal:5432/shop")).toBe("postgres://[redacted:url-credentials]@db.internal:5432/shop");
    expect(redactUrl("not a url")).toBe("not a url");
    // One the WHATWG parser rejects is cleaned all the same.
    expect(() => new URL("http://u:p@[::1/x?token=t")).toThrow();
    expect(redactUrl("http://u:p@[::1/x?token=t")).toBe("http://[redacted:url-credentials]@[::1/x?token=[redacted:url-credentials]");
  });

  it("redacts tokens inside free text", () => {
    const text = "call https://x.io/h?access_token=s3cr3t with Bearer abcdefghijkl and eyJhbGciOi.eyJzdWIiOiIx.c2lnbmF0dXJl";
    const out = redactText(text);
    expect(out).not.toContain("s3cr3t");
    expect(out).not.toContain("abcdefghijkl");
    expect(out).not.toContain("eyJhbGciOi");
    expect(out).toBe("call https://x.io/h?access_token=[redacted:url-credentials] with Bearer [redacted:auth-token] and [redacted:jwt]");
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

describe("each kind of secret is removed and named", () => {
  const expected: Record<SecretKind, string> = {
    "password": "password=[redacted:password]",
    "aws-key": "[redacted:aws-key]",
    "aws-secret": "aws_secret_access_key=[redacted:aws-secret]",
    "github-token": "[redacted:github-token]",
    "github-pat": "[redacted:github-token]",
    "slack-token": "[redacted:slack-token]",
    "private-key": "[redacted:private-key]",
    "slack-webhook": "https://hooks.slack.com/[redacted:slack-webhook#",
    "url-credentials": "https://[redacted:url-credentials]@git.example.com/acme/api",
    "url-query-token": "https://ci.example.com/build/42?view=log&token=[redacted:url-credentials]",
    "jwt": "[redacted:jwt]",
    "bearer": "Authorization: Bearer [redacted:auth-token]",
  };
  for (const kind of SECRET_KINDS) {
    it(kind, () => {
      const s = plantSecret(kind, "unit");
      const out = redactText(`before ${s.text} after`);
      expect(out).not.toContain(s.secret);
      expect(out).toContain(expected[kind]);
      expect(out.startsWith("before ")).toBe(true);
      expect(out.endsWith(" after")).toBe(true);
    });
  }

  it("more formats from the secretlint rules: npm, OpenAI, Anthropic, GitLab, SendGrid, Slack app tokens, an unlabelled AWS secret, a clipped PEM", () => {
    const cases: Array<[string, string]> = [
      ["npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm-token"],
      [`sk-proj-${"a1B2".repeat(12)}`, "api-key"],
      [`sk-ant-api03-${"x".repeat(95)}AA`, "api-key"],
      ["glpat-abcdefghij0123456789", "gitlab-token"],
      [`SG.${"a".repeat(22)}.${"b".repeat(43)}`, "api-key"],
      ["xapp-1-A0123456789-0123456789012-abcdef0123456789", "slack-token"],
      ["wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret"],
      ["-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW…", "private-key"],
    ];
    for (const [secret, kind] of cases) {
      const out = redactText(`x ${secret} y`);
      expect(out, secret).toContain(`[redacted:${kind}]`);
      expect(out, secret).not.toContain(secret.slice(8, 24));
    }
  });

  it("a private key: whole, JSON-escaped, clipped mid-line; a header named in prose keeps the prose", () => {
    const line = "MIIEowIBAAKCAQEAabcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX";
    expect(redactText(`a -----BEGIN RSA PRIVATE KEY-----\n${line}\n${line}\n-----END RSA PRIVATE KEY----- b`)).toBe("a [redacted:private-key] b");
    expect(redactText(`{"k":"-----BEGIN EC PRIVATE KEY-----\\n${line}\\n${line}\\n-----END EC PRIVATE KEY-----"}`)).toBe('{"k":"[redacted:private-key]"}');
    expect(redactText(`-----BEGIN PRIVATE KEY-----\n${line}\nQyNTUxOQAAACDw…`)).toBe("[redacted:private-key]…");
    expect(redactText("expected a -----BEGIN PRIVATE KEY----- header in the file")).toBe("expected a [redacted:private-key] header in the file");
  });

  it("a Slack webhook URL keeps its host and a fingerprint, the same with or without its scheme", () => {
    const url = "https://hooks.slack.com/services/T0001/B0002/abcdefXYZ123";
    const fp = fingerprint("services/T0001/B0002/abcdefXYZ123");
    expect(redactText(`posting to ${url} failed`)).toBe(`posting to https://hooks.slack.com/[redacted:slack-webhook#${fp}] failed`);
    expect(redactText("hooks.slack.com/services/T0001/B0002/abcdefXYZ123")).toBe(`hooks.slack.com/[redacted:slack-webhook#${fp}]`);
    expect(redactSlackTarget(url)).toBe(`https://hooks.slack.com/[redacted:slack-webhook#${fp}]`);
    expect(redactText("https://hooks.slack.com/services/T0001/B0002/other")).not.toContain(fp);
  });

  it("a SLACK-kind target on any host keeps only its host and fingerprint, wherever it reappears", () => {
    const target = "https://u:p@slack-proxy.example.com/hook/abc123secret";
    const opts = knownSecretsOf({ kind: "SLACK", target_url_used: target });
    const masked = redactSlackTarget(target);
    expect(masked).toMatch(/^https:\/\/slack-proxy\.example\.com\/\[redacted:slack-webhook#[0-9a-f]{6}\]$/);
    expect(redactText(`sent to ${target}`, opts)).toBe(`sent to ${masked}`);
    expect(redact({ url: target, nested: [`at ${target}`] }, opts)).toEqual({ url: masked, nested: [`at ${masked}`] });
    expect(knownSecretsOf({ kind: "STANDARD", target_url_used: target })).toBeUndefined();
  });

  it("a text kept as clean (the poller meets the same fields at every poll) is still masked where it is a known secret", () => {
    const target = "https://relay.example.com/hook/known-elsewhere";
    expect(redactText(target)).toBe(target); // clean by its shape: remembered as such
    expect(redactText(target)).toBe(target);
    expect(redactText(target, knownSecretsOf({ kind: "SLACK", target_url_used: target }))).toBe(redactSlackTarget(target));
  });

  it("secrets in JSON text and assignments: the name stays, the value goes", () => {
    expect(redactText('{"password": "p4ss", "client_secret":"abc", "name": "api"}')).toBe(
      '{"password": "[redacted:password]", "client_secret":"[redacted:secret]", "name": "api"}',
    );
    expect(redactText("DB_PASSWORD=hunter2 PGPASSWORD: x api_key=abc")).toBe(
      "DB_PASSWORD=[redacted:password] PGPASSWORD: [redacted:password] api_key=[redacted:secret]",
    );
    // A field name ending in a secret word, then a password: the password still goes.
    expect(redactText("author_name: password=Pw-1234567")).toBe("author_name: password=[redacted:password]");
  });
});

describe("what a responder needs stays", () => {
  const keep = [
    "0123456789abcdef0123456789abcdef01234567", // a commit sha
    "0123456",
    "3f2b6c1e-5a4d-4c1b-9f7e-123456789abc", // uuids, execution ids
    "derived-AbCdEfGhIjKlMnOpQrStUv",
    "HTTP 502 Bad Gateway",
    "status_code: 503",
    "CANNOT_UNINSTALL_HELM_CHART",
    "DEPLOYMENT_ERROR",
    "api.example.com:443",
    "https://git.example.com/acme/api/commit/0123456789abcdef0123456789abcdef01234567",
    "https://hooks.example.com/in?team=a&page=2",
    "builder-api-3f2b6c1e-ab12c",
    "registry.example.com/team/api:1.2.3@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "2026-01-01T00:00:00.123456789Z",
    "PT8M42S",
    "Invalid token: the signature has expired",
    "Token expired; Basic authentication failed",
    "the key to success",
    "monkey: business",
    "eu-west-3",
    "Error: exit status 1 at step BUILD",
  ];
  for (const text of keep) {
    it(text, () => expect(redactText(text)).toBe(text));
  }
});

describe("hostile sizes and shapes", () => {
  // Each shape repeats what a pattern starts on without ever completing it: a pattern that backtracks
  // over the text once per start would not finish within the test's timeout.
  const shapes: Record<string, string> = {
    "dots without a scheme": "a.".repeat(100_000),
    "PEM headers without an end": "-----BEGIN RSA PRIVATE KEY----- is not a key ".repeat(6_000),
    "Slack token prefixes": "xoxb-1-! ".repeat(30_000),
    "assignments of plain names": "name: value ".repeat(20_000),
    "secret names without values": "token= ".repeat(30_000),
    "names whose values are names": "token:".repeat(30_000),
    "after redaction, markers": "-----BEGIN RSA PRIVATE KEY-----!".repeat(6_000),
    "base64 runs of 39": `${"Ab1/".repeat(10).slice(0, 39)} `.repeat(5_000),
    "one long word": "A".repeat(300_000),
    "URLs with many parameters": `https://h.example.com/?${"a=1&".repeat(50_000)}token=x`,
  };
  for (const [name, shape] of Object.entries(shapes)) {
    it(name, () => {
      const s = plantSecret("github-token", name);
      const out = redactText(`START ${shape} ${s.text} ${shape} END`);
      expect(out).not.toContain(s.secret);
      expect(out.startsWith("START ")).toBe(true); // nothing around the secret was taken with it
      expect(out.endsWith(" END")).toBe(true);
    });
  }

  it("a payload of 10,000 fields and 32 levels deep", () => {
    const s = plantSecret("slack-token", "wide");
    const wide = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`f${i}`, i % 1000 === 0 ? s.text : `value ${i}`]));
    let deep: unknown = { note: s.text };
    for (let i = 0; i < 40; i++) deep = { next: deep };
    const out = JSON.stringify(redact({ wide, deep }));
    expect(out).not.toContain(s.secret);
    expect(out).toContain('"f9999":"value 9999"');
  });
});

describe("properties", () => {
  const kind = fc.constantFrom(...SECRET_KINDS);
  const field = fc.string({ minLength: 1, maxLength: 12 });
  /** Surrounding text: anything, ending and starting at a space so a secret is its own word. */
  const around = fc.string({ maxLength: 40 });

  it("a planted secret of any kind, in any text, never survives", () => {
    fc.assert(
      fc.property(kind, field, around, around, (k, f, before, after) => {
        const s = plantSecret(k, f);
        const out = redactText(`${before} ${s.text} ${after}`);
        expect(out).not.toContain(s.secret);
      }),
      { numRuns: 500 },
    );
  });

  it("redacting twice changes nothing more", () => {
    const text = fc.oneof(fc.string({ maxLength: 200 }), fc.tuple(kind, field, around).map(([k, f, a]) => `${a} ${plantSecret(k, f).text} ${a}`));
    fc.assert(
      fc.property(text, (t) => {
        const once = redactText(t);
        expect(redactText(once)).toBe(once);
      }),
      { numRuns: 500 },
    );
  });

  it("text made of what a responder needs (ids, shas, statuses, tags, hosts) is left as it was", () => {
    const hex = (n: number) => fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: n, maxLength: n });
    const word = fc.oneof(
      hex(40), hex(7), fc.uuid(), fc.integer({ min: 100, max: 599 }).map(String),
      fc.constantFrom("CANNOT_UNINSTALL_HELM_CHART", "BUILD_ERROR", "DEPLOYMENT_ERROR", "UpgradeError", "api.example.com", "eu-west-3", "PT8M42S"),
      // A host whose last label names a secret ("a.key: …") reads as an assignment, and is redacted on purpose.
      fc.domain().filter((d) => !isSecretKey(d.split(".").at(-1)!)),
    );
    const sep = fc.constantFrom(" ", ", ", ": ", " (", ") ", "/", "\n");
    fc.assert(
      fc.property(fc.array(fc.tuple(word, sep), { maxLength: 20 }), (parts) => {
        const t = parts.map(([w, s]) => w + s).join("");
        expect(redactText(t)).toBe(t);
      }),
      { numRuns: 500 },
    );
  });

  it("redact never throws and never leaks on any JSON holding planted secrets", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), kind, field, (json, k, f) => {
        const s = plantSecret(k, f);
        const value = { data: json, note: `x ${s.text} y`, list: [json, s.text] };
        const out = JSON.stringify(redact(value));
        expect(out).not.toContain(s.secret);
      }),
      { numRuns: 300 },
    );
  });
});
