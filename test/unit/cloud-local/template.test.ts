/**
 * The template resolver of `lookout cloud-local` (docs/cloud-local.md): intrinsic functions against the
 * physical ids of what was created, CloudFormation's creation order, and errors that name the path.
 */
import { describe, expect, it } from "vitest";
import { creationOrder, Resolver, type Template, TemplateError } from "../../../local/cloud-local/template.js";

const account = { region: "us-east-1", accountId: "123456789012", stackName: "lookout-prod" };

function resolver(): Resolver {
  const r = new Resolver(account);
  r.set("Queue", { ref: "http://moto/123456789012/q", attrs: { Arn: "arn:aws:sqs:us-east-1:123456789012:q", QueueName: "q" } });
  r.set("Bus", { ref: "lookout-prod", attrs: { Arn: "arn:aws:events:us-east-1:123456789012:event-bus/lookout-prod" } });
  return r;
}

describe("the cloud-local template resolver", () => {
  it("resolves Ref, Fn::GetAtt (both forms), Fn::Sub (with and without variables), Fn::Join and Fn::Select", () => {
    const r = resolver();
    expect(r.resolve({ Ref: "Queue" }, "x")).toBe("http://moto/123456789012/q");
    expect(r.resolve({ "Fn::GetAtt": ["Queue", "Arn"] }, "x")).toBe("arn:aws:sqs:us-east-1:123456789012:q");
    expect(r.resolve({ "Fn::GetAtt": "Queue.QueueName" }, "x")).toBe("q");
    expect(r.resolve({ "Fn::Sub": "arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:${Bus}/${Queue.QueueName}" }, "x"))
      .toBe("arn:aws:logs:us-east-1:123456789012:log-group:lookout-prod/q");
    expect(r.resolve({ "Fn::Sub": ["${Name}-${Bus}", { Name: { "Fn::GetAtt": ["Queue", "QueueName"] } }] }, "x")).toBe("q-lookout-prod");
    // "${!Name}" is the literal "${Name}", as CloudFormation writes it.
    expect(r.resolve({ "Fn::Sub": "${!Literal}-${Bus}" }, "x")).toBe("${Literal}-lookout-prod");
    expect(r.resolve({ "Fn::Join": [",", [{ Ref: "Bus" }, "b"]] }, "x")).toBe("lookout-prod,b");
    expect(r.resolve({ "Fn::Select": [1, ["a", { Ref: "Bus" }]] }, "x")).toBe("lookout-prod");
    expect(r.resolve({ A: [{ Ref: "AWS::StackName" }], B: 3, C: { D: true } }, "x")).toEqual({ A: ["lookout-prod"], B: 3, C: { D: true } });
  });

  it("names the path of what it cannot resolve", () => {
    const r = resolver();
    expect(() => r.resolve({ Env: { T: { Ref: "Table" } } }, "Resources.Fn.Properties")).toThrow(
      new TemplateError("Resources.Fn.Properties.Env.T.Ref", "Ref to Table, which is not created (yet)"));
    expect(() => r.resolve({ "Fn::GetAtt": ["Queue", "StreamArn"] }, "p")).toThrow(/p\.Fn::GetAtt: Queue has no attribute StreamArn here/);
    expect(() => r.resolve({ "Fn::Sub": "${Nope.Arn}" }, "p")).toThrow(/Fn::GetAtt of Nope/);
    expect(() => r.resolve({ "Fn::If": ["C", 1, 2] }, "p")).toThrow(/p\.Fn::If: Fn::If is not supported by cloud-local/);
  });

  it("orders resources after what they refer to, and refuses a cycle naming it", () => {
    const t: Template = {
      Resources: {
        Rule: { Type: "AWS::Events::Rule", Properties: { EventBusName: { Ref: "Bus" }, Targets: [{ Arn: { "Fn::GetAtt": ["Inbox", "Arn"] } }] } },
        Inbox: { Type: "AWS::SQS::Queue", Properties: { RedrivePolicy: { deadLetterTargetArn: { "Fn::GetAtt": ["Dlq", "Arn"] } } } },
        Bus: { Type: "AWS::Events::EventBus", Properties: { Name: { "Fn::Sub": "${AWS::StackName}" } } },
        Dlq: { Type: "AWS::SQS::Queue", Properties: {} },
        Log: { Type: "AWS::Logs::LogGroup", DependsOn: "Rule", Properties: {} },
      },
    };
    const order = creationOrder(t);
    const before = (a: string, b: string) => expect(order.indexOf(a), `${a} before ${b}`).toBeLessThan(order.indexOf(b));
    before("Dlq", "Inbox");
    before("Inbox", "Rule");
    before("Bus", "Rule");
    before("Rule", "Log");
    const cyclic: Template = { Resources: { A: { Type: "X", Properties: { B: { Ref: "B" } } }, B: { Type: "X", Properties: { A: { "Fn::Sub": "${A.Arn}" } } } } };
    expect(() => creationOrder(cyclic)).toThrow(/circular reference: A → B → A/);
  });
});
