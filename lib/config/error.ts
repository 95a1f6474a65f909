/** What is wrong with a configuration, at the path of the bad field: the loader's error, and a secret reference's. */

/** One thing wrong in a configuration, at the path of the bad field (empty: the file as a whole). */
export interface ConfigProblem {
  field: string;
  problem: string;
}

/** Every problem found in one configuration, in file order, one a line; `field` and `problem` are the first's. */
export class ConfigError extends Error {
  readonly problems: readonly ConfigProblem[];
  constructor(
    readonly source: string,
    /** Path of the bad field, e.g. `watch[0].organization`; empty for the file as a whole. */
    readonly field: string,
    readonly problem: string,
    more: readonly ConfigProblem[] = [],
  ) {
    const problems = [{ field, problem }, ...more];
    super(problems.map((p) => `${source}: ${p.field ? `${p.field}: ` : ""}${p.problem}`).join("\n"));
    this.name = "ConfigError";
    this.problems = problems;
  }

  static of(source: string, problems: readonly ConfigProblem[]): ConfigError {
    const [first, ...more] = problems;
    return new ConfigError(source, first!.field, first!.problem, more);
  }
}
