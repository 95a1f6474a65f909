/**
 * Quarantine: a record that cannot be stored, or an alert that cannot be published, for a reason no
 * retry fixes, is set aside instead of blocking what comes after it (docs/audit.md, "Quarantine"). It
 * is kept as an item of its own (redacted excerpt, reason, TTL) with an audit row, and reported once as
 * a `Lookout Health` event (check `quarantined`) written to the outbox in the same transaction.
 */
import { ConditionalCheckFailedException, type DynamoDBClient, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { QuarantineEntry, QuarantinePort } from "../model/quarantine.js";
import { quarantineItems } from "../alerts/quarantine.js";

/**
 * A write DynamoDB refuses for what it is (item or key too large, nesting too deep, an invalid value):
 * writing it again fails again. Throttling, network and conflicts are not this.
 */
export function isUnwritable(err: unknown): boolean {
  const e = err as { name?: string; CancellationReasons?: Array<{ Code?: string }> } | undefined;
  if (e?.name === "ValidationException") return true;
  return err instanceof TransactionCanceledException && (e?.CancellationReasons ?? []).some((r) => r.Code === "ValidationError");
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

  async quarantine(entry: QuarantineEntry): Promise<boolean> {
    const now = this.opts.now?.() ?? new Date();
    const { item, health } = quarantineItems(entry, now, Math.floor((now.getTime() + this.opts.retentionMs) / 1000));
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
