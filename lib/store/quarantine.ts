/**
 * Quarantine in DynamoDB (docs/audit.md, "Quarantine"): the quarantine item and its `Lookout Health`
 * alert, as the caller built them (lib/alerts/quarantine.ts), written in one transaction.
 */
import { ConditionalCheckFailedException, type DynamoDBClient, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { QuarantinePort, QuarantineWrite } from "../model/quarantine.js";
import { expiresAfter } from "../model/items.js";

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
