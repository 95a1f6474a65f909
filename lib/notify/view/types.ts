/**
 * What the Slack and email renderers share: the facts a responder needs, drawn once from a detail as
 * plain (unescaped) text. The renderers escape for their medium.
 */
import type { DetailType, LookoutEventDetail } from "../../model/event.js";

export interface Fact {
  label: string;
  value: string;
}

export interface LinkFact {
  label: string;
  /** Already checked by safeHttpUrl. */
  url: string;
}

export interface CommitView {
  /** The short id shown (the platform's, or the first 7 characters of the id). */
  shortId?: string;
  /** First line of the message. */
  subject?: string;
  author?: string;
  tag?: string;
  url?: string;
}

export interface ErrorView {
  tag?: string;
  step?: string;
  message?: string;
  hint?: string;
  url?: string;
}

/** "What changed": the commits since the service's last successful deployment, at most five. */
export interface ChangesView {
  commits: CommitView[];
  /** Commits not shown ("+N more"). */
  more: number;
  /** The platform listed only part (its last 100): `total` and `more` are lower bounds. */
  atLeast: boolean;
  total: number;
  /** The range, short ids, when known. */
  since?: string;
  until?: string;
  /** Why the list is empty or partial, for people. */
  note?: string;
}

/** Where the event stands in its incident, for people. */
export interface IncidentView {
  /** "3 failures" so far (on a close: in all). */
  failures?: number;
  openedRaw: string;
  repeat: boolean;
  /** On a close: "14m". */
  lasted?: string;
  resolvedBy?: string;
}

/** Everything the renderers show, as plain text: they escape for their medium. */
export interface AlertView {
  detailType: DetailType;
  /** Upper-case, for subjects and headers: FAILED, STILL FAILING, RECOVERED, … */
  transition: string;
  /** "Deployment failed", "Webhook delivery failed", "Lookout health (token rejected)", … */
  title: string;
  emoji: string;
  /** What it is about: the service, cluster, webhook target or health subject. */
  subject: string;
  /** `project/environment`, when known. */
  place?: string;
  /** For email subjects: `environment/subject`, or the subject alone. */
  where: string;
  /** For email subjects: status, error tag or HTTP status. */
  what?: string;
  summary: string;
  fields: Fact[];
  commit?: CommitView;
  error?: ErrorView;
  /** Longer free text: the HTTP answer's excerpt, health detail. */
  notes: Fact[];
  links: LinkFact[];
  occurredAt?: Date;
  occurredRaw: string;
  id: string;
  /** The deployment execution, to find it on the platform. */
  executionId?: string;
  /** The first alert of the incident, when this is a follow-up. */
  incidentId?: string;
  incident?: IncidentView;
  changes?: ChangesView;
  /** The event closes its incident (recovered, target_recovered, cluster_recovered). */
  closing: boolean;
}

/** Adds one field to a view; empty values are left out. */
export type AddFact = (label: string, value: string | number | undefined | null) => void;

/** What one kind of event contributes to its view; everything else is the same for every kind. */
export interface KindView {
  /** What the alert is about: the service, cluster, webhook target or health subject. */
  subject(detail: LookoutEventDetail): string;
  /** For email subjects: a status, error tag or HTTP status. */
  what(detail: LookoutEventDetail): string | undefined;
  /** Fields shown first, before the service and place. */
  leadingFields?(detail: LookoutEventDetail, add: AddFact): void;
  /** The service's label, when the alert is not about the service itself (default "Service"). */
  serviceLabel?: string;
  /** Fields shown after the service and place. */
  fields?(detail: LookoutEventDetail, add: AddFact): void;
  /** Header words [TRANSITION, Title] for a transition the shared table does not name. */
  unnamedTransition?(detail: LookoutEventDetail): [string, string];
}
