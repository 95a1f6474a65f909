import { describe, expect, expectTypeOf, it } from "vitest";
import type { EndpointInput, EndpointOutput } from "../../../lib/platform/endpoints.js";
import { pathPattern } from "../../../lib/platform/endpoints.js";
import { specEndpointNames as endpointNames, specEndpoints as endpoints, type SpecEndpoints } from "../../../local/simulator/endpoints.js";

describe("endpoint table", () => {
  it("has the 21 endpoints of the spec, numbered 1 to 21", () => {
    expect(endpointNames).toHaveLength(21);
    expect(endpointNames.map((n) => endpoints[n].number).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 21 }, (_, i) => i + 1),
    );
  });

  it("types inputs and outputs from the table", () => {
    expectTypeOf<EndpointInput<"createJobSecret", SpecEndpoints>["body"]>().toMatchTypeOf<{ key: string }>();
    expectTypeOf<EndpointInput<"listDeploymentHistory">["query"]>().toEqualTypeOf<
      Readonly<{ pageSize?: number; startId?: string }> | undefined
    >();
    expectTypeOf<EndpointInput<"listWebhookEvents">["path"]>().toEqualTypeOf<{ organizationId: string; webhookId: string }>();
    expectTypeOf<EndpointOutput<"deleteVendor2Credentials", SpecEndpoints>>().toEqualTypeOf<undefined>();
    expectTypeOf<EndpointOutput<"listProjects">["results"][number]["name"]>().toEqualTypeOf<string | undefined>();
  });

  it("matches paths with their parameters", () => {
    const m = pathPattern(endpoints.resolvePlatformComponent.path).exec(
      "/organization/o1/cluster/c1/platformBinding/component/my-comp/resolve",
    );
    expect(m?.groups).toEqual({ organizationId: "o1", clusterId: "c1", componentKey: "my-comp" });
    expect(pathPattern(endpoints.listWebhookEvents.path).test("/organization/o1/webhook/w1/event/x")).toBe(false);
  });
});
