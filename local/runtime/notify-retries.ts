/**
 * One machine's stand-in for the notify queues' redelivery: an event whose delivery is unfinished (a
 * receiver failed, or another sender held it and may have died) is kept in `<data_dir>/notify-retries.json`
 * and delivered again at each later pass, so a crash or restart in between loses nothing. Delivery is
 * idempotent per (alert, receiver), so a retry sends only what is still owed. After `maxAttempts`
 * passes an event is dead-lettered to `notify-dead-letters.ndjson`, as SQS would after its
 * maxReceiveCount.
 */
import { appendFile, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { LookoutEventEnvelope } from "../../lib/model/event.js";
import type { Log } from "../../lib/model/log.js";
import { unfinished, type Delivery } from "../../lib/notify/notifier.js";

export const RETRIES_FILE = "notify-retries.json";
export const DEAD_LETTERS_FILE = "notify-dead-letters.ndjson";

interface Pending {
  envelope: LookoutEventEnvelope;
  attempts: number;
  first_at: string;
}

export interface NotifyRetriesOptions {
  dataDir: string;
  /** Delivers one event to every receiver its routes name; idempotent per (alert, receiver). */
  notify: (envelope: LookoutEventEnvelope) => Promise<Delivery[]>;
  now: () => Date;
  log: Log;
  /** Passes before an event is dead-lettered (a pass a tick: 30 ≈ half an hour at the default interval). */
  maxAttempts?: number;
}

export class NotifyRetries {
  private readonly file: string;
  /** One read-modify-write at a time: the bus subscriber and the retry pass share the file. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: NotifyRetriesOptions) {
    this.file = join(opts.dataDir, RETRIES_FILE);
  }

  /** Delivers an event, keeping it for a later pass when that delivery is unfinished. */
  async deliver(envelope: LookoutEventEnvelope): Promise<Delivery[]> {
    const deliveries = await this.attempt(envelope);
    if (!deliveries || unfinished(deliveries)) {
      await this.update((pending) => {
        pending[envelope.detail.id] ??= { envelope, attempts: 0, first_at: this.opts.now().toISOString() };
      });
    }
    return deliveries ?? [];
  }

  /** One delivery; undefined when it broke mid-way (the store unreachable): said in one line, retried, never dropped. */
  private async attempt(envelope: LookoutEventEnvelope): Promise<Delivery[] | undefined> {
    try {
      return await this.opts.notify(envelope);
    } catch (err) {
      this.opts.log.error("delivery interrupted; it will be retried", { alert: envelope.detail.id, error: (err as Error).message });
      return undefined;
    }
  }

  /** One pass over what is owed; returns how many events are still pending after it. */
  async retry(): Promise<number> {
    const pending = await this.read();
    for (const [id, entry] of Object.entries(pending)) {
      const deliveries = await this.attempt(entry.envelope);
      await this.update(async (latest) => {
        if (deliveries && !unfinished(deliveries)) return void delete latest[id];
        const attempts = (latest[id]?.attempts ?? entry.attempts) + 1;
        if (attempts < (this.opts.maxAttempts ?? 30)) return void (latest[id] = { ...entry, attempts });
        delete latest[id];
        await appendFile(join(this.opts.dataDir, DEAD_LETTERS_FILE), `${JSON.stringify({ ...entry, attempts, deliveries })}\n`, "utf8");
        this.opts.log.error("gave up delivering an event; it is in the dead letters", { alert: id, attempts, file: DEAD_LETTERS_FILE });
      });
    }
    return this.pending();
  }

  /** How many events are owed now (a later pass delivers them). */
  async pending(): Promise<number> {
    return Object.keys(await this.read()).length;
  }

  private async read(): Promise<Record<string, Pending>> {
    try {
      return JSON.parse(await readFile(this.file, "utf8")) as Record<string, Pending>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw err;
    }
  }

  private update(change: (pending: Record<string, Pending>) => void | Promise<void>): Promise<void> {
    const next = this.queue.then(async () => {
      const pending = await this.read();
      await change(pending);
      await mkdir(this.opts.dataDir, { recursive: true });
      // Written aside and renamed: a crash mid-write leaves the old file, never half of one.
      await writeFile(`${this.file}.tmp`, JSON.stringify(pending), "utf8");
      await rename(`${this.file}.tmp`, this.file);
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}
