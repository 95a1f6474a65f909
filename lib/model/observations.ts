/**
 * What Lookout reads of the platform, normalized (lib/poll/normalize.ts makes these): webhook
 * deliveries, cluster log entries, deployment observations, and what it knows of a service besides.
 */
import type { NamedRef } from "./event.js";

/** A service a webhook payload names: the change feed and the directory of names learn from these. */
export interface NamedService {
  id: string;
  name?: string;
  type: string;
  project?: { id?: string; name?: string };
  environment?: { id?: string; name?: string; type?: string };
}

export interface WebhookDeliveryRecord {
  record_kind: "webhook_delivery";
  id: string;
  organization_id: string;
  webhook_id: string;
  created_at?: string;
  delivery_kind?: string;
  matched_event?: string;
  target_host?: string;
  target_url?: string;
  status_code: number | null;
  failed: boolean;
  response_excerpt?: string;
  /** The payload that was sent, redacted. */
  request?: Record<string, unknown>;
  services: NamedService[];
}

export interface ClusterLogRecord {
  record_kind: "cluster_log";
  /** Content hash: entries have no id (docs/platform.md). */
  id: string;
  organization_id: string;
  cluster_id: string;
  timestamp?: string;
  type?: string;
  step?: string;
  failed: boolean;
  message?: string;
  error?: { tag?: string; message?: string; hint?: string; link?: string; underlying?: string };
  provider_kind?: string;
  region?: string;
  transmitter?: { type?: string; id?: string; name?: string };
}

export interface CommitRecord {
  id?: string;
  message?: string;
  author?: string;
  link?: string;
  tag?: string;
  created_at?: string;
}

/** One read of one deployment execution: the same execution is observed again as it progresses. */
export interface DeploymentObservation {
  record_kind: "deployment";
  organization_id: string;
  application_id: string;
  service_id: string;
  service_name?: string;
  service_type?: string;
  execution_id: string;
  /** True when the platform gave no execution_id and one was derived (old entries). */
  execution_id_derived: boolean;
  status: string;
  /** A UTC ISO instant; absent when the platform's time is missing, unreadable or implausible (lib/model/time.ts). */
  created_at?: string;
  updated_at?: string;
  /** The platform's text, when it differs from the instant above (an offset, nanoseconds, an odd value). */
  created_at_raw?: string;
  updated_at_raw?: string;
  triggered_by?: string;
  origin?: string;
  commit?: CommitRecord;
  total_duration?: string;
  status_details?: { action?: string; status?: string; sub_action?: string };
}

/** What Lookout knows of a service beyond the deployment entry: from configuration and the change feed. */
export interface ServiceContext {
  name?: string;
  project?: NamedRef;
  environment?: NamedRef & { type?: string };
}
