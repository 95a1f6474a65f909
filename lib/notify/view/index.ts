/** What the Slack and email renderers draw from: escapers, text shaping, alert views, digests. */
export * from "./escape.js";
export * from "./format.js";
export type * from "./types.js";
export { alertView, CHANGES_SHOWN, changesView, commitView, detailTypeOfDetail, emojiOf } from "./alert.js";
export * from "./digest.js";
export * from "./incident.js";
