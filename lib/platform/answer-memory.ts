/**
 * Room for the platform's answers when several polls share one process (the poll function takes a
 * batch of sources and polls them at once). The delivery log and the cluster log come whole, with no
 * paging, so one answer may be a flood of tens of MB that parses to a few hundred (docs/limits.md, "A
 * flood of records"); two at once would not fit the function's memory. Every poll may read a small
 * answer; past `smallBytes`, an answer needs the one large-answer lease, which its poll keeps until it
 * ends (its entries live that long). A poll that finds the lease taken is deferred: its answer is not
 * read further, nothing is stored, and dispatch plans the source again at its next tick.
 *
 * The poll is found through AsyncLocalStorage rather than passed down: the platform client is shared
 * by the polls of a batch, and only its body reader needs to know whose answer it reads. Outside a
 * poll's scope (one machine's run loop, tests, the CLI) nothing is limited.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** An answer up to this size never waits: ten at once parse to well under 100 MB. */
export const SMALL_ANSWER_BYTES = 1024 * 1024;

/** One poll's claim on the shared room. */
interface PollTicket {
  room: AnswerRoom;
  holdsLease: boolean;
}

const current = new AsyncLocalStorage<PollTicket>();

export class AnswerRoom {
  private leaseHeld = false;
  /** Polls deferred since this room was made: their answer was large while another poll's was. */
  deferred = 0;

  constructor(readonly smallBytes = SMALL_ANSWER_BYTES) {}

  /**
   * Runs one poll in this room; a lease it took is given back when it ends, however it ends. A poll
   * known to bring a large answer (`reserve`: deferred last time) takes the lease before it reads, so
   * another poll's large answer cannot defer it again.
   */
  async run<T>(poll: () => Promise<T>, opts: { reserve?: boolean } = {}): Promise<T> {
    const reserved = !!opts.reserve && !this.leaseHeld;
    if (reserved) this.leaseHeld = true;
    const ticket: PollTicket = { room: this, holdsLease: reserved };
    try {
      return await current.run(ticket, poll);
    } finally {
      if (ticket.holdsLease) this.leaseHeld = false;
    }
  }

  /** Whether the poll whose ticket this is may hold an answer of `bytes`. */
  admit(ticket: PollTicket, bytes: number): boolean {
    if (bytes <= this.smallBytes || ticket.holdsLease) return true;
    if (this.leaseHeld) {
      this.deferred++;
      return false;
    }
    this.leaseHeld = ticket.holdsLease = true;
    return true;
  }
}

/** Whether the current poll (if any runs in a room) may hold an answer of `bytes` read so far. */
export function mayHoldAnswer(bytes: number): boolean {
  const ticket = current.getStore();
  return ticket ? ticket.room.admit(ticket, bytes) : true;
}
