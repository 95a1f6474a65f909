/** A message (Slack body or email) of a changes_listed amendment: another alert than the failure it amends. */
export const isChangesMessage = (raw: string): boolean => /Deployment Changes Listed|CHANGES[_ ]LISTED|What changed before the failure/.test(raw);
