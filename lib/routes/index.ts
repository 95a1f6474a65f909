/** The routes stage: routes as data, matched locally and deployed as EventBridge rules. */
export * from "./types.js";
export { receiverId, receiverLabel, distinctReceivers } from "./receivers.js";
export { routeEvent, explainRoutes, checkField, describeCheck } from "./match.js";
export type { FieldCheck, RouteDecision, RouteOutcome, RoutesExplained } from "./match.js";
export { eventPattern, patternProblems, RoutePatternError, EVENT_PATTERN_MAX_CHARS } from "./patterns.js";
export type { EventPattern, PatternProblem } from "./patterns.js";
export { ruleResources, ruleLogicalId, inputTemplate } from "./rules.js";
export type { RuleOptions, RuleResource, RuleTarget, RuleTargets } from "./rules.js";
export { allReceivers } from "../config/routes.js";
