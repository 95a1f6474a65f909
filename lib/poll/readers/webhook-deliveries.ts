/**
 * A webhook's deliveries: the change feed. Each failed delivery (answered outside 2xx) is alerted once,
 * and opens or joins its target's incident (webhook + target host), which the next 2xx to it closes;
 * the services new deliveries name are read next by dispatch, and their names are learned.
 */
import type { WebhookEvent } from "../../platform/schemas.js";
import { deliveryDetail, incidentSubject, targetRecoveredDetail, withOrganizationName } from "../../alerts/build.js";
import type { NamedService } from "../../model/observations.js";
import { normalizeWebhookDelivery } from "../normalize.js";
import { readList } from "./list.js";
import type { PollContext, SourceReader } from "./reader.js";

export const webhookDeliveries: SourceReader = {
  read(poll: PollContext) {
    const { req, deps, result } = poll;
    const { organizationId, id } = req.source;
    return readList(poll, {
      read: () => deps.client.list("listWebhookEvents", { path: { organizationId, webhookId: id } }),
      normalize: (e: WebhookEvent) => normalizeWebhookDelivery(e, req.source),
      occurredAt: (r) => r.created_at,
      detail: (r, at) => withOrganizationName(deliveryDetail(r, at), deps.organizationNames),
      incidents: {
        subject: (r) => incidentSubject.webhookTarget(id, r.target_host),
        outcome: (r) => (r.failed ? "failure" : "success"),
        signature: (r) => String(r.status_code),
        resolvedBy: (r) => `HTTP ${r.status_code} to ${r.target_host ?? "its target"}`,
        closing: (r, close, at) => withOrganizationName(targetRecoveredDetail(r, close, at), deps.organizationNames),
      },
      afterInsert: async (recs) => {
        // The change feed: these services just started or ended a deployment — read them next.
        const named = recs.flatMap((r) => r.services);
        result.hotServices = [...new Set([...result.hotServices, ...named.map((s) => s.id)])];
        const namedAt = (result.namedAt ??= {});
        for (const r of recs) {
          const at = r.created_at === undefined ? NaN : Date.parse(r.created_at);
          if (Number.isFinite(at)) for (const s of r.services) namedAt[s.id] = Math.max(namedAt[s.id] ?? -Infinity, at);
        }
        await deps.store.learnServices(named.map((s) => ({ id: s.id, ctx: contextOf(s) })));
      },
    });
  },
};

/** What a delivery's payload tells of a service: its name, project and environment, where given. */
function contextOf(s: NamedService) {
  return {
    ...(s.name ? { name: s.name } : {}),
    ...(s.project?.id ? { project: { id: s.project.id, ...(s.project.name ? { name: s.project.name } : {}) } } : {}),
    ...(s.environment?.id
      ? { environment: { id: s.environment.id, ...(s.environment.name ? { name: s.environment.name } : {}), ...(s.environment.type ? { type: s.environment.type } : {}) } }
      : {}),
  };
}
