/**
 * Which AWS calls a function's code can make, as IAM actions: its handler bundled as the stack bundles it
 * (esbuild, tree-shaken), packages left out so that only our code is read, and every AWS SDK command
 * class it names mapped to the actions IAM checks for it. A command with no mapping here is an error, so
 * a new call cannot slip past the comparison with the function's role (test/integration/infra/stack.test.ts).
 */
import { build } from "esbuild";

/** SDK command class → IAM actions (DynamoDB document-client commands under their own names too). */
const ACTIONS: Record<string, string[]> = {
  GetCommand: ["dynamodb:GetItem"],
  GetItemCommand: ["dynamodb:GetItem"],
  PutCommand: ["dynamodb:PutItem"],
  PutItemCommand: ["dynamodb:PutItem"],
  UpdateCommand: ["dynamodb:UpdateItem"],
  UpdateItemCommand: ["dynamodb:UpdateItem"],
  DeleteCommand: ["dynamodb:DeleteItem"],
  DeleteItemCommand: ["dynamodb:DeleteItem"],
  QueryCommand: ["dynamodb:Query"],
  ScanCommand: ["dynamodb:Scan"],
  BatchGetCommand: ["dynamodb:BatchGetItem"],
  BatchGetItemCommand: ["dynamodb:BatchGetItem"],
  BatchWriteCommand: ["dynamodb:BatchWriteItem"],
  BatchWriteItemCommand: ["dynamodb:BatchWriteItem"],
  // Authorized per item (Put, Update, Delete, ConditionCheck): see TRANSACT_ITEMS.
  TransactWriteCommand: [],
  TransactWriteItemsCommand: [],
  CreateTableCommand: ["dynamodb:CreateTable"],
  DescribeTableCommand: ["dynamodb:DescribeTable"],
  UpdateTimeToLiveCommand: ["dynamodb:UpdateTimeToLive"],
  // SendMessageBatch is authorized as sqs:SendMessage.
  SendMessageCommand: ["sqs:SendMessage"],
  SendMessageBatchCommand: ["sqs:SendMessage"],
  GetQueueAttributesCommand: ["sqs:GetQueueAttributes"],
  PutEventsCommand: ["events:PutEvents"],
  InvokeCommand: ["lambda:InvokeFunction"],
  // SES v2 SendEmail with raw MIME content is authorized as both.
  SendEmailCommand: ["ses:SendEmail", "ses:SendRawEmail"],
};
const TRANSACT_ITEMS: Record<string, string> = { Put: "dynamodb:PutItem", Update: "dynamodb:UpdateItem", Delete: "dynamodb:DeleteItem", ConditionCheck: "dynamodb:ConditionCheckItem" };
/** Reads through the Parameters and Secrets extension (lib/app/cloud/secrets.ts), which it makes with the function's role. */
const HELPERS: Record<string, string[]> = {
  extensionParameter: ["ssm:GetParameter", "kms:Decrypt"],
  extensionSecret: ["secretsmanager:GetSecretValue", "kms:Decrypt"],
};

export interface SdkUsage {
  /** Command classes and helpers named in the code. */
  calls: string[];
  actions: string[];
}

export async function sdkUsage(entry: string): Promise<SdkUsage> {
  const out = await build({ entryPoints: [entry], bundle: true, write: false, format: "esm", platform: "node", packages: "external", treeShaking: true, logLevel: "silent" });
  // Without the import statements: a class imported but never used is no call.
  const code = out.outputFiles[0]!.text.replace(/^import\s[^;]*?from\s*"[^"]+";$/gms, "");
  const commands = [...new Set([...code.matchAll(/\b([A-Z]\w*Command)\b/g)].map((m) => m[1]!))];
  const unknown = commands.filter((c) => !(c in ACTIONS));
  if (unknown.length) throw new Error(`${entry}: no IAM actions known for ${unknown.join(", ")}: add them to test/support/sdk-usage.ts`);
  const helpers = Object.keys(HELPERS).filter((h) => new RegExp(`\\b${h}\\(`).test(code));
  const actions = new Set([...commands.flatMap((c) => ACTIONS[c]!), ...helpers.flatMap((h) => HELPERS[h]!)]);
  if (commands.some((c) => c.startsWith("TransactWrite"))) {
    for (const [item, action] of Object.entries(TRANSACT_ITEMS)) if (new RegExp(`\\b${item}:\\s*\\{`).test(code)) actions.add(action);
  }
  return { calls: [...commands, ...helpers].sort(), actions: [...actions].sort() };
}
