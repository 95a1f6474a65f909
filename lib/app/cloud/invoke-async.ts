/** An asynchronous invocation of a Lambda function (dispatch's of the others, the Slack actions function's of itself). */
import { InvokeCommand, type LambdaClient } from "@aws-sdk/client-lambda";

/**
 * Invokes a function with an event, not waiting for it: undefined when Lambda accepted the event (202),
 * otherwise why not, naming the function (its status and error, or the call's own error).
 */
export async function invokeAsync(lambda: LambdaClient, functionName: string, event: unknown): Promise<string | undefined> {
  try {
    const res = await lambda.send(new InvokeCommand({ FunctionName: functionName, InvocationType: "Event", Payload: Buffer.from(JSON.stringify(event)) }));
    if (res.StatusCode === 202) return undefined;
    return `${functionName}: Lambda did not accept the event (status ${res.StatusCode ?? "none"}${res.FunctionError ? `, ${res.FunctionError}` : ""})`;
  } catch (err) {
    return `${functionName}: ${(err as Error).name}: ${(err as Error).message}`;
  }
}
