/** Drops undefined fields, so stored items stay small and equal records compare equal. */
export function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
