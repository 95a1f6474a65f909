/** Sizes in configuration: `20MB`, `512KB`, `1GB`, `900B` (binary units: 1 MB = 1024 KB). */
const UNIT_BYTES: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

export function parseSize(text: string): number | undefined {
  const m = /^(\d+)\s*(b|kb|mb|gb)$/i.exec(text.trim());
  if (!m) return undefined;
  const bytes = Number(m[1]) * UNIT_BYTES[m[2]!.toLowerCase()]!;
  return bytes > 0 && Number.isSafeInteger(bytes) ? bytes : undefined;
}
