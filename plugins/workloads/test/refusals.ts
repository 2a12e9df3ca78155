// Tables of calls that must be refused with a domain error, judged by one assertion per table:
// a failure lists the calls (by their source) that are not refused as expected, each with the reason.
import type { Test } from 'tap';
import { BerthError } from '@berth/core';

/** A call, the path its first issue names, and its message (a string is the whole message). */
export type Refusal = [call: () => unknown, path: (string | number)[], message: string | RegExp];

/** Why `call` is not refused with a BAD_REQUEST domain error naming `path` with the message; undefined when it is. */
export function notRefused([call, path, message]: Refusal): string | undefined {
  try {
    call();
  } catch (error) {
    if (!(error instanceof BerthError)) return `not a domain error: ${String(error)}`;
    const problems: string[] = [];
    if (error.code !== 'BAD_REQUEST') problems.push(`code ${error.code}`);
    if (JSON.stringify(error.issues?.[0]?.path) !== JSON.stringify(path)) problems.push(`the issue names ${JSON.stringify(error.issues?.[0]?.path)}`);
    if (typeof message === 'string' ? error.message !== message : !message.test(error.message)) problems.push(`message ${JSON.stringify(error.message)}`);
    return problems.length ? problems.join('; ') : undefined;
  }
  return 'accepted';
}

/** One assertion: every call of the table is refused as expected. */
export function refusals(t: Test, what: string, cases: Refusal[]) {
  const failing = cases.flatMap(refusal => {
    const why = notRefused(refusal);
    return why ? [`${refusal[0].toString().replace(/^\(\) => /, '')}: ${why}`] : [];
  });
  t.same(failing, [], what);
}
