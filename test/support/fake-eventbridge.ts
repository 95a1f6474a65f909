/**
 * An EventBus that behaves like PutEvents, for tests: no emulator can make EventBridge fail some entries
 * of a call. Whole-call rules (more than 10 entries, more than 256 KB) throw a ValidationException as the
 * service does; chosen entries fail with a per-entry ErrorCode, always or for their first N attempts.
 */
import {
  type BusEntry,
  type EventBus,
  MAX_ENTRIES_PER_CALL,
  MAX_ENTRY_BYTES,
  MAX_REQUEST_BYTES,
  type PutEventsResult,
  type PutEventsResultEntry,
  entrySize,
} from "../../lib/alerts/bus.js";

export class ValidationException extends Error {
  override name = "ValidationException";
}

type EntryMatch = (entry: BusEntry, detailId: string | undefined) => boolean;

interface FailureRule {
  match: EntryMatch;
  errorCode: string;
  /** Fail this many attempts per entry, then accept; Infinity = always. */
  attempts: number;
}

/** Matches entries by the alert id in their detail. */
export const byId = (...ids: string[]): EntryMatch => (_e, id) => id !== undefined && ids.includes(id);
export const anyEntry: EntryMatch = () => true;

export class FakeEventBridge implements EventBus {
  /** Every call as sent (including those that threw). */
  readonly calls: BusEntry[][] = [];
  /** Entries accepted, with the event id given, in order. */
  readonly accepted: { entry: BusEntry; eventId: string }[] = [];
  private readonly rules: FailureRule[] = [];
  private readonly attempts = new Map<string, number>();
  private callErrors: Error[] = [];
  private nextId = 1;

  /** Entries matching fail every time with `errorCode`. */
  failAlways(match: EntryMatch, errorCode = "InternalFailure"): this {
    this.rules.push({ match, errorCode, attempts: Infinity });
    return this;
  }

  /** Entries matching fail their first `n` attempts (counted per entry), then succeed. */
  failFirst(n: number, match: EntryMatch = anyEntry, errorCode = "ThrottlingException"): this {
    this.rules.push({ match, errorCode, attempts: n });
    return this;
  }

  /** The next calls throw these errors as a whole (network, throttled call), one per call. */
  throwOnNextCalls(...errors: Error[]): this {
    this.callErrors.push(...errors);
    return this;
  }

  /** How often an entry (by alert id) was sent. */
  attemptsOf(id: string): number {
    return this.attempts.get(id) ?? 0;
  }

  acceptedIds(): string[] {
    return this.accepted.map((a) => detailIdOf(a.entry) ?? "?");
  }

  async putEvents(entries: BusEntry[]): Promise<PutEventsResult> {
    this.calls.push(entries);
    if (entries.length < 1 || entries.length > MAX_ENTRIES_PER_CALL) {
      throw new ValidationException(
        `1 validation error detected: Value '${entries.length}' at 'entries' failed to satisfy constraint: Member must have length less than or equal to ${MAX_ENTRIES_PER_CALL}`,
      );
    }
    const oversized = entries.find((e) => entrySize(e) > MAX_ENTRY_BYTES);
    if (oversized || entries.reduce((n, e) => n + entrySize(e), 0) > MAX_REQUEST_BYTES) {
      throw new ValidationException("Total size of the entries in the request is over the limit.");
    }
    const callError = this.callErrors.shift();
    if (callError) throw callError;

    const results: PutEventsResultEntry[] = entries.map((entry) => {
      const id = detailIdOf(entry);
      const key = id ?? entry.Detail;
      const attempt = (this.attempts.get(key) ?? 0) + 1;
      this.attempts.set(key, attempt);
      if (!isJsonObject(entry.Detail)) return { ErrorCode: "MalformedDetail", ErrorMessage: "Detail is malformed." };
      const rule = this.rules.find((r) => r.match(entry, id) && attempt <= r.attempts);
      if (rule) return { ErrorCode: rule.errorCode, ErrorMessage: `${rule.errorCode} (fake, attempt ${attempt})` };
      const eventId = `fake-${String(this.nextId++).padStart(6, "0")}`;
      this.accepted.push({ entry, eventId });
      return { EventId: eventId };
    });
    return { FailedEntryCount: results.filter((r) => "ErrorCode" in r).length, Entries: results };
  }
}

function detailIdOf(entry: BusEntry): string | undefined {
  try {
    const d = JSON.parse(entry.Detail) as { id?: unknown };
    return typeof d?.id === "string" ? d.id : undefined;
  } catch {
    return undefined;
  }
}

function isJsonObject(s: string): boolean {
  try {
    const v: unknown = JSON.parse(s);
    return !!v && typeof v === "object" && !Array.isArray(v);
  } catch {
    return false;
  }
}
