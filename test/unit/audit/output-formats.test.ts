/**
 * Audit output: CSV quoted as RFC 4180 says (checked by reading it back), JSON lines, the table, and
 * the explanation's verdicts.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { csvField, csvLine } from "../../../lib/audit/csv.js";
import { CSV_COLUMNS, TABLE_WIDTH, csvHeader, csvRow, explanationLines, jsonLine, stringWidth, tableLines, toldOf } from "../../../lib/audit/output-formats.js";
import { verdictOf } from "../../../lib/audit/explain.js";
import type { AuditRow } from "../../../lib/model/audit-row.js";

/** A strict RFC 4180 reader: the oracle for the writer. */
function readCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let i = 0;
  for (;;) {
    let field = "";
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error("unterminated quote");
        if (text[i] === '"') {
          if (text[i + 1] === '"') { field += '"'; i += 2; continue; }
          i++;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== "," && text[i] !== "\r") {
        if (text[i] === '"' || text[i] === "\n") throw new Error(`bare ${JSON.stringify(text[i])} in an unquoted field`);
        field += text[i++];
      }
    }
    row.push(field);
    if (text[i] === ",") { i++; continue; }
    if (text.slice(i, i + 2) !== "\r\n") throw new Error(`expected CRLF at ${i}`);
    i += 2;
    rows.push(row);
    row = [];
    if (i >= text.length) return rows;
  }
}

const row = (over: Partial<AuditRow> = {}): AuditRow => ({
  type: "alert", id: "A1", kind: "deployment", at: "2026-03-02T14:07:31.000Z", observed_at: "2026-03-02T14:08:02.114Z",
  status: "BUILD_ERROR", transition: "failed", severity: "error", organization: "o",
  service: { id: "s", name: "api" }, environment: { id: "e", name: "production" }, actor: "dana@acme.io",
  summary: "api deployment failed", state: "pending", deliveries: [],
  ...over,
});

describe("CSV", () => {
  it("quotes fields with commas, quotes, CR or LF, doubles quotes, ends lines with CRLF", () => {
    expect(csvField("plain")).toBe("plain");
    expect(csvField("a,b")).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField("two\nlines")).toBe('"two\nlines"');
    expect(csvField("cr\rhere")).toBe('"cr\rhere"');
    expect(csvField(undefined)).toBe("");
    expect(csvField(503)).toBe("503");
    expect(csvLine(["a", "b,c", ""])).toBe('a,"b,c",\r\n');
  });

  it("guards a field a spreadsheet would run as a formula with a leading quote", () => {
    expect(csvField("=HYPERLINK(\"http://x\")")).toBe('"\'=HYPERLINK(""http://x"")"');
    for (const s of ["+1", "-cmd", "@SUM(A1)", "\t=1"]) expect(csvField(s)).toBe(`'${s}`);
    expect(csvField("a=b")).toBe("a=b");
  });

  it("reads back exactly what was written (formulas guarded), whatever the text", () => {
    const guarded = (s: string) => (/^[=+\-@\t\r]/.test(s) ? `'${s}` : s);
    fc.assert(fc.property(fc.array(fc.array(fc.string({ unit: "grapheme-composite" }), { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }), (rows) => {
      expect(readCsv(rows.map(csvLine).join(""))).toEqual(rows.map((r) => r.map(guarded)));
    }));
  });

  it("writes one row per audit row under a header, a commit message with quotes and newlines intact", () => {
    const nasty = row({ summary: 'api failed — commit a94a8fe: "Fix, again"\nsecond line', actor: "ann,bob" });
    const rows = readCsv(csvHeader() + csvRow(nasty) + csvRow(row({ type: "execution", id: "s:x", transition: undefined, state: undefined, deliveries: undefined })));
    expect(rows[0]).toEqual([...CSV_COLUMNS]);
    const byName = (r: string[]) => Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, r[i]]));
    expect(byName(rows[1]!)).toMatchObject({ summary: nasty.summary, actor: "ann,bob", told: "no delivery recorded (no route matched, or not delivered yet)", service: "api", environment: "production" });
    expect(byName(rows[2]!)).toMatchObject({ type: "execution", transition: "", told: "" });
  });
});

describe("rows for people and scripts", () => {
  it("says who was told", () => {
    expect(toldOf(row({ deliveries: [
      { route: "prod", receiver: "slack #oncall", state: "sent", attempts: 1, updated_at: "t" },
      { route: "prod", receiver: "email a@b", state: "suppressed", attempts: 0, updated_at: "t", reason: "mute" },
      { route: "prod", receiver: "slack #noisy", state: "sent", attempts: 1, updated_at: "t", digest_id: "digest-1" },
    ] }))).toBe("slack #oncall sent; email a@b muted; slack #noisy sent (digest)");
    expect(toldOf(row({ state: "suppressed", suppression: { reason: "backfill", detail: "old" } }))).toBe("nobody (backfill)");
    expect(toldOf(row({ type: "record" }))).toBe("");
    // An onlooker (the terminal's Slack preview on one machine) told nobody: it is not said to have sent.
    expect(toldOf(row({ deliveries: [{ route: "terminal-preview", receiver: "slack #preview", state: "sent", attempts: 1, updated_at: "t", onlooker: true }] })))
      .toBe("slack #preview shown (preview; nobody told)");
  });

  it("says any onlooker's delivery told nobody, whatever its route, and no route's name makes one", () => {
    expect(toldOf(row({ deliveries: [
      { route: "prod", receiver: "slack #oncall", state: "sent", attempts: 1, updated_at: "t" },
      { route: "wallboard", receiver: "webhook env:WALL", state: "sent", attempts: 1, updated_at: "t", onlooker: true },
      { route: "wallboard", receiver: "teams env:WALL", state: "suppressed", attempts: 0, updated_at: "t", reason: "mute", onlooker: true },
    ] }))).toBe("slack #oncall sent; webhook env:WALL shown (preview; nobody told); teams env:WALL muted (preview; nobody told)");
    // The preview's route name alone is an ordinary route's here: what the record says decides.
    expect(toldOf(row({ deliveries: [{ route: "terminal-preview", receiver: "slack #preview", state: "sent", attempts: 1, updated_at: "t" }] })))
      .toBe("slack #preview sent");
  });

  it("JSON lines are one object each; the table has a header and aligned columns, the id and summary under each row", () => {
    expect(JSON.parse(jsonLine(row()))).toEqual(row());
    expect(jsonLine(row({ summary: "a\nb" }))).not.toContain("\n");
    const lines = tableLines([row(), row({ type: "record", id: "R-1", kind: "webhook_delivery", transition: undefined, status: "503", service: undefined, webhook: { id: "w" }, deliveries: undefined })]);
    expect(lines[0]).toMatch(/^TIME \(UTC\)\s+TYPE\s+KIND\s+WHAT\s+WHERE\s+WHO$/);
    expect(lines[1]).toBe("    ID  SUMMARY");
    expect(lines[2]).toMatch(/^2026-03-02 14:07:31\s+alert\s+deployment\s+failed BUILD_ERROR\s+api \(production\)\s+dana@acme.io/);
    expect(lines[3]).toMatch(/^    A1  \S/);
    expect(lines[4]).toBe("    told: no delivery recorded (no route matched, or not delivered yet)");
    expect(lines[5]).toContain("webhook w (production)");
    expect(lines[2]!.indexOf("api (production)")).toBe(lines[5]!.indexOf("webhook w"));
    expect(lines[6]).toMatch(/^    R-1  /);
  });

  it("fits 120 columns whatever the rows hold, and shows every id whole", () => {
    const uuid = "3f2e1d0c-9b8a-4765-8432-10fedcba9876";
    const long = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
    const hostile = [
      row({ id: `${uuid}:${uuid}`, summary: long("Deployment failed: ", 300), service: { id: uuid, name: long("service-with-a-long-name-", 80) }, environment: { id: uuid, name: long("production-", 60) }, actor: long("someone.with.a.long.address@", 70) }),
      row({ id: "rejected-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", summary: long("🚀 déploiement échoué — 部署失败 ", 300), service: { id: uuid, name: "🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥" }, actor: "👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻" }),
      row({ id: uuid, summary: "line one\nline two\u202eevil\ttab", deliveries: Array.from({ length: 12 }, (_, i) => ({ route: "r", receiver: `slack #channel-${i}-${long("x", 30)}`, state: "sent", attempts: 1, updated_at: "t" })) }),
      row({ type: "quarantine", id: long("q", 250), stage: "ingest", summary: long("S", 300) }),
    ];
    const lines = tableLines(hostile);
    for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(TABLE_WIDTH);
    for (const line of lines) expect(line).not.toMatch(/[\n\r\t\u202e]/);
    const text = lines.map((l) => l.trimStart()).join("");
    for (const r of hostile.slice(0, 3)) expect(lines.some((l) => l.includes(r.id)), r.id).toBe(true);
    // An id no line can hold goes on as many as it needs, whole when joined.
    expect(text).toContain(long("q", 250));
    expect(stringWidth("👩‍💻é部a")).toBe(6);
  });

  it("explains in one line why nobody was told", () => {
    expect(verdictOf({ published: false, suppression: { reason: "backfill", detail: "older than the 15m window" }, deliveries: [] }))
      .toBe("nobody was told: backfill — older than the 15m window");
    expect(verdictOf({ published: true, deliveries: [] })).toMatch(/no route matched it/);
    expect(verdictOf({ published: true, deliveries: [
      { route: "r", receiver: "email a@b", state: "suppressed", attempts: 0, updated_at: "t", suppression: { reason: "mute", detail: "d" } },
    ] })).toBe("nobody was told: not email a@b (route r): muted");
    expect(verdictOf({ published: true, deliveries: [{ route: "terminal-preview", receiver: "slack #preview", state: "sent", attempts: 1, updated_at: "t", onlooker: true }] }))
      .toBe("nobody was told: shown in slack #preview (preview; nobody told)");
  });

  it("counts no onlooker as told, whatever its route, and says so with its label", () => {
    expect(verdictOf({ published: true, deliveries: [{ route: "wallboard", receiver: "webhook env:WALL", state: "sent", attempts: 1, updated_at: "t", onlooker: true }] }))
      .toBe("nobody was told: shown in webhook env:WALL (preview; nobody told)");
    expect(verdictOf({ published: true, deliveries: [
      { route: "prod", receiver: "slack #oncall", state: "sent", attempts: 1, updated_at: "t" },
      { route: "wallboard", receiver: "webhook env:WALL", state: "failed", attempts: 3, updated_at: "t", error: "503", onlooker: true },
    ] })).toBe("told: slack #oncall (route prod); not webhook env:WALL (route wallboard): failed after 3 attempt(s) (503); it will be retried (SQS redelivers it; on one machine, the next run) (preview; nobody told)");
    // The preview's route name alone is an ordinary route's here: what the record says decides.
    expect(verdictOf({ published: true, deliveries: [{ route: "terminal-preview", receiver: "slack #preview", state: "sent", attempts: 1, updated_at: "t" }] }))
      .toBe("told: slack #preview (route terminal-preview)");
  });
});

describe("quarantined things", () => {
  it("a quarantine row says what stage could not go on; explain shows the reason and the excerpt", () => {
    const row: AuditRow = {
      type: "quarantine", id: "d-1", kind: "webhook_delivery", at: "2026-03-02T14:07:31.000Z", observed_at: "2026-03-02T14:07:31.000Z",
      organization: "org", stage: "ingest", reason: "ValidationException: nesting too deep", summary: "A webhook delivery d-1 could not be stored: quarantined",
    };
    expect(tableLines([row])[2]).toContain("quarantined at ingest");
    const lines = explanationLines({
      id: "d-1", alerts: [],
      quarantined: [{ stage: "ingest", kind: "webhook_delivery", source: "webhook:org/wh", quarantined_at: row.at, reason: row.reason!, excerpt: '{"id":"d-1"}' }],
    });
    expect(lines[0]).toBe("webhook delivery d-1: quarantined 2026-03-02T14:07:31.000Z: it could not be stored (read from webhook:org/wh)");
    expect(lines).toContain("  reason: ValidationException: nesting too deep");
    expect(lines).toContain('    {"id":"d-1"}');
  });
});
