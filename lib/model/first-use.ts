/**
 * A value built on the first call, and the same one handed to every later call; a build that failed is
 * tried again on the next call (a passing network or import error must not wedge a long-lived process).
 */
export function onFirstUse<A extends unknown[], T>(build: (...args: A) => Promise<T> | T): (...args: A) => Promise<T> {
  let built: Promise<T> | undefined;
  return (...args) => {
    built ??= Promise.resolve().then(() => build(...args)).catch((err: unknown) => {
      built = undefined;
      throw err;
    });
    return built;
  };
}
