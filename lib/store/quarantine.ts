/**
 * Quarantine in DynamoDB (docs/audit.md, "Quarantine"): the quarantine item and its `Lookout Health`
 * alert, as the caller built them (lib/alerts/quarantine.ts), written in one transaction.
 */
import { ConditionalCheckFailedException, type DynamoDBClient, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { QuarantinePort, QuarantineWrite } from "../model/quarantine.js";
import { expiresAfter } from "../model/items.js";

/**
 * A write DynamoDB refuses for what it is (item or key too large, nesting too deep, an invalid value):
 * writing it again fails again. Throttling, network and conflicts are not this.
 */
export function isUnwritable(err: unknown): boolean {
  // A store may wrap the SDK's error to say which write it was: the cause decides.
  for (let e = err as { name?: string; CancellationReasons?: Array<{ Code?: string }>; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e.name === "ValidationException") return true;
    if (e instanceof TransactionCanceledException && (e.CancellationReasons ?? []).some((r) => r.Code === "ValidationError")) return true;
  }
  return false;
}

export interface DynamoQuarantineOptions {
  client: DynamoDBClient;
  tableName: string;
  retentionMs: number;
  now?: () => Date;
}

export class DynamoQuarantine implements QuarantinePort {
  private readonly doc: DynamoDBDocumentClient;

  constructor(private readonly opts: DynamoQuarantineOptions) {
    this.doc = DynamoDBDocumentClient.from(opts.client, { marshallOptions: { removeUndefinedValues: true } });
  }

  expiresAt(): number {
    return expiresAfter((this.opts.now?.() ?? new Date()).getTime(), this.opts.retentionMs);
  }

  async quarantine({ item, health }: QuarantineWrite): Promise<boolean> {
    const TableName = this.opts.tableName;
    try {
      // Both or neither: the health event is raised exactly when the thing is first set aside.
      await this.doc.send(new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName, Item: item, ConditionExpression: "attribute_not_exists(pk)" } },
          { Put: { TableName, Item: health, ConditionExpression: "attribute_not_exists(pk)" } },
        ],
      }));
      return true;
    } catch (err) {
      const conflict = err instanceof ConditionalCheckFailedException ||
        (err instanceof TransactionCanceledException && (err.CancellationReasons ?? []).some((r) => r.Code === "ConditionalCheckFailed"));
      if (conflict) return false;
      throw err;
    }
  }
}
