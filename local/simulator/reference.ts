/** The platform's reference lists (endpoints 17–20): fixed data, as on the real service. */
import type { Model } from "./state.js";

export const VENDOR3_REGIONS = [
  { name: "europe-west1", country_code: "BE", country: "Belgium", city: "St. Ghislain", arm_supported: true, zones: ["europe-west1-b", "europe-west1-c", "europe-west1-d"] },
  { name: "europe-west9", country_code: "FR", country: "France", city: "Paris", arm_supported: false, zones: ["europe-west9-a", "europe-west9-b", "europe-west9-c"] },
  { name: "us-central1", country_code: "US", country: "United States", city: "Council Bluffs", arm_supported: true, zones: ["us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"] },
  { name: "asia-northeast1", country_code: "JP", country: "Japan", city: "Tokyo", arm_supported: true, zones: ["asia-northeast1-a", "asia-northeast1-b", "asia-northeast1-c"] },
];

export const HELM_REPOSITORIES = [
  { kind: "HTTPS", required_config: { url: "string" }, is_mandatory: false },
  { kind: "OCI_GENERIC_CR", required_config: { url: "string", username: "string", password: "string" }, is_mandatory: true },
  { kind: "OCI_VENDOR2_CR", required_config: { region: "string", access_key_id: "string", secret_access_key: "string" }, is_mandatory: true },
  { kind: "OCI_VENDOR4_CR", required_config: { url: "string", token: "string" }, is_mandatory: true },
];

export const IAC_VERSIONS = ["1.5.7", "1.7.5", "1.9.8", "1.10.5", "1.11.4"].map((version) => ({ engine: "VENDOR5", version }));

/** The vendor4 repositories linked to the applications `visible` lets through. */
export function vendor4Repositories(model: Model, visible: (serviceId: string) => boolean): Array<Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const s of model.services.values()) {
    if (!s.repository || out.has(s.repository.name) || !visible(s.id)) continue;
    out.set(s.repository.name, { id: `r_${s.id.slice(0, 8)}`, name: s.repository.name, url: s.repository.url, default_branch: "main", is_private: true });
  }
  return [...out.values()];
}
