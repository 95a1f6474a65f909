/** The view of a deployment's transition: about its service; what = its status. */
import type { AddFact, KindView } from "./types.js";
import type { LookoutEventDetail } from "../../model/event.js";
import { nameOf } from "./format.js";

/** The status, and the one before it when known: "FAILED (was BUILDING)". */
export function statusField(detail: LookoutEventDetail, add: AddFact): void {
  const prev = detail.deployment?.previous_status;
  add("Status", detail.status ? `${detail.status}${prev ? ` (was ${prev})` : ""}` : undefined);
}

export const deploymentView: KindView = {
  subject: (detail) => nameOf(detail.service) ?? "service",
  what(detail) {
    const n = detail.deployment?.failure_count;
    if (detail.transition === "still_failing" && n) return `${detail.status ?? "failing"}, ${n} in a row`;
    return detail.status;
  },
  fields: statusField,
};
