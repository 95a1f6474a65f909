/** Git commits of applications (endpoint 16 and `details.commit` of deployments). */
import type { Commit } from "../../lib/platform/schemas.js";
import { iso } from "./clock.js";
import type { Rng } from "./ids.js";
import type { Service } from "./state.js";

const MESSAGES = [
  "fix: retry the payment webhook on 502",
  "feat: add the export endpoint",
  "chore: bump dependencies",
  "refactor: split the order service",
  "fix: handle empty carts",
  "perf: cache the product catalogue",
  "feat: dark mode",
  "fix(auth): refresh tokens before they expire",
];
const AUTHORS = ["Ada Lovelace", "Grace Hopper", "Linus Torvalds", "Margaret Hamilton", "Dennis Ritchie"];

export const MAX_COMMITS = 100;

/** A commit of `app`'s repository at `atMs`; `given` fields win over generated ones. */
export function makeCommit(rng: Rng, app: Service, atMs: number, given: Partial<Commit> = {}): Commit {
  const sha = given.git_commit_id ?? rng.hex(40);
  const author = given.author_name ?? rng.pick(AUTHORS);
  const repoUrl = app.repository?.url ?? `https://vendor4.example/acme/${app.name}`;
  return {
    created_at: iso(atMs),
    git_commit_id: sha,
    tag: rng.chance(0.2) ? `v1.${rng.int(0, 40)}.${rng.int(0, 9)}` : null,
    message: rng.pick(MESSAGES),
    author_name: author,
    author_avatar_url: `https://avatars.vendor4.example/${author.toLowerCase().replace(/\s+/g, "-")}.png`,
    commit_page_url: `${repoUrl}/commit/${sha}`,
    // Only the fields actually given: an explicit `undefined` must not erase a generated one.
    ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)),
  };
}

/** Puts a commit at the head of the list (newest first) unless it is already known; keeps the last 100. */
export function addCommit(list: Commit[], commit: Commit): Commit {
  const known = list.find((c) => c.git_commit_id === commit.git_commit_id);
  if (known) return known;
  list.unshift(commit);
  if (list.length > MAX_COMMITS) list.length = MAX_COMMITS;
  return commit;
}

/** Endpoint 16's query: `startId` returns the commits after (older than) that one; `gitCommitId` filters. */
export function selectCommits(list: readonly Commit[], query: { startId?: string; gitCommitId?: string }): Commit[] {
  let out = list.slice(0, MAX_COMMITS);
  if (query.startId !== undefined) {
    const i = out.findIndex((c) => c.git_commit_id === query.startId);
    out = i < 0 ? [] : out.slice(i + 1);
  }
  if (query.gitCommitId !== undefined) out = out.filter((c) => c.git_commit_id === query.gitCommitId);
  return out;
}
