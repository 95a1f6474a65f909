/** The structured log every stage writes to (Powertools' Logger in the cloud, the terminal locally). */
export interface Log {
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
}
