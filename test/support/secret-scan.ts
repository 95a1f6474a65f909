/**
 * Planted secrets and a scanner for them: every kind docs/security.md says Lookout redacts, made unique
 * per field (so a hit names the field it came from), and a scan of any text or folder for any piece of
 * them. A piece is any 10 characters of a secret: a secret cut by clipping, by a page boundary of the
 * DynamoDB Local file or by a line fold still shows; `.eml` files are decoded first (quoted-printable,
 * base64 parts), since a raw byte scan would miss an encoded secret.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { simpleParser } from "mailparser";

export interface PlantedSecret {
  kind: string;
  /** Where it was planted, e.g. `deployment.commit.message`. */
  field: string;
  /** As planted in text. */
  text: string;
  /** The secret part: none of it may appear in any output. At least 20 characters. */
  secret: string;
}

export interface SecretHit {
  kind: string;
  field: string;
  output: string;
  /** The piece found, so a failure shows what leaked. */
  piece: string;
}

export const SECRET_KINDS = [
  "password", "aws-key", "aws-secret", "github-token", "github-pat", "slack-token", "private-key",
  "slack-webhook", "url-credentials", "url-query-token", "jwt", "bearer",
] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

const PIECE = 10;

/** Deterministic characters from a seed, in an alphabet. */
function chars(seed: string, n: number, alphabet: string): string {
  let out = "";
  for (let i = 0; out.length < n; i++) {
    for (const b of createHash("sha256").update(`${seed}:${i}`).digest()) {
      if (out.length < n) out += alphabet[b % alphabet.length];
    }
  }
  return out;
}

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const ALNUM = UPPER + LOWER + DIGITS;

/** One secret of a kind, unique to the field. */
export function plantSecret(kind: SecretKind, field: string): PlantedSecret {
  const r = (n: number, alphabet = ALNUM) => chars(`${kind}/${field}`, n, alphabet);
  const make = (text: string, secret: string): PlantedSecret => ({ kind, field, text, secret });
  switch (kind) {
    case "password": {
      const s = `Pw-${r(21)}`;
      return make(`password=${s}`, s);
    }
    case "aws-key": {
      const s = `AKIA${r(16, UPPER + DIGITS)}`;
      return make(s, s);
    }
    case "aws-secret": {
      const s = `wJ7/${r(36, ALNUM + "/+")}`;
      return make(`aws_secret_access_key=${s}`, s);
    }
    case "github-token": {
      const s = `ghp_${r(36)}`;
      return make(s, s);
    }
    case "github-pat": {
      const s = `github_pat_11${r(20, UPPER + DIGITS)}_${r(59)}`;
      return make(s, s);
    }
    case "slack-token": {
      const s = `xoxb-${r(12, DIGITS)}-${r(13, DIGITS)}-${r(24)}`;
      return make(s, s);
    }
    case "private-key": {
      const body = r(64, ALNUM + "+/");
      return make(`-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA${r(48, ALNUM + "+/")}\n${body}\n-----END RSA PRIVATE KEY-----`, body);
    }
    case "slack-webhook": {
      const path = `T${r(9, UPPER + DIGITS)}/B${r(9, UPPER + DIGITS)}/${r(24)}`;
      return make(`https://hooks.slack.com/services/${path}`, path);
    }
    case "url-credentials": {
      const s = `Pa55-${r(20)}`;
      return make(`https://deploy:${s}@git.example.com/acme/api`, s);
    }
    case "url-query-token": {
      const s = `qt${r(24)}`;
      return make(`https://ci.example.com/build/42?view=log&token=${s}`, s);
    }
    case "jwt": {
      const s = `eyJzdWIiOi${r(20)}.${r(26)}`;
      return make(`eyJhbGciOiJIUzI1NiJ9.${s}`, s);
    }
    case "bearer": {
      const s = `bt${r(30)}`;
      return make(`Authorization: Bearer ${s}`, s);
    }
  }
}

/** Every kind, planted for one field. */
export function plantAll(field: string): PlantedSecret[] {
  return SECRET_KINDS.map((k) => plantSecret(k, field));
}

/** One line of free text holding the given secrets, as a log line or a response body might. */
export function textWith(secrets: PlantedSecret[], lead = "failed"): string {
  return `${lead}: ${secrets.map((s) => s.text).join(" ; ")} (end)`;
}

/** Scans for planted secrets: register them, then scan texts and folders; hits accumulate. */
export class SecretScanner {
  private readonly pieces = new Map<string, PlantedSecret[]>();
  readonly hits: SecretHit[] = [];
  private readonly seen = new Set<string>();
  /** What was scanned, by output: characters read. */
  readonly scanned = new Map<string, number>();

  constructor(secrets: Iterable<PlantedSecret>) {
    for (const s of secrets) {
      if (s.secret.length < 2 * PIECE) throw new Error(`a planted ${s.kind} secret must have ${2 * PIECE}+ characters to be found when cut`);
      for (let i = 0; i + PIECE <= s.secret.length; i++) {
        const piece = s.secret.slice(i, i + PIECE);
        const list = this.pieces.get(piece) ?? [];
        if (!list.includes(s)) list.push(s);
        this.pieces.set(piece, list);
      }
    }
  }

  /** Scans one text (also URL-decoded, as secrets may be percent-encoded in a URL or a form). */
  scanText(output: string, text: string): SecretHit[] {
    this.scanned.set(output, (this.scanned.get(output) ?? 0) + text.length);
    const found: SecretHit[] = [];
    for (const variant of new Set([text, safeDecode(text)])) {
      for (let i = 0; i + PIECE <= variant.length; i++) {
        const piece = variant.slice(i, i + PIECE);
        for (const s of this.pieces.get(piece) ?? []) {
          // One hit per secret and output, however often or however encoded it shows there.
          const key = `${s.kind}\u0000${s.field}\u0000${output}`;
          if (this.seen.has(key)) continue;
          this.seen.add(key);
          found.push({ kind: s.kind, field: s.field, output, piece });
        }
      }
    }
    this.hits.push(...found);
    return found;
  }

  /** Hits counted by output (its first path segment) and by kind, for a report. */
  summary(): { byOutput: Record<string, number>; byKind: Record<string, number> } {
    const byOutput: Record<string, number> = {};
    const byKind: Record<string, number> = {};
    for (const h of this.hits) {
      const out = h.output.replace(/^(data:[^/:]+).*$/, "$1").replace(/^(data:[^/]+\/).*$/, "$1");
      byOutput[out] = (byOutput[out] ?? 0) + 1;
      byKind[h.kind] = (byKind[h.kind] ?? 0) + 1;
    }
    return { byOutput, byKind };
  }

  /** Scans every file under a folder, byte for byte; `.eml` files decoded as well. */
  async scanDir(output: string, dir: string): Promise<SecretHit[]> {
    const found: SecretHit[] = [];
    for (const file of filesUnder(dir)) {
      const bytes = readFileSync(file);
      const name = `${output}:${file.slice(dir.length + 1)}`;
      found.push(...this.scanText(name, bytes.toString("latin1")), ...this.scanText(name, bytes.toString("utf8")));
      if (file.endsWith(".eml")) {
        const mail = await simpleParser(bytes);
        const decoded = [mail.subject ?? "", mail.text ?? "", typeof mail.html === "string" ? mail.html : "", ...[...mail.headers.values()].map((v) => JSON.stringify(v))];
        found.push(...this.scanText(`${name} (decoded)`, decoded.join("\n")));
      }
    }
    return found;
  }

  /** Whether a text holds a given marker: proves an output was written and is readable by the scan. */
  static holds(text: string, marker: string): boolean {
    return text.includes(marker);
  }
}

export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out.sort();
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
}
