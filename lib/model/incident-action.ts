/**
 * What a person can do from an incident's message (docs/actions.md): the buttons' `action_id`s and the
 * value each carries. Shared by the renderer that draws them (lib/notify/slack) and the handler that
 * acts on a click (lib/actions).
 */

export const INCIDENT_ACTIONS = {
  acknowledge: "lookout_ack",
  mute_1h: "lookout_mute_1h",
  mute_until_resolved: "lookout_mute_resolved",
} as const;
export type IncidentActionKind = keyof typeof INCIDENT_ACTIONS;

/** A button's value: the incident and the alert whose message it is on (short keys: Slack allows 2,000 characters). */
export const buttonValue = (incidentId: string, alertId: string): string => JSON.stringify({ i: incidentId, a: alertId });
