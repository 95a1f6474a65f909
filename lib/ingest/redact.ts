/**
 * Redaction of payloads before they are stored or forwarded. Webhook `request` payloads carry shared
 * secrets in headers and tokens in URLs (platform-facts.md); nothing secret-like may survive.
 *
 * Hand-written: the redaction libraries (fast-redact, pino's) redact by known paths, and these payloads
 * have no fixed paths — secrets hide under any key, and inside URL strings.
 */
export const REDACTED = "[REDACTED]";

/** Key names whose values are secrets, whatever their nesting. */
const SECRET_KEY =
  /(authori[sz]ation|secret|token|passw(or)?d|passphrase|credential|signature|cookie|session|private|(^|[-_.])key$|api[-_]?key|access[-_]?key|signing|bearer|auth$)/i;

/** Query parameters whose values are secrets. */
const SECRET_PARAM = /^(token|access_token|refresh_token|id_token|key|api_key|apikey|secret|signature|sig|password|pass|auth|code|x-amz-signature|x-amz-security-token)$/i;

const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\b/g;
const AUTH_SCHEME = /\b(Bearer|Token|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi;
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Removes credentials from a URL: userinfo and secret query parameters. Leaves other text alone. */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  let changed = false;
  if (u.username || u.password) {
    u.username = REDACTED;
    u.password = "";
    changed = true;
  }
  for (const name of [...u.searchParams.keys()]) {
    if (SECRET_PARAM.test(name) || isSecretKey(name)) {
      u.searchParams.set(name, REDACTED);
      changed = true;
    }
  }
  return changed ? u.toString() : url;
}

/** Redacts secrets inside free text: URLs with credentials, bearer/basic tokens, JWTs. */
export function redactText(text: string): string {
  return text
    .replace(URL_IN_TEXT, (m) => redactUrl(m))
    .replace(AUTH_SCHEME, (_m, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(JWT, REDACTED);
}

/** A deep copy of `value` with every secret-like field and string redacted. */
export function redact<T>(value: T): T {
  return walk(value, 0) as T;
}

function walk(value: unknown, depth: number): unknown {
  if (depth > 32) return REDACTED; // absurd nesting: refuse rather than risk a leak
  if (typeof value === "string") return redactText(value);
  if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
  if (value && typeof value === "object") {
    // fromEntries defines own properties: a key "__proto__" from JSON stays data, never a prototype.
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, isSecretKey(k) && v !== null && v !== undefined && v !== "" ? REDACTED : walk(v, depth + 1)]),
    );
  }
  return value;
}
