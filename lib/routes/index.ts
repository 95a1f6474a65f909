/** The routes stage: routes as data, matched locally and deployed as EventBridge rules. */
export * from "../config/route-types.js";
export { allReceivers, receiverId, receiverLabel, distinctReceivers } from "../config/receivers.js";
export { routeEvent, explainRoutes, checkField, describeCheck } from "./match.js";
export type { FieldCheck, RouteDecision, RouteOutcome, RoutesExplained } from "./match.js";
export { eventPattern, patternProblems, RoutePatternError, EVENT_PATTERN_MAX_CHARS } from "../config/route-patterns.js";
export type { EventPattern, PatternProblem } from "../config/route-patterns.js";
export { ruleResources, inputTemplate } from "./rules.js";
export { ruleLogicalId } from "../config/routes.js";
export type { RuleOptions, RuleResource, RuleTarget, RuleTargets } from "./rules.js";
