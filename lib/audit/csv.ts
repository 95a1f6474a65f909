/**
 * CSV as RFC 4180 says: CRLF line ends; a field with a comma, a double quote, CR or LF is quoted and
 * its quotes doubled. Small enough to keep here rather than add a dependency.
 *
 * Platform text (a commit message, who deployed) lands in these files and spreadsheets run a cell that
 * starts with = + - @ (or a tab or CR before one) as a formula: such a field gets a leading `'`, which
 * spreadsheets show as text (OWASP's advice for CSV injection).
 */
const FORMULA = /^[=+\-@\t\r]/;

export function csvField(value: unknown): string {
  const raw = value === undefined || value === null ? "" : String(value);
  const s = FORMULA.test(raw) ? `'${raw}` : raw;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvLine = (fields: readonly unknown[]): string => `${fields.map(csvField).join(",")}\r\n`;
