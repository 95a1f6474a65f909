/**
 * BENCHMARKS.md from the collected figures. Each section sits between `<!-- bench:ID -->` markers, so a
 * partial run (`npm run bench -- audit`) replaces its own sections and keeps the others as they were.
 */
import { formatValue, type Figure, type Section } from "./support.js";

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
const begin = (id: string) => `<!-- bench:${id} -->`;
const end = (id: string) => `<!-- /bench:${id} -->`;

/** One section: when and where, a table of figures, the Method paragraph and each figure's method as a numbered note. */
export function renderSection(s: Section, figs: readonly Figure[], when: string, machine: string): string {
  const notes: string[] = [];
  const note = (m: string) => (notes.includes(m) ? notes.indexOf(m) : notes.push(m) - 1) + 1;
  const rows = figs.map((f) => `| ${cell(f.name)} | ${cell(formatValue(f))} | [${note(f.method)}] |`);
  return [
    begin(s.id),
    `## ${s.title}`,
    "",
    `_Measured ${when} on ${machine}. Rerun alone: \`npm run bench -- ${s.id}\`._`,
    "",
    "| figure | value | how |",
    "|---|---|---|",
    ...rows,
    "",
    `**Method.** ${s.method}`,
    "",
    ...notes.map((m, i) => `${i + 1}. ${m}`),
    end(s.id),
  ].join("\n");
}

/** The sections of an existing BENCHMARKS.md, by id. */
export function parseSections(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/<!-- bench:([\w-]+) -->[\s\S]*?<!-- \/bench:\1 -->/g)) out.set(m[1]!, m[0]);
  return out;
}

/**
 * The whole file: the header, then for each section in `order` the one just rendered, else the one the
 * previous file had (a section never run is left out).
 */
export function renderReport(opts: { order: readonly string[]; fresh: Map<string, string>; previous?: string; header: string }): string {
  const kept = opts.previous ? parseSections(opts.previous) : new Map<string, string>();
  const blocks = opts.order.map((id) => opts.fresh.get(id) ?? kept.get(id)).filter((b): b is string => !!b);
  return `${[opts.header, ...blocks].join("\n\n")}\n`;
}
