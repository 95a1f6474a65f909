/**
 * The two authentication schemes of the platform: `Token <api token>` (never expires) and
 * `Bearer <JWT>` (expires, on the simulated clock). JWTs are HS256-signed with a per-seed secret.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { SimClock } from "./clock.js";

export type TokenKind = "token" | "bearer";

export interface Principal {
  userId: string;
  kind: TokenKind;
  /** The credential itself: rate limits are counted per token. */
  token: string;
}

export type AuthResult = { ok: true; principal: Principal } | { ok: false; kind: TokenKind | "none" };

const b64url = (s: string | Buffer): string => Buffer.from(s).toString("base64url");

/** A stable secret-looking string derived from the seed (tokens must not change between runs of a seed). */
export function derivedSecret(seed: number, purpose: string, length = 40): string {
  return createHash("sha256").update(`lookout-simulator:${seed}:${purpose}`).digest("hex").slice(0, length);
}

export class Authenticator {
  private issued = 0;

  constructor(
    private readonly signingKey: string,
    private readonly clock: SimClock,
    /** API token → user id. */
    private readonly apiTokens: ReadonlyMap<string, string>,
  ) {}

  /** A JWT for `userId`, valid for `ttlMs` of simulated time from now. */
  issueBearer(userId: string, ttlMs: number): string {
    const iat = Math.floor(this.clock.nowMs() / 1000);
    const header = b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));
    const payload = b64url(
      JSON.stringify({
        iss: "https://auth.platform.simulator/",
        aud: "platform-api",
        sub: userId,
        iat,
        exp: Math.floor((this.clock.nowMs() + ttlMs) / 1000),
        jti: `sim-${++this.issued}`,
      }),
    );
    return `${header}.${payload}.${this.sign(`${header}.${payload}`)}`;
  }

  authenticate(header: string | undefined): AuthResult {
    const m = /^(\S+) +(\S+)$/.exec(header?.trim() ?? "");
    if (!m) return { ok: false, kind: "none" };
    const scheme = m[1]!.toLowerCase();
    const credential = m[2]!;
    if (scheme === "token") {
      const userId = this.apiTokens.get(credential);
      return userId ? { ok: true, principal: { userId, kind: "token", token: credential } } : { ok: false, kind: "token" };
    }
    if (scheme === "bearer") {
      const userId = this.verifyJwt(credential);
      return userId ? { ok: true, principal: { userId, kind: "bearer", token: credential } } : { ok: false, kind: "bearer" };
    }
    return { ok: false, kind: "none" };
  }

  private sign(data: string): string {
    return createHmac("sha256", this.signingKey).update(data).digest("base64url");
  }

  /** The subject of a well-signed, unexpired JWT, else undefined. */
  private verifyJwt(jwt: string): string | undefined {
    const parts = jwt.split(".");
    if (parts.length !== 3) return undefined;
    const [header, payload, signature] = parts as [string, string, string];
    const expected = Buffer.from(this.sign(`${header}.${payload}`));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { sub?: unknown; exp?: unknown };
      if (typeof claims.sub !== "string" || typeof claims.exp !== "number") return undefined;
      return claims.exp * 1000 > this.clock.nowMs() ? claims.sub : undefined;
    } catch {
      return undefined;
    }
  }
}
