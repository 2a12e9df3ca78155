// Test support that keeps the suite honest: polling with a deadline instead of fixed sleeps, host
// ports the OS hands out and no other test file of the run can take, and skips that are allowed
// only when listed, with their reason, in test/expected-skips.
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';

export const sleep = (ms: number) => new Promise<void>(r => setTimeout(r, ms));

export interface WaitOptions {
  /** Give up after this many milliseconds (default 30 s). */
  timeout?: number;
  /** Pause between two probes (default 100 ms). */
  interval?: number;
}

/**
 * Calls `probe` until it returns a value other than undefined, null or false, and returns that value.
 * A probe that throws counts as "not yet"; at the deadline the error names `what` and the last
 * answer or error, so a timeout says what was awaited.
 */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false> | T | undefined | null | false, o: WaitOptions = {}): Promise<T> {
  const until = Date.now() + (o.timeout ?? 30_000);
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value as T;
      last = value;
    } catch (e) {
      last = e;
    }
    if (Date.now() >= until) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`${what}: not within ${o.timeout ?? 30_000} ms (last: ${detail})`);
    }
    await sleep(o.interval ?? 100);
  }
}

// Ports handed out in this run are reserved by a lock file, so two test files running in parallel
// never publish the same one; the locks of this process go when it exits.
const portLocks = path.join(os.tmpdir(), 'berth-test-ports');
const heldHere = new Set<string>();
process.once('exit', () => {
  for (const file of heldHere)
    try {
      unlinkSync(file);
    } catch {
      /* already gone */
    }
});

function osPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host: '0.0.0.0', exclusive: true }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A TCP port that is free on the host now (the OS chose it) and reserved against every other test
 * process of this run, for a test that makes the engine publish on it.
 */
export async function freePort(): Promise<number> {
  mkdirSync(portLocks, { recursive: true });
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await osPort();
    const lock = path.join(portLocks, String(port));
    try {
      closeSync(openSync(lock, 'wx'));
    } catch {
      continue;
    }
    heldHere.add(lock);
    return port;
  }
  throw new Error('freePort: no port could be reserved in 50 attempts');
}

/**
 * Text a shell would act on, each in another way, every one of which would create `marker` if a
 * shell ever read it: separators, pipes, substitutions, a newline, redirections, quotes that end
 * a quoted string, globs, variables, and values a program would read as options.
 */
export const shellTricks = (marker: string) => [
  `a; touch ${marker}`,
  `a | touch ${marker}`,
  `a && touch ${marker}`,
  `false || touch ${marker}`,
  `a & touch ${marker}`,
  `$(touch ${marker})`,
  `\`touch ${marker}\``,
  `a\ntouch ${marker}`,
  `a > ${marker}`,
  `a >> ${marker} 2>&1 < /etc/passwd`,
  `it's "quoted" '$(touch ${marker})' "\`touch ${marker}\`"`,
  '* /* ?[a-z]* ~ {a,b}',
  '$HOME ${PATH} $1 $@ $$',
  '--help',
  '-rf /',
];

// ---- expected skips

const skipsFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/expected-skips');

/** The entries of test/expected-skips: id → reason. Lines are `<id>  <reason>`; `#` starts a comment. */
export function expectedSkips(file = skipsFile): Map<string, string> {
  const entries = new Map<string, string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const text = line.replace(/#.*/, '').trim();
    if (!text) continue;
    const [id, ...reason] = text.split(/\s+/);
    entries.set(id!, reason.join(' '));
  }
  return entries;
}

const standInsFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/stand-ins');

/** A line of test/stand-ins: what a test runs in place of a real part that cannot run here. */
export interface StandIn {
  id: string;
  /** What runs instead. */
  instead: string;
  why: string;
  /** The test files that check it, relative to the repository. */
  tests: string[];
}

/** The entries of test/stand-ins: four fields two or more spaces apart; `#` starts a comment. Throws on a line without four fields. */
export function standIns(file = standInsFile): StandIn[] {
  const entries: StandIn[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      const text = line.replace(/#.*/, '').trim();
      if (!text) return;
      const fields = text.split(/\s{2,}/);
      if (fields.length !== 4) throw new Error(`${file} line ${i + 1}: ${fields.length} fields, not the four <id>  <what runs instead>  <why>  <the test that checks it>`);
      const [id, instead, why, tests] = fields as [string, string, string, string];
      entries.push({ id, instead, why, tests: tests.split(/,\s*/) });
    });
  return entries;
}

/** The prefix of every allowed skip's reason; the test command's summary counts any other skip as a failure. */
export const EXPECTED_SKIP = 'expected skip';

/**
 * Whether a test can run its real part. `missing` is undefined when it can, or what is missing. When
 * something is missing, the test ends as a skip if `id` is listed in test/expected-skips, and fails
 * otherwise: a part that silently cannot run here is a defect, not a pass.
 */
export function canRun(t: Test, id: string, missing: string | undefined): boolean {
  if (missing === undefined) return true;
  if (expectedSkips().has(id)) {
    t.plan(0, `${EXPECTED_SKIP} ${id}: ${missing}`);
  } else {
    t.fail(`${id} cannot run here (${missing}) and is not listed in test/expected-skips`);
  }
  return false;
}
