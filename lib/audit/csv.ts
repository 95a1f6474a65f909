/**
 * CSV as RFC 4180 says: CRLF line ends; a field with a comma, a double quote, CR or LF is quoted and
 * its quotes doubled. Small enough to keep here rather than add a dependency.
 */
export function csvField(value: unknown): string {
  const s = value === undefined || value === null ? "" : String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvLine = (fields: readonly unknown[]): string => `${fields.map(csvField).join(",")}\r\n`;
