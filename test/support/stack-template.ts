/**
 * The stack's resources as serverless.yml assembles them, without packaging: the YAML files its
 * `resources` names (infra/*.yml) and the part generated from a configuration (infra/stack.ts), with the
 * service and stage filled in. For tests that create some of them on moto_server as the template defines
 * them; test/integration/infra/stack.test.ts checks the packaged template itself.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { type Cfn, fromConfig } from "../../infra/stack.js";

const ROOT = resolve(import.meta.dirname, "../..");

export function stackResources(configFile: string, o: { service: string; stage: string }): Record<string, Cfn> {
  const serverless = parseYaml(readFileSync(resolve(ROOT, "serverless.yml"), "utf8")) as { resources: string[] };
  const out: Record<string, Cfn> = {};
  for (const entry of serverless.resources) {
    const file = /^\$\{file\(\.\/(.+)\)\}$/.exec(entry)?.[1];
    if (!file) continue; // the generated part, below
    const text = readFileSync(resolve(ROOT, file), "utf8").replaceAll("${self:service}", o.service).replaceAll("${sls:stage}", o.stage);
    Object.assign(out, (parseYaml(text) as { Resources?: Record<string, Cfn> }).Resources ?? {});
  }
  Object.assign(out, fromConfig(ROOT, configFile, o).cloudformation.Resources);
  return out;
}

/** A property of the template with `Fn::GetAtt` and `Ref` resolved by `lookup` (logical id, attribute or "Ref"). */
export function resolveRefs(value: unknown, lookup: (id: string, attr: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveRefs(v, lookup));
  if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (Array.isArray(o["Fn::GetAtt"])) return lookup(o["Fn::GetAtt"][0] as string, o["Fn::GetAtt"][1] as string);
    if (typeof o.Ref === "string") return lookup(o.Ref, "Ref");
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, resolveRefs(v, lookup)]));
  }
  return value;
}
