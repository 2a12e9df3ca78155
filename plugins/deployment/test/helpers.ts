// Shared by the deployment suites: a real server with the fixture plugin, gates that hold a
// deployment until the test opens them, and waiting for a deployment to reach a state.
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, waitFor, type Client, type TestServer } from '@berth/core/testing';
import type { BerthConfig } from '@berth/core';
import { eventsFile, type Plan } from './fixture/index.ts';

export const fixturePlugin = fileURLToPath(new URL('./fixture/index.ts', import.meta.url));
export const plugins = ['auth', 'user', 'organization', 'hosts', 'workloads', 'deployment'];

export const startServer = (config: Partial<BerthConfig> = {}) => startTestServer({ plugins, extraPlugins: [fixturePlugin], ...config });

export type FixtureEvent = { event: 'start' | 'end' | 'settle'; deploymentId?: string; targetId: string; outcome?: string; reason?: string; action?: string; at: number };

/** What the fixture's deployer saw, in order. */
export function events(server: TestServer): FixtureEvent[] {
  const file = eventsFile(server.dataDir);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(l => JSON.parse(l) as FixtureEvent);
}

/** The fixture's settle of a target, once recorded (waited for: a cancel or a boot's recovery may settle after the call that caused it answered). */
export const settleOf = (server: TestServer, targetId: string) => waitFor(`the settle of ${targetId}`, async () => events(server).find(e => e.event === 'settle' && e.targetId === targetId));

export const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

/** Queues a "schedule" deployment that behaves as the plan says. */
export async function enqueue(client: Client, targetId: string, plan: Plan = {}, extra: Record<string, unknown> = {}) {
  const r = await client.post('deployFixture.enqueue', { targetType: 'schedule', targetId, plan, ...extra });
  if (r.status !== 200) throw new Error(`enqueue: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { deploymentId: string; state: string; logPath: string; createdAt: string };
}

/** Polls deployment.one until its state (Berth's: queued, running, done, error, cancelled) is one of `statuses`; answers the record, or fails naming the last state at the deadline. */
export async function waitForStatus(client: Client, deploymentId: string, statuses: string[], timeoutMs = 30_000) {
  return waitFor(
    `deployment ${deploymentId} ${statuses.join('|')}`,
    async () => {
      const r = await client.get('deployment.one', { deploymentId });
      if (r.status !== 200) throw new Error(`deployment.one ${r.status}: ${JSON.stringify(r.body)}`);
      if (statuses.includes(r.body.state)) return r.body as Record<string, any>;
      throw new Error(`state ${r.body.state}`);
    },
    { timeout: timeoutMs, interval: 50 },
  );
}

let gates = 0;
/** A closed gate for a plan (`{ gate: g.file }`): the deployment waits at it until `open()`. */
export function gate(server: TestServer) {
  const file = path.join(server.dataDir, `gate-${++gates}`);
  return { file, open: () => writeFileSync(file, '') };
}

/** The log file's text ('' before it exists). */
export const logText = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Opens the live log of a deployment and collects its events until the server ends the
 * stream (or `stopAfter` says enough). Answers the HTTP status and what arrived.
 */
export async function follow(base: string, deploymentId: string, headers: Record<string, string>, stopAfter?: (events: SseEvent[]) => boolean) {
  const controller = new AbortController();
  const res = await fetch(`${base}/api/deployment.logs/stream?deploymentId=${encodeURIComponent(deploymentId)}`, { headers, signal: controller.signal });
  const received: SseEvent[] = [];
  if (!res.ok || !res.body) return { status: res.status, contentType: res.headers.get('content-type'), events: received, body: await res.text() };
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        if (block.startsWith(':')) continue;
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
        const data = block
          .split('\n')
          .filter(l => l.startsWith('data: '))
          .map(l => l.slice(6))
          .join('\n');
        received.push({ event, data });
      }
      if (stopAfter?.(received)) {
        controller.abort();
        break;
      }
    }
  } catch (e) {
    if ((e as Error).name !== 'AbortError') throw e;
  }
  return { status: res.status, contentType: res.headers.get('content-type'), events: received, body: '' };
}
