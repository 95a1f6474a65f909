/**
 * How the cloud-local runner's parts call a packaged function (docs/cloud-local.md): synchronously, as
 * an event source mapping or the HTTP API does, with Lambda's outcome — the handler's answer, or its
 * error as Lambda reports it (`errorType`, `errorMessage`; a timeout or a killed process is an error
 * of the runtime, `Sandbox.Timedout` / `Runtime.ExitError`, as Lambda names them).
 */
export type Invocation =
  | { ok: true; payload: unknown; ms: number }
  | { ok: false; errorType: string; errorMessage: string; ms: number };

/** Runs one event on the function named (its name or its ARN, as the template gives `FunctionName`). */
export type Invoke = (functionName: string, event: unknown) => Promise<Invocation>;

/** One line of what the deployed stack does (an invocation, a batch, a partial failure, a delivery). */
export type Activity = (line: string) => void;

/** `functionName` or the name at the end of a function ARN (`arn:aws:lambda:…:function:NAME[:qualifier]`). */
export function functionNameOf(nameOrArn: string): string {
  const m = /^arn:[^:]+:lambda:[^:]*:[^:]*:function:([^:]+)/.exec(nameOrArn);
  return m ? m[1]! : nameOrArn;
}
