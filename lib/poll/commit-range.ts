/**
 * The commits between the service's last successful deployment and a failing one (docs/events.md,
 * `changes_listed`). Pure: the platform lists an application's last 100 commits, newest first
 * (endpoint 16, docs/platform.md); the range is read off that list.
 */
import type { CommitRecord } from "../model/observations.js";
import type { ListedChanges } from "../alerts/changes-listed.js";

/** Commits an amendment shows; `total` counts the rest. */
export const CHANGES_SHOWN = 5;
/** What endpoint 16 lists. */
export const COMMITS_LISTED = 100;

/** Why a list is empty or partial, for people. */
export const CHANGE_NOTES = {
  budgetShort: "the request budget was short: the commits were not listed",
  noEarlierSuccess: "no earlier successful deployment of this service is known",
  sameCommit: "the same commit as the last successful deployment: nothing changed in the code",
  untilNotListed: "the failing commit is not among the commits the platform lists",
  rollback: "the failing commit is older than the last successful deployment's (a rollback)",
  sinceNotListed: "the last successful deployment's commit is not among the commits the platform lists",
  unavailable: (why: string) => `the commits could not be read (${why})`,
} as const;

/** Commit ids compare whole or by an abbreviation of at least 7 characters, case aside. */
export function sameCommit(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const [x, y] = [a.toLowerCase(), b.toLowerCase()];
  if (x === y) return true;
  const [short, long] = x.length < y.length ? [x, y] : [y, x];
  return short.length >= 7 && long.startsWith(short);
}

/** No commits listed, and why. */
export const unlisted = (since: string | undefined, until: string, note: string): ListedChanges =>
  ({ ...(since ? { since } : {}), until, commits: [], total: 0, more: false, note });

/**
 * The commits after `since` (exclusive) up to `until` (inclusive), newest first, at most `shown` of
 * them; `total` counts them all, and `more` says the range runs past what is listed (then `total` is a
 * lower bound). `listed` is the platform's list as it came, newest first.
 */
export function commitRange(
  listed: readonly CommitRecord[],
  since: string | undefined,
  until: string,
  shown = CHANGES_SHOWN,
): ListedChanges {
  const empty = (note: string) => unlisted(since, until, note);
  if (!since) return empty(CHANGE_NOTES.noEarlierSuccess);
  if (sameCommit(since, until)) return empty(CHANGE_NOTES.sameCommit);
  const u = listed.findIndex((c) => sameCommit(c.id, until));
  if (u < 0) return empty(CHANGE_NOTES.untilNotListed);
  const s = listed.findIndex((c) => sameCommit(c.id, since));
  if (s >= 0 && s < u) return empty(CHANGE_NOTES.rollback);
  const range = s > u ? listed.slice(u, s) : listed.slice(u);
  const more = s < 0;
  return {
    since,
    until,
    commits: range.slice(0, shown),
    total: range.length,
    more,
    // Past a full list the range simply runs on; in a shorter one the commit is gone (a rewritten history).
    ...(more && listed.length < COMMITS_LISTED ? { note: CHANGE_NOTES.sinceNotListed } : {}),
  };
}
