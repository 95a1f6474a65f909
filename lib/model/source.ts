/** The sources Lookout polls and the keys that name them (cursors, dispatch state, health subjects). */
export type SourceKind = "webhook" | "deployment" | "cluster";

/** One polled source: a webhook's deliveries, an application's deployments, a cluster's logs. */
export interface SourceRef {
  kind: SourceKind;
  organizationId: string;
  /** The webhook, application or cluster id. */
  id: string;
}

export const sourceKey = (s: SourceRef): string => `${s.kind}:${s.organizationId}/${s.id}`;

export function parseSourceKey(key: string): SourceRef | undefined {
  const m = /^(webhook|deployment|cluster):([^/]+)\/(.+)$/.exec(key);
  return m ? { kind: m[1] as SourceKind, organizationId: m[2]!, id: m[3]! } : undefined;
}
