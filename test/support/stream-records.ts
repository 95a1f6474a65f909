/** Synthetic DynamoDB stream records (the Lambda trigger's shape) for outbox and handler tests. */
import type { DynamoDBRecord } from "aws-lambda";
import { marshall } from "@aws-sdk/util-dynamodb";
import type { LookoutEventDetail } from "../../lib/model/event.js";
import { recordItem } from "../../lib/model/items.js";
import type { Suppression } from "../../lib/model/alert-item.js";
import { newAlertItem } from "../../lib/alerts/outbox-item.js";

let seq = 100_000_000_000_000_000_000n;
const nextSeq = () => String(seq++);

export function streamRecord<T extends { pk: string; sk: string }>(eventName: "INSERT" | "MODIFY" | "REMOVE", item: T): DynamoDBRecord {
  const image = marshall(item as Record<string, unknown>, { removeUndefinedValues: true }) as NonNullable<DynamoDBRecord["dynamodb"]>["NewImage"];
  return {
    eventID: `ev-${seq}`,
    eventName,
    eventVersion: "1.1",
    eventSource: "aws:dynamodb",
    awsRegion: "us-east-1",
    eventSourceARN: "arn:aws:dynamodb:us-east-1:123456789012:table/lookout/stream/2026-03-01T00:00:00.000",
    dynamodb: {
      Keys: marshall({ pk: item.pk, sk: item.sk }) as NonNullable<DynamoDBRecord["dynamodb"]>["Keys"],
      ...(eventName === "REMOVE" ? {} : { NewImage: image }),
      SequenceNumber: nextSeq(),
      SizeBytes: 512,
      StreamViewType: "NEW_IMAGE",
    },
  };
}

export const alertInsert = (detail: LookoutEventDetail, suppression?: Suppression) =>
  streamRecord("INSERT", { ...newAlertItem(detail, detail.observed_at, 1_900_000_000, suppression) });

export const recordInsert = (id: string) =>
  streamRecord("INSERT", recordItem({ record_kind: "webhook_delivery", id, organization_id: "org-1" }, undefined, "2026-03-02T14:08:02Z"));
