/**
 * The one place error responses are shaped. The platform uses two body shapes (docs/platform.md); the
 * simulator answers `{status, detail}` for 403/404 and `{status, error, message}` for the others.
 */
import { STATUS_CODES } from "node:http";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function errorBody(status: number, message: string): Record<string, unknown> {
  if (status === 403 || status === 404) return { status, detail: message };
  return { status, error: STATUS_CODES[status] ?? "Error", message };
}

export const badRequest = (message: string) => new HttpError(400, message);
export const unauthorized = () => new HttpError(401, "Access token is missing or invalid");
export const forbidden = () => new HttpError(403, "Access forbidden");
export const notFound = (what: string, id?: string) => new HttpError(404, id ? `${what} ${id} not found` : `${what} not found`);
