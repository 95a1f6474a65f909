/** The view of a `Lookout Health` event: about Lookout itself (the check and its subject). */
import type { KindView } from "./types.js";

export const healthView: KindView = {
  subject: (detail) => detail.health?.subject ?? detail.organization.name ?? detail.organization.id,
  what(detail) {
    const n = detail.health?.consecutive_failures;
    return n ? `${n} failure${n === 1 ? "" : "s"} in a row` : undefined;
  },
  leadingFields(detail, add) {
    add("Check", detail.health?.check ?? detail.transition);
    add("Subject", detail.health?.subject);
    add("Failures in a row", detail.health?.consecutive_failures);
  },
  unnamedTransition(detail) {
    const words = detail.transition.replace(/_/g, " ");
    return [`HEALTH ${words.toUpperCase()}`, `Lookout health (${words})`];
  },
};
