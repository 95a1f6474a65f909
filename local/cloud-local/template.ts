/**
 * The packaged CloudFormation template as `lookout cloud-local` reads it (docs/cloud-local.md): its
 * resources in the order CloudFormation would create them, and their properties with the intrinsic
 * functions the template uses resolved (Ref, Fn::GetAtt, Fn::Sub, Fn::Join, Fn::Select) against the
 * physical ids of what was created on one machine. Written by hand: the maintained resolvers belong to
 * whole emulators (LocalStack, moto's CloudFormation, which lacks Pipes and the Scheduler); this one is
 * the part we need and fails naming the path of anything it cannot resolve.
 */
import { readFileSync } from "node:fs";

export type Cfn = Record<string, any>;

export interface Template {
  Resources: Record<string, { Type: string; Properties?: Cfn; DependsOn?: string | string[] }>;
  Outputs?: Cfn;
}

/** The template `serverless package` wrote (scripts/package.ts gives its path). */
export function readPackagedTemplate(file: string): Template {
  const parsed = JSON.parse(readFileSync(file, "utf8")) as Template;
  if (!parsed?.Resources || typeof parsed.Resources !== "object") throw new Error(`${file}: no Resources: is it a packaged CloudFormation template?`);
  return parsed;
}

/** What a created resource answers to `Ref` and `Fn::GetAtt`. */
export interface Physical {
  ref: string;
  attrs: Record<string, string>;
}

/** The account the template is resolved in: AWS's pseudo parameters. */
export interface Account {
  region: string;
  accountId: string;
  stackName: string;
}

/** An intrinsic the resolver cannot answer: the path in the template says where. */
export class TemplateError extends Error {
  constructor(readonly path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = "TemplateError";
  }
}

export class Resolver {
  private readonly physical = new Map<string, Physical>();

  constructor(private readonly account: Account) {}

  set(logicalId: string, p: Physical): void {
    this.physical.set(logicalId, p);
  }

  get(logicalId: string): Physical | undefined {
    return this.physical.get(logicalId);
  }

  /** A value of the template with every intrinsic function resolved; `path` names it in errors. */
  resolve(value: unknown, path: string): any {
    if (Array.isArray(value)) return value.map((v, i) => this.resolve(v, `${path}[${i}]`));
    if (!value || typeof value !== "object") return value;
    const o = value as Cfn;
    const keys = Object.keys(o);
    if (keys.length === 1) {
      const [fn] = keys as [string];
      const arg = o[fn];
      const at = `${path}.${fn}`;
      if (fn === "Ref") return this.ref(String(arg), at);
      if (fn === "Fn::GetAtt") {
        const [id, attr] = Array.isArray(arg) ? arg : String(arg).split(".");
        return this.attr(String(id), String(attr), at);
      }
      if (fn === "Fn::Sub") return this.sub(arg, at);
      if (fn === "Fn::Join") {
        const [sep, parts] = arg as [string, unknown[]];
        return (this.resolve(parts, at) as unknown[]).join(sep);
      }
      if (fn === "Fn::Select") {
        const [index, list] = arg as [number | string, unknown];
        return (this.resolve(list, at) as unknown[])[Number(this.resolve(index, at))];
      }
      if (fn.startsWith("Fn::")) throw new TemplateError(at, `${fn} is not supported by cloud-local`);
    }
    return Object.fromEntries(keys.map((k) => [k, this.resolve(o[k], `${path}.${k}`)]));
  }

  private pseudo(name: string): string | undefined {
    const { region, accountId, stackName } = this.account;
    const values: Record<string, string> = {
      "AWS::Region": region, "AWS::AccountId": accountId, "AWS::Partition": "aws", "AWS::URLSuffix": "amazonaws.com",
      "AWS::StackName": stackName, "AWS::StackId": `arn:aws:cloudformation:${region}:${accountId}:stack/${stackName}/cloud-local`,
    };
    return values[name];
  }

  private ref(name: string, path: string): string {
    // It removes the property it stands in: only with Fn::If, which is not supported either.
    if (name === "AWS::NoValue") throw new TemplateError(path, "AWS::NoValue is not supported by cloud-local");
    const pseudo = this.pseudo(name);
    if (pseudo !== undefined) return pseudo;
    const p = this.physical.get(name);
    if (!p) throw new TemplateError(path, `Ref to ${name}, which is not created (yet)`);
    return p.ref;
  }

  private attr(id: string, attr: string, path: string): string {
    const p = this.physical.get(id);
    const v = p?.attrs[attr];
    if (v === undefined) throw new TemplateError(path, p ? `${id} has no attribute ${attr} here` : `Fn::GetAtt of ${id}, which is not created (yet)`);
    return v;
  }

  private sub(arg: unknown, path: string): string {
    const [text, vars] = typeof arg === "string" ? [arg, {}] : (arg as [string, Cfn]);
    const bound = this.resolve(vars, `${path}[1]`) as Record<string, unknown>;
    // `${!Name}` is the literal `${Name}`.
    return text.replace(/\$\{(!?)([^}]*)\}/g, (_, literal: string, name: string) => {
      if (literal) return `\${${name}}`;
      if (name in bound) return String(bound[name]);
      const dot = name.indexOf(".");
      return dot > 0 && !name.startsWith("AWS::") ? this.attr(name.slice(0, dot), name.slice(dot + 1), path) : this.ref(name, path);
    });
  }
}

/** The logical ids a value refers to (Ref, Fn::GetAtt, names in Fn::Sub). */
function referencesOf(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) referencesOf(v, out);
  else if (value && typeof value === "object") {
    const o = value as Cfn;
    if (typeof o.Ref === "string" && !o.Ref.startsWith("AWS::")) out.add(o.Ref);
    const getAtt = o["Fn::GetAtt"];
    if (getAtt) out.add(String(Array.isArray(getAtt) ? getAtt[0] : String(getAtt).split(".")[0]));
    const sub = o["Fn::Sub"];
    if (sub) {
      const text = typeof sub === "string" ? sub : String(sub[0]);
      const bound = typeof sub === "string" ? {} : (sub[1] ?? {});
      for (const [, name] of text.matchAll(/\$\{([^}!][^}]*)\}/g)) {
        const id = name!.split(".")[0]!;
        if (!name!.startsWith("AWS::") && !(id in bound)) out.add(id);
      }
    }
    for (const v of Object.values(o)) referencesOf(v, out);
  }
  return out;
}

/** The logical ids in an order where each comes after what it refers to (CloudFormation's own order). */
export function creationOrder(template: Template): string[] {
  const ids = Object.keys(template.Resources);
  const deps = new Map(ids.map((id) => {
    const r = template.Resources[id]!;
    const explicit = r.DependsOn === undefined ? [] : Array.isArray(r.DependsOn) ? r.DependsOn : [r.DependsOn];
    return [id, new Set([...referencesOf(r.Properties), ...explicit].filter((d) => d !== id && d in template.Resources))];
  }));
  const out: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (id: string, chain: string[]) => {
    if (state.get(id) === "done") return;
    if (state.get(id) === "visiting") throw new TemplateError(`Resources.${id}`, `circular reference: ${[...chain, id].join(" → ")}`);
    state.set(id, "visiting");
    for (const d of [...deps.get(id)!].sort()) visit(d, [...chain, id]);
    state.set(id, "done");
    out.push(id);
  };
  for (const id of ids) visit(id, []);
  return out;
}
