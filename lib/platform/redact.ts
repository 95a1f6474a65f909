/**
 * Redaction of everything Lookout keeps or shows that came from the platform: applied at normalize
 * time to every text field of every source, and again to what is logged or printed. Nothing secret-like
 * may survive; what a responder needs (host, HTTP status, error tag, ids) stays; what was removed is
 * marked with its kind, `[redacted:aws-key]`, so a reader knows a secret was there and what it was.
 *
 * Why hand-written: the path-based libraries (fast-redact, pino's) need fixed paths, and these payloads
 * have none. The well-known token formats are the rules of @secretlint/secretlint-rule-preset-recommend,
 * mirrored in secret-patterns.ts rather than called: secretlint is asynchronous, adds 78 KB to a bundle
 * and is several times slower per field, where the poller redacts every field of every record inline;
 * it also lets documentation-style keys through and has no rule for `password=`, `?token=` or JWTs
 * (docs/security.md has the figures).
 */
import { createHash } from "node:crypto";
import { BASE64_RUN, PEM_BEGIN, PEM_END, PEM_MATERIAL, PEM_MAX_BYTES, SLACK_WEBHOOK, TOKEN_PATTERNS, isAwsSecret } from "./secret-patterns.js";

/** What stands for the value of a field whose key names a secret (`password`, `X-Signature`…). */
export const REDACTED = "[REDACTED]";

export const redactedAs = (kind: string): string => `[redacted:${kind}]`;

/** Key names whose values are secrets, whatever their nesting. */
const SECRET_KEY =
  /(authori[sz]ation|secret|token|passw(or)?d|passphrase|credential|signature|cookie|session|private|(^|[-_.])key$|api[-_]?key|access[-_]?key|signing|bearer|auth$)/i;

/** Query parameters whose values are secrets. */
const SECRET_PARAM = /^(token|access_token|refresh_token|id_token|key|api_key|apikey|secret|signature|sig|password|pass|pwd|auth|code|x-amz-signature|x-amz-security-token|x-amz-credential)$/i;

const PASSWORD_NAME = /^(pass(word|wd|phrase)?|pwd|db_?pass(word)?)$/i;

const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\b/g;
/**
 * A credential after an auth scheme. After "Token" or "Basic" it must have a digit, a symbol or a
 * capital after a small letter, so that an English word ("Token expired") stays.
 */
const AUTH_SCHEME =
  /\b(?:([Bb]earer|BEARER)\s+(?!\[redacted)[A-Za-z0-9._~+/=-]{8,}|([Tt]oken|[Bb]asic|TOKEN|BASIC)\s+(?!\[redacted)(?=[A-Za-z]*[0-9._~+/=-]|[A-Z]*[a-z]+[A-Z])[A-Za-z0-9._~+/=-]{8,})/g;
/** A URL in text; the scheme is bounded so that "a.a.a.a…" without "://" is read once, not once per dot. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]{0,31}:\/\/[^\s"'<>`]+/gi;
/**
 * `name=value`, `name: value`, `"name": "value"` in free text. The name is taken whole (the lookahead
 * makes it atomic: no backtracking into it), and isSecretKey decides whether the value goes.
 */
const ASSIGNMENT = /(?<![A-Za-z0-9_.-])(["']?)(?=([A-Za-z][A-Za-z0-9_.-]{0,80}))\2\1(\s*[=:]\s*)(["']?)/g;
/** The value after a secret name: judged on its first 256 characters, and all of it redacted. */
const VALUE_HEAD = /(?!\[redacted)[^\s"'&,;<>]{1,256}/y;
const VALUE_REST = /[^\s"'&,;<>]*/y;
/** Whether a text may hold a secret-named assignment at all: most texts do not, and skip the search. */
const SECRET_WORD = /authori[sz]ation|secret|token|passw|passphrase|pwd|credential|signature|cookie|session|private|key|bearer|auth|signing/i;

const TOKENS = TOKEN_PATTERNS.map((p) => ({ ...p, re: new RegExp(p.source, "g") }));

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Six hex characters that tell two redacted secrets apart without revealing either. */
export function fingerprint(secret: string): string {
  return createHash("sha256").update(secret).digest("hex").slice(0, 6);
}

/** The fingerprint covers what follows the host, so the same webhook reads the same with or without its scheme. */
const slackWebhook = (url: string) => redactedAs(`slack-webhook#${fingerprint(url.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/]*\//i, ""))}`);
const slackWebhookUrl = (m: string) => `${/^https?:\/\//i.exec(m)?.[0] ?? ""}hooks.slack.com/${slackWebhook(m)}`;

/**
 * A Slack incoming-webhook target (a `SLACK`-kind webhook's URL): only its scheme and host stay, and a
 * fingerprint of the rest, e.g. `https://hooks.slack.com/[redacted:slack-webhook#a1b2c3]`.
 */
export function redactSlackTarget(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)(?:[^/?#\s]*@)?([^/?#\s]*)/i.exec(url.trim());
  return m ? `${m[1]}${m[2]}/${slackWebhook(url.trim())}` : slackWebhook(url);
}

/**
 * Removes credentials from a URL — userinfo, query or fragment parameters named like secrets, a Slack
 * webhook's path — and any well-known token inside it. Works on the text, never reparses: a URL the
 * WHATWG parser rejects is still cleaned, and what is kept reads as it was.
 */
export function redactUrl(url: string): string {
  return redactText(url);
}

function scrubUrl(url: string): string {
  const slack = url.replace(SLACK_WEBHOOK, slackWebhookUrl);
  if (slack !== url) return slack;
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(url);
  if (!m) return url;
  const [, scheme, authority, rest] = m as unknown as [string, string, string, string];
  const at = authority.lastIndexOf("@");
  const host = at >= 0 ? `${redactedAs("url-credentials")}@${authority.slice(at + 1)}` : authority;
  // Query and fragment: `?a=1&token=…#access_token=…` (OAuth puts tokens in fragments).
  const cleaned = rest.replace(/([?&#;])([^=&#;]*)=([^&#;]*)/g, (whole, sep: string, name: string, value: string) =>
    value && !value.startsWith("[redacted") && isSecretParam(name) ? `${sep}${name}=${redactedAs("url-credentials")}` : whole,
  );
  return `${scheme}${host}${cleaned}`;
}

function isSecretParam(name: string): boolean {
  let n = name;
  try {
    n = decodeURIComponent(name);
  } catch {
    // a malformed escape: judge the name as written
  }
  return SECRET_PARAM.test(n) || isSecretKey(n);
}

export interface RedactOptions {
  /** Exact strings known to be secret here (a `SLACK`-kind target), each with what stands for it. */
  known?: ReadonlyArray<readonly [secret: string, replacement: string]>;
}

/**
 * What is secret by position in a platform item rather than by shape: the target URL of a `SLACK`-kind
 * webhook delivery, which stands for itself wherever it reappears (the request payload, the answer).
 */
export function knownSecretsOf(item: unknown): RedactOptions | undefined {
  if (!item || typeof item !== "object") return undefined;
  const { kind, target_url_used: url } = item as Record<string, unknown>;
  return kind === "SLACK" && typeof url === "string" && url.length > 0 ? { known: [[url, redactSlackTarget(url)]] } : undefined;
}

/**
 * The latest short texts found to hold nothing to redact (the oldest forgotten first): the poller redacts
 * every field of every item at every poll and meets the same ones again and again (names, statuses,
 * times, keys) — a CI-sized simulated day redacted 2.8 million texts, 603 of them different
 * (docs/security.md). Only clean texts are kept, so nothing secret is held on to.
 */
const CLEAN = new Set<string>();
const CLEAN_MAX_ENTRIES = 5_000;
const CLEAN_MAX_CHARS = 256;

/** Redacts the secrets inside free text; leaves everything else as it was. */
export function redactText(text: string, opts?: RedactOptions): string {
  const plain = text.length <= CLEAN_MAX_CHARS && !opts?.known?.length;
  if (plain && CLEAN.has(text)) return text;
  const out = scrub(text, opts);
  if (plain && out === text) {
    if (CLEAN.size >= CLEAN_MAX_ENTRIES) CLEAN.delete(CLEAN.values().next().value!);
    CLEAN.add(text);
  }
  return out;
}

function scrub(text: string, opts?: RedactOptions): string {
  let out = text;
  for (const [secret, replacement] of opts?.known ?? []) if (secret) out = out.split(secret).join(replacement);
  // Each search runs only when a literal it needs is in the text: most fields hold no secret at all.
  if (out.includes("PRIVATE KEY")) out = redactPrivateKeys(out);
  if (out.includes("://")) out = out.replace(URL_IN_TEXT, scrubUrl);
  if (out.includes("hooks.slack")) out = out.replace(SLACK_WEBHOOK, slackWebhookUrl); // without a scheme: not seen as a URL above
  for (const t of TOKENS) {
    if (!t.hints || t.hints.some((h) => out.includes(h))) out = out.replace(t.re, redactedAs(t.kind));
  }
  out = out.replace(BASE64_RUN, (run) => (isAwsSecret(run) ? redactedAs("aws-secret") : run));
  if (out.includes("eyJ")) out = out.replace(JWT, redactedAs("jwt"));
  out = out.replace(AUTH_SCHEME, (_m, bearer?: string, other?: string) => `${bearer ?? other} ${redactedAs("auth-token")}`);
  return SECRET_WORD.test(out) ? assignments(out) : out;
}

/**
 * PEM private keys, whole or clipped. Procedural rather than one regex: a lazy search for the end line
 * from every header would read a text of many headers and no end once per header.
 */
function redactPrivateKeys(text: string): string {
  let out = "";
  let from = 0;
  let end: RegExpExecArray | null | undefined; // the first end line after the current header; null: none left
  PEM_BEGIN.lastIndex = 0;
  for (let m = PEM_BEGIN.exec(text); m; m = PEM_BEGIN.exec(text)) {
    const afterHeader = PEM_BEGIN.lastIndex;
    if (end === undefined || (end !== null && end.index < afterHeader)) {
      PEM_END.lastIndex = afterHeader;
      end = PEM_END.exec(text);
    }
    let stop: number;
    if (end && end.index - m.index <= PEM_MAX_BYTES) {
      stop = end.index + end[0].length;
    } else {
      PEM_MATERIAL.lastIndex = afterHeader;
      PEM_MATERIAL.exec(text);
      stop = PEM_MATERIAL.lastIndex;
    }
    out += `${text.slice(from, m.index)}${redactedAs("private-key")}`;
    from = stop;
    PEM_BEGIN.lastIndex = stop;
  }
  return out + text.slice(from);
}

/** Redacts the value of each secret-named assignment; a name that is not secret gives up only its own text, so its value is read again. */
function assignments(text: string): string {
  let out = "";
  let from = 0;
  ASSIGNMENT.lastIndex = 0;
  // Only a secret name's value is read: the search stays linear however many names a text holds.
  for (let m = ASSIGNMENT.exec(text); m; m = ASSIGNMENT.exec(text)) {
    const [head, q, name, sep] = m as unknown as [string, string, string, string];
    const password = PASSWORD_NAME.test(name) || /passw(or)?d/i.test(name);
    if (!password && !isSecretKey(name)) continue;
    VALUE_HEAD.lastIndex = m.index + head.length;
    const value = VALUE_HEAD.exec(text)?.[0];
    if (!value) continue;
    // "Invalid token: the signature…" is prose: after a bare colon only a token-like value goes.
    if (!password && !q && !sep.includes("=") && !/^(?=.*\d).{8,}$/.test(value)) continue;
    VALUE_REST.lastIndex = VALUE_HEAD.lastIndex;
    VALUE_REST.exec(text);
    out += `${text.slice(from, m.index)}${head}${redactedAs(password ? "password" : "secret")}`;
    from = VALUE_REST.lastIndex;
    ASSIGNMENT.lastIndex = from;
  }
  return out + text.slice(from);
}

/** A deep copy of `value` with every secret-like field and string redacted. */
export function redact<T>(value: T, opts?: RedactOptions): T {
  return walk(value, 0, opts) as T;
}

function walk(value: unknown, depth: number, opts: RedactOptions | undefined): unknown {
  if (depth > 32) return REDACTED; // absurd nesting: refuse rather than risk a leak
  if (typeof value === "string") return redactText(value, opts);
  if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1, opts));
  if (value && typeof value === "object") {
    // fromEntries defines own properties: a key "__proto__" from JSON stays data, never a prototype.
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        redactText(k, opts),
        isSecretKey(k) && v !== null && v !== undefined && v !== "" ? REDACTED : walk(v, depth + 1, opts),
      ]),
    );
  }
  return value;
}
