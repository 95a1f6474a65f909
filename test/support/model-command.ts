/** A fast-check command of a model-based test on the real pipeline: named, logged in the model's steps, guarded by `pre`. */
import type fc from "fast-check";

export const modelCommand = <M extends { log: string[] }, W>(
  name: string,
  body: (m: M, w: W) => Promise<void> | void,
  pre: (m: M) => boolean = () => true,
): fc.AsyncCommand<M, W> => ({
  check: pre,
  run: async (m, w) => {
    m.log.push(name);
    await body(m, w);
  },
  toString: () => name,
});
