/** The sources Lookout polls and the keys that name them (cursors, dispatch state, health subjects). */
export type SourceKind = "webhook" | "deployment" | "cluster";

/** One polled source: a webhook's deliveries, an application's deployments, a cluster's logs. */
export interface SourceRef {
  kind: SourceKind;
  organizationId: string;
  /** The webhook, application or cluster id. */
  id: string;
}

const KEYS = new WeakMap<SourceRef, string>();

/** A source's key, once per source object: dispatch keys every watched source at each tick of the loop. */
export function sourceKey(s: SourceRef): string {
  let key = KEYS.get(s);
  if (key === undefined) KEYS.set(s, (key = `${s.kind}:${s.organizationId}/${s.id}`));
  return key;
}

export function parseSourceKey(key: string): SourceRef | undefined {
  const m = /^(webhook|deployment|cluster):([^/]+)\/(.+)$/.exec(key);
  return m ? { kind: m[1] as SourceKind, organizationId: m[2]!, id: m[3]! } : undefined;
}
