/**
 * Platform component resolution (endpoint 3): from a small catalogue of components, which fields the
 * client shows, which platform-profile values are still missing, and which entered values break a
 * constraint. Pure.
 */
export interface Constraints {
  allowedValues?: string[];
  min?: number;
  max?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

export interface FieldDef {
  key: string;
  type: "string" | "integer" | "boolean";
  required: boolean;
  label: string;
  sensitive: boolean;
  constraints: Constraints;
  defaultValue: unknown;
  description: string;
}

interface Component {
  fields: FieldDef[];
  /** Keys the platform profile (`profileConfig`) must provide. */
  profileRequirements: FieldDef[];
  bindings: Array<{ input: string; fromComponent: string; output: string }>;
}

const field = (key: string, type: FieldDef["type"], extra: Partial<FieldDef> = {}): FieldDef => ({
  key, type, required: false, label: key, sensitive: false, constraints: {}, defaultValue: null, description: "", ...extra,
});

export const COMPONENTS: Record<string, Component> = {
  "cert-manager": {
    fields: [
      field("email", "string", { required: true, label: "ACME e-mail", constraints: { pattern: "^[^@\\s]+@[^@\\s]+$", maxLength: 254 }, description: "Contact address for certificate expiry notices" }),
      field("issuer", "string", { label: "Issuer", constraints: { allowedValues: ["letsencrypt", "letsencrypt-staging"] }, defaultValue: "letsencrypt" }),
      field("replicas", "integer", { label: "Replicas", constraints: { min: 1, max: 5 }, defaultValue: 1 }),
    ],
    profileRequirements: [field("dnsProvider", "string", { required: true, label: "DNS provider", constraints: { allowedValues: ["vendor2", "vendor3", "rfc2136"] } })],
    bindings: [{ input: "dnsZone", fromComponent: "external-dns", output: "zone" }],
  },
  "ingress-nginx": {
    fields: [
      field("replicas", "integer", { label: "Replicas", constraints: { min: 1, max: 20 }, defaultValue: 2 }),
      field("loadBalancerType", "string", { label: "Load balancer", constraints: { allowedValues: ["nlb", "alb"] }, defaultValue: "nlb" }),
      field("proxyBodySize", "string", { label: "Max body size", constraints: { pattern: "^[0-9]+[kmg]?$", maxLength: 8 }, defaultValue: "100m" }),
    ],
    profileRequirements: [field("publicSubnetIds", "string", { required: true, label: "Public subnets" })],
    bindings: [],
  },
  "external-dns": {
    fields: [
      field("domain", "string", { required: true, label: "Domain", constraints: { minLength: 3, maxLength: 253 } }),
      field("apiToken", "string", { label: "DNS API token", sensitive: true, constraints: { minLength: 20 } }),
    ],
    profileRequirements: [field("dnsProvider", "string", { required: true, label: "DNS provider" })],
    bindings: [],
  },
};

export interface ResolveInput {
  profileConfig?: Record<string, unknown>;
  clusterInputs?: Record<string, unknown>;
  componentOutputs?: Record<string, unknown>;
}

export function resolveComponent(clusterId: string, componentKey: string, input: ResolveInput): Record<string, unknown> | undefined {
  const c = COMPONENTS[componentKey];
  if (!c) return undefined;
  const profile = input.profileConfig ?? {};
  const values = { ...profile, ...input.clusterInputs };
  const violations = [
    ...c.fields.flatMap((f) => (f.key in values ? check(f, values[f.key], `${f.key in (input.clusterInputs ?? {}) ? "clusterInputs" : "profileConfig"}.${f.key}`) : [])),
    ...c.profileRequirements.flatMap((f) => (f.key in profile ? check(f, profile[f.key], `profileConfig.${f.key}`) : [])),
  ];
  return {
    clusterId,
    componentKey,
    fields: c.fields,
    requirements: c.profileRequirements.filter((r) => profile[r.key] === undefined || profile[r.key] === null || profile[r.key] === "")
      .map((r) => ({ ...r, scope: "PLATFORM_PROFILE", status: "MISSING" })),
    // Outputs already supplied by the other component need no binding.
    componentBindings: c.bindings.filter((b) => !(input.componentOutputs && b.output in input.componentOutputs)),
    violations,
  };
}

/** The violations of one entered value. */
export function check(f: FieldDef, value: unknown, fieldPath: string): Array<{ code: string; fieldPath: string; message: string }> {
  const v = (code: string, message: string) => [{ code, fieldPath, message: `${f.label}: ${message}` }];
  const c = f.constraints;
  if (f.type === "integer") {
    if (typeof value !== "number" || !Number.isInteger(value)) return v("TYPE_MISMATCH", "must be a whole number");
    if (c.min !== undefined && value < c.min) return v("OUT_OF_RANGE", `must be at least ${c.min}`);
    if (c.max !== undefined && value > c.max) return v("OUT_OF_RANGE", `must be at most ${c.max}`);
    return [];
  }
  if (f.type === "boolean") return typeof value === "boolean" ? [] : v("TYPE_MISMATCH", "must be true or false");
  if (typeof value !== "string") return v("TYPE_MISMATCH", "must be a string");
  if (c.allowedValues && !c.allowedValues.includes(value)) return v("NOT_ALLOWED", `must be one of ${c.allowedValues.join(", ")}`);
  if (c.minLength !== undefined && value.length < c.minLength) return v("TOO_SHORT", `must be at least ${c.minLength} characters`);
  if (c.maxLength !== undefined && value.length > c.maxLength) return v("TOO_LONG", `must be at most ${c.maxLength} characters`);
  if (c.pattern && !new RegExp(c.pattern).test(value)) return v("PATTERN_MISMATCH", `must match ${c.pattern}`);
  return [];
}
