/**
 * `lookout completion bash|zsh|fish`: a completion script generated from the commander program itself
 * (its commands, options and the values they accept), so it never falls out of step with the CLI.
 */
import type { Command } from "commander";
import { EXIT, UsageError, reportFailure } from "./shared.js";
import { COMPLETION_SHELLS, type CompletionShell } from "./choices.js";

/** One command as completion sees it: its path (`routes test`), its options, what its argument takes. */
export interface CompletionNode {
  path: string[];
  description: string;
  subcommands: string[];
  options: Array<{ flags: string[]; description: string; value?: "file" | "any"; choices?: string[] }>;
  argumentChoices?: string[];
}

/** Every command of the program, depth first, the program itself first (path []). */
export function completionTree(program: Command): CompletionNode[] {
  const out: CompletionNode[] = [];
  const walk = (cmd: Command, path: string[]) => {
    const subcommands = cmd.commands.map((c) => c.name());
    if (!path.length && subcommands.length) subcommands.push("help");
    const options = cmd.options.map((o) => ({
      flags: [o.long, o.short].filter((f): f is string => Boolean(f)),
      description: o.description,
      ...(o.required || o.optional ? { value: /<file>/.test(o.flags) ? ("file" as const) : ("any" as const) } : {}),
      ...(o.argChoices ? { choices: [...o.argChoices] } : {}),
    }));
    options.push({ flags: ["--help", "-h"], description: "show help" });
    const choices = cmd.registeredArguments.find((a) => a.argChoices)?.argChoices;
    out.push({ path, description: cmd.description(), subcommands, options, ...(choices ? { argumentChoices: [...choices] } : {}) });
    for (const c of cmd.commands) walk(c, [...path, c.name()]);
  };
  walk(program, []);
  return out;
}

const key = (path: string[]) => path.map((w) => `/${w}`).join("");
const words = (list: readonly string[]) => list.join(" ");
/** Option names, values and command names are plain words; anything else is refused, not quoted. */
const plain = (w: string) => {
  if (!/^[A-Za-z0-9_.:@+-]+$/.test(w)) throw new Error(`completion: "${w}" is not a plain word`);
  return w;
};

function flagsOf(n: CompletionNode): string[] {
  return n.options.flatMap((o) => o.flags).map(plain);
}

export function bashCompletion(name: string, tree: CompletionNode[]): string {
  const fn = `_${name.replace(/\W/g, "_")}_complete`;
  const steps = tree.filter((n) => n.path.length).map((n) => `"${key(n.path)}"`);
  const lines = [
    `# ${name} completion for bash: source it, or put it in /etc/bash_completion.d/${name}`,
    `${fn}() {`,
    `  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" at="" w i`,
    `  for ((i = 1; i < COMP_CWORD; i++)); do`,
    `    w="\${COMP_WORDS[i]}"`,
    `    case "$at/$w" in`,
    ...(steps.length ? [`      ${steps.join("|")}) at="$at/$w" ;;`] : []),
    `    esac`,
    `  done`,
    `  case "$at $prev" in`,
  ];
  for (const n of tree) {
    for (const o of n.options.filter((o) => o.value)) {
      const action = o.choices ? `COMPREPLY=($(compgen -W "${words(o.choices.map(plain))}" -- "$cur"))` : o.value === "file" ? `COMPREPLY=($(compgen -f -- "$cur"))` : "COMPREPLY=()";
      lines.push(`    ${o.flags.map((f) => `"${key(n.path)} ${plain(f)}"`).join("|")}) ${action}; return ;;`);
    }
  }
  lines.push(`  esac`, `  case "$at" in`);
  for (const n of tree) {
    const next = [...n.subcommands, ...(n.argumentChoices ?? [])].map(plain);
    lines.push(`    "${key(n.path)}") if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "${words(flagsOf(n))}" -- "$cur")); else COMPREPLY=($(compgen -W "${words(next)}" -- "$cur")); fi ;;`);
  }
  lines.push(`  esac`, `}`, `complete -o default -F ${fn} ${name}`, "");
  return lines.join("\n");
}

export function zshCompletion(name: string, tree: CompletionNode[]): string {
  const fn = `_${name.replace(/\W/g, "_")}`;
  const steps = tree.filter((n) => n.path.length).map((n) => `"${key(n.path)}"`);
  const lines = [
    `#compdef ${name}`,
    `# ${name} completion for zsh: put it on $fpath as _${name}, or source it after compinit`,
    `${fn}() {`,
    // `path` is zsh's own (tied to PATH): the command path is `at`.
    `  local cur="\${words[CURRENT]}" prev="\${words[CURRENT-1]}" at="" w i`,
    `  for (( i = 2; i < CURRENT; i++ )); do`,
    `    w="\${words[i]}"`,
    `    case "$at/$w" in`,
    ...(steps.length ? [`      (${steps.join("|")}) at="$at/$w" ;;`] : []),
    `    esac`,
    `  done`,
    `  case "$at $prev" in`,
  ];
  for (const n of tree) {
    for (const o of n.options.filter((o) => o.value)) {
      const action = o.choices ? `compadd -- ${words(o.choices.map(plain))}` : o.value === "file" ? "_files" : ":";
      lines.push(`    (${o.flags.map((f) => `"${key(n.path)} ${plain(f)}"`).join("|")}) ${action}; return ;;`);
    }
  }
  lines.push(`  esac`, `  case "$at" in`);
  for (const n of tree) {
    const next = [...n.subcommands, ...(n.argumentChoices ?? [])].map(plain);
    lines.push(`    ("${key(n.path)}") if [[ "$cur" == -* ]]; then compadd -- ${words(flagsOf(n))}; else ${next.length ? `compadd -- ${words(next)}` : "_files"}; fi ;;`);
  }
  lines.push(`  esac`, `}`, `if [[ "\${funcstack[1]}" == "${fn}" ]]; then ${fn} "$@"; else compdef ${fn} ${name}; fi`, "");
  return lines.join("\n");
}

/** A fish single-quoted string. */
const fishQuote = (s: string) => `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`;

export function fishCompletion(name: string, tree: CompletionNode[]): string {
  const all = tree.filter((n) => n.path.length === 1).map((n) => n.path[0]!);
  // At a command: its words are all seen, and none of its subcommands yet.
  const at = (n: CompletionNode) =>
    n.path.length
      ? [...n.path.map((w) => `__fish_seen_subcommand_from ${plain(w)}`), ...(n.subcommands.length ? [`not __fish_seen_subcommand_from ${words(n.subcommands.map(plain))}`] : [])].join("; and ")
      : `not __fish_seen_subcommand_from ${words([...all, "help"].map(plain))}`;
  const lines = [`# ${name} completion for fish: put it in ~/.config/fish/completions/${name}.fish`, `complete -c ${name} -f`];
  for (const n of tree) {
    const cond = fishQuote(at(n));
    for (const sub of n.subcommands) {
      const d = tree.find((t) => t.path.join(" ") === [...n.path, sub].join(" "))?.description ?? "show help for a command";
      lines.push(`complete -c ${name} -n ${cond} -a ${plain(sub)} -d ${fishQuote(d)}`);
    }
    if (n.argumentChoices) lines.push(`complete -c ${name} -n ${cond} -a ${fishQuote(words(n.argumentChoices.map(plain)))}`);
    for (const o of n.options) {
      const names = o.flags.map((f) => (f.startsWith("--") ? `-l ${plain(f.slice(2))}` : `-s ${plain(f.slice(1))}`)).join(" ");
      const value = o.choices ? ` -x -a ${fishQuote(words(o.choices.map(plain)))}` : o.value === "file" ? " -r -F" : o.value ? " -x" : "";
      lines.push(`complete -c ${name} -n ${cond} ${names}${value} -d ${fishQuote(o.description || o.flags[0]!)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

export function completionScript(shell: CompletionShell, program: Command): string {
  const tree = completionTree(program);
  const name = program.name();
  return shell === "bash" ? bashCompletion(name, tree) : shell === "zsh" ? zshCompletion(name, tree) : fishCompletion(name, tree);
}

export async function completionCommand(shell: string, program: Command, write: (text: string) => void = (t) => process.stdout.write(t)): Promise<number> {
  try {
    if (!(COMPLETION_SHELLS as readonly string[]).includes(shell)) throw new UsageError(`"${shell}" is not one of ${COMPLETION_SHELLS.join(", ")}`);
    write(completionScript(shell as CompletionShell, program));
    return EXIT.ok;
  } catch (err) {
    return reportFailure("completion", err);
  }
}
