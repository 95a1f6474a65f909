/**
 * The filter patterns cloud-local's event source mappings match records with
 * (local/cloud-local/event-pattern.ts), as Lambda matches FilterCriteria: the publish mapping's own pattern from the
 * packaged template on the stream records the store writes, then each operator, and the patterns it
 * refuses, naming the operator and where it is.
 */
import { describe, expect, it } from "vitest";
import { compileFilters, matchesFilters, parsePattern } from "../../../local/cloud-local/event-pattern.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { alertInsert, recordInsert, streamRecord } from "../../support/stream-records.js";
import { newAlertItem } from "../../../lib/alerts/outbox-item.js";

/** The publish mapping's FilterCriteria as the packaged template has it (serverless.yml's filterPatterns). */
const PUBLISH_FILTERS = [
  { Pattern: '{"eventName":["INSERT"],"dynamodb":{"NewImage":{"item_type":{"S":["alert"]},"state":{"S":["pending"]}}}}' },
];

describe("the publish mapping's filter", () => {
  const detail = EXAMPLE_DETAILS["Deployment Failed"];
  const pending = newAlertItem(detail, detail.observed_at, 1_900_000_000);

  it("matches the INSERT of a pending alert", () => {
    expect(matchesFilters(PUBLISH_FILTERS, alertInsert(detail))).toBe(true);
  });

  it("does not match a MODIFY, an item that is not an alert, a published or a suppressed alert, a REMOVE", () => {
    expect(matchesFilters(PUBLISH_FILTERS, streamRecord("MODIFY", pending))).toBe(false);
    expect(matchesFilters(PUBLISH_FILTERS, recordInsert("d-1"))).toBe(false);
    expect(matchesFilters(PUBLISH_FILTERS, streamRecord("INSERT", { ...pending, state: "published" }))).toBe(false);
    expect(matchesFilters(PUBLISH_FILTERS, alertInsert(detail, { reason: "mute", detail: "muted by m-1" }))).toBe(false);
    expect(matchesFilters(PUBLISH_FILTERS, streamRecord("REMOVE", pending))).toBe(false);
  });
});

const match = (pattern: unknown, record: unknown) => parsePattern(JSON.stringify(pattern))(record);

describe("patterns", () => {
  it("no filters match everything; any filter matching is a match", () => {
    expect(compileFilters(undefined)({ a: 1 })).toBe(true);
    expect(compileFilters([])({ a: 1 })).toBe(true);
    const either = compileFilters([{ Pattern: '{"a":["x"]}' }, { Pattern: '{"b":["y"]}' }]);
    expect([either({ a: "x" }), either({ b: "y" }), either({ a: "y", b: "x" })]).toEqual([true, true, false]);
  });

  it("exact values: strings, numbers numerically, booleans, null; every field must match", () => {
    expect(match({ a: ["x", "y"] }, { a: "y" })).toBe(true);
    expect(match({ a: [5] }, { a: 5.0 })).toBe(true);
    expect(match({ a: [5] }, { a: "5" })).toBe(false);
    expect(match({ a: [true] }, { a: true })).toBe(true);
    expect(match({ a: [null] }, { a: null })).toBe(true);
    expect(match({ a: [null] }, {})).toBe(false);
    expect(match({ a: ["x"], b: ["y"] }, { a: "x", b: "z" })).toBe(false);
    expect(match({ a: { b: { c: ["x"] } } }, { a: { b: { c: "x" } } })).toBe(true);
    expect(match({ a: { b: ["x"] } }, { a: "x" })).toBe(false);
  });

  it("an array in the record matches when any element does", () => {
    expect(match({ a: ["x"] }, { a: ["w", "x"] })).toBe(true);
    expect(match({ a: ["x"] }, { a: [] })).toBe(false);
    expect(match({ a: { b: ["x"] } }, { a: [{ b: "w" }, { b: "x" }] })).toBe(true);
  });

  it("prefix, suffix, equals-ignore-case, wildcard", () => {
    expect(match({ a: [{ prefix: "dep" }] }, { a: "deploy" })).toBe(true);
    expect(match({ a: [{ prefix: "dep" }] }, { a: "undeploy" })).toBe(false);
    expect(match({ a: [{ prefix: { "equals-ignore-case": "DEP" } }] }, { a: "deploy" })).toBe(true);
    expect(match({ a: [{ suffix: ".png" }] }, { a: "x.png" })).toBe(true);
    expect(match({ a: [{ suffix: ".png" }] }, { a: 7 })).toBe(false);
    expect(match({ a: [{ "equals-ignore-case": "Alert" }] }, { a: "ALERT" })).toBe(true);
    expect(match({ a: [{ wildcard: "svc-*-api" }] }, { a: "svc-web-api" })).toBe(true);
    expect(match({ a: [{ wildcard: "svc-*-api" }] }, { a: "svc-web-apis" })).toBe(false);
    expect(match({ a: [{ wildcard: "a.\\*" }] }, { a: "a.*" })).toBe(true);
    expect(match({ a: [{ wildcard: "a.\\*" }] }, { a: "ab*" })).toBe(false);
  });

  it("anything-but: a value, a list, an operator; a field that is absent does not match", () => {
    expect(match({ a: [{ "anything-but": "x" }] }, { a: "y" })).toBe(true);
    expect(match({ a: [{ "anything-but": "x" }] }, { a: "x" })).toBe(false);
    expect(match({ a: [{ "anything-but": "x" }] }, {})).toBe(false);
    expect(match({ a: [{ "anything-but": [1, 2] }] }, { a: 3 })).toBe(true);
    expect(match({ a: [{ "anything-but": [1, 2] }] }, { a: 2 })).toBe(false);
    expect(match({ a: [{ "anything-but": { prefix: "tmp-" } }] }, { a: "tmp-1" })).toBe(false);
    expect(match({ a: [{ "anything-but": { prefix: "tmp-" } }] }, { a: "prod-1" })).toBe(true);
    expect(match({ a: [{ "anything-but": { wildcard: ["*-a", "*-b"] } }] }, { a: "x-b" })).toBe(false);
    expect(match({ a: [{ "anything-but": { "equals-ignore-case": ["X", "Y"] } }] }, { a: "x" })).toBe(false);
  });

  it("exists: a leaf value is there (an object is not a leaf)", () => {
    expect(match({ a: [{ exists: true }] }, { a: "" })).toBe(true);
    expect(match({ a: [{ exists: true }] }, {})).toBe(false);
    expect(match({ a: [{ exists: false }] }, {})).toBe(true);
    expect(match({ a: [{ exists: false }] }, { a: { b: 1 } })).toBe(true);
    expect(match({ a: { b: [{ exists: false }] } }, {})).toBe(true);
    expect(match({ a: ["x", { exists: false }] }, { a: "x" })).toBe(true);
  });

  it("numeric: one comparison or a range, on numbers only", () => {
    expect(match({ n: [{ numeric: [">", 0] }] }, { n: 1 })).toBe(true);
    expect(match({ n: [{ numeric: [">", 0] }] }, { n: "1" })).toBe(false);
    expect(match({ n: [{ numeric: [">=", 1, "<", 5] }] }, { n: 5 })).toBe(false);
    expect(match({ n: [{ numeric: [">=", 1, "<", 5] }] }, { n: 1 })).toBe(true);
    expect(match({ n: [{ numeric: ["=", 3.5] }] }, { n: 3.5 })).toBe(true);
  });

  it("refuses what it does not know or what is malformed, naming the operator and the path", () => {
    const refused = (pattern: unknown) => () => compileFilters([{ Pattern: typeof pattern === "string" ? pattern : JSON.stringify(pattern) }]);
    expect(refused({ dynamodb: { NewImage: { state: { S: [{ cidr: "10.0.0.0/8" }] } } } })).toThrow(
      'FilterCriteria.Filters[0].Pattern: dynamodb.NewImage.state.S: unknown operator "cidr"',
    );
    expect(refused({ $or: [{ a: ["x"] }, { b: ["y"] }] })).toThrow('$or: unknown operator "$or"');
    expect(refused("{not json")).toThrow(/^FilterCriteria\.Filters\[0\]\.Pattern: not JSON/);
    expect(refused(["x"])).toThrow("a pattern is a JSON object");
    expect(refused({ state: "pending" })).toThrow('state: a field\'s pattern is a list of values or an object, not "pending"');
    expect(refused({ a: [] })).toThrow("a: an empty list matches nothing");
    expect(refused({ a: {} })).toThrow("a: an empty object");
    expect(refused({ a: [{ prefix: "x", suffix: "y" }] })).toThrow("a: an operator is an object of one key");
    expect(refused({ a: [{ prefix: 3 }] })).toThrow('a: "prefix" takes a string');
    expect(refused({ a: [{ exists: "yes" }] })).toThrow('a: "exists" takes true or false');
    expect(refused({ a: [{ numeric: ["<", 5, ">", 1] }] })).toThrow('a: "numeric" takes');
    expect(refused({ a: [{ numeric: ["~", 5] }] })).toThrow('a: "numeric" takes');
    expect(refused({ a: [{ wildcard: "a**" }] })).toThrow('a: "wildcard" takes no consecutive *');
    expect(refused({ a: [{ "anything-but": ["x", 1] }] })).toThrow('a: "anything-but" takes a list of strings or a list of numbers');
    expect(refused({ a: [{ "anything-but": { cidr: "x" } }] })).toThrow('a: unknown operator "cidr" in "anything-but"');
    expect(refused({ a: [["x"]] })).toThrow("a: a list holds strings, numbers, booleans, null or operators");
    expect(() => compileFilters([{} as never])).toThrow("FilterCriteria.Filters[0].Pattern: missing");
  });

  it("parses a filters list once", () => {
    const filters = [{ Pattern: '{"a":["x"]}' }];
    expect(matchesFilters(filters, { a: "x" })).toBe(true);
    filters[0]!.Pattern = "{broken";
    expect(matchesFilters(filters, { a: "x" })).toBe(true);
  });
});
