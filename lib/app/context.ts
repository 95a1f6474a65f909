/**
 * Names the configuration gives (README, "Configuration"): applications' name, project and environment,
 * clusters' names, organizations' names. Built once here for every way of running, so a route on
 * `environment: production` matches in the cloud as it does on one machine.
 */
import type { Config } from "../config/load.js";
import type { ServiceContext } from "../model/observations.js";

/** Names given in the configuration, by application id. */
export function configuredContexts(config: Pick<Config, "watch">): Map<string, ServiceContext> {
  const out = new Map<string, ServiceContext>();
  for (const w of config.watch) {
    for (const a of w.applications) {
      const ctx: ServiceContext = {
        ...(a.name ? { name: a.name } : {}),
        ...(a.project ? { project: { id: a.project, name: a.project } } : {}),
        ...(a.environment ? { environment: { id: a.environment, name: a.environment } } : {}),
      };
      if (Object.keys(ctx).length) out.set(a.id, ctx);
    }
  }
  return out;
}

/** Cluster names given in the configuration (`clusters: [{ id, name }]`), by cluster id. */
export function configuredClusterNames(config: Pick<Config, "watch">): Map<string, string> {
  const out = new Map<string, string>();
  for (const w of config.watch) for (const c of w.clusters) if (c.name) out.set(c.id, c.name);
  return out;
}

/** Organization names given in the configuration (`watch[].name`), by organization id. */
export function configuredOrganizationNames(config: Pick<Config, "watch">): Map<string, string> {
  const out = new Map<string, string>();
  for (const w of config.watch) if (w.name) out.set(w.organization, w.name);
  return out;
}
