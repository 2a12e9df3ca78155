// Shared by the deployment suites: a real server with the fixture plugin, a second
// organization, and waiting for a deployment to reach a state.
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startTestServer, Client, type TestServer } from '@berth/core/testing';
import type { BerthConfig, Principal } from '@berth/core';
import { eventsFile, type Plan } from './fixture/index.ts';

export const fixturePlugin = fileURLToPath(new URL('./fixture/index.ts', import.meta.url));
export const plugins = ['auth', 'user', 'organization', 'deployment'];

export const startServer = (config: Partial<BerthConfig> = {}) =>
  startTestServer({ plugins, extraPlugins: [fixturePlugin], ...config });

export type FixtureEvent = { event: 'start' | 'end' | 'settle'; deploymentId?: string; targetId: string; outcome?: string; reason?: string; action?: string; at: number };

/** What the fixture's deployer saw, in order. */
export function events(server: TestServer): FixtureEvent[] {
  const file = eventsFile(server.dataDir);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map(l => JSON.parse(l) as FixtureEvent);
}

export const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

/** Queues a "schedule" deployment that behaves as the plan says. */
export async function enqueue(client: Client, targetId: string, plan: Plan = {}, extra: Record<string, unknown> = {}) {
  const r = await client.post('deployFixture.enqueue', { targetType: 'schedule', targetId, plan, ...extra });
  if (r.status !== 200) throw new Error(`enqueue: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { deploymentId: string; status: string; logPath: string; createdAt: string };
}

/** Polls deployment.one until the status is one of `statuses` (or the time is up). */
export async function waitForStatus(client: Client, deploymentId: string, statuses: string[], timeoutMs = 10_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await client.get('deployment.one', { deploymentId });
    if (r.status === 200 && statuses.includes(r.body.status)) return r.body;
    if (Date.now() > until) throw new Error(`deployment ${deploymentId} did not reach ${statuses.join('|')} (last: ${JSON.stringify(r.body)})`);
    await new Promise(res => setTimeout(res, 50));
  }
}

/** An API key of the same admin, acting in a second organization it owns. */
export async function otherOrganization(server: TestServer, userId: string) {
  const identity = server.kernel.container.cradle.identity;
  const org = await identity.createOrganization(userId, 'Other');
  const principal: Principal = { userId, organizationId: org.id, role: 'owner', via: 'apiKey', credentialId: '' };
  const key = await identity.createApiKey(principal, { name: 'other', organizationId: org.id });
  return { organizationId: org.id, client: new Client(server.url, { apiKey: key.key }) };
}

/** Polls until the predicate holds. */
export async function waitUntil(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
  const until = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise(res => setTimeout(res, 25));
  }
}

/** The log file's text ('' before it exists). */
export const logText = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

export interface SseEvent { event: string; data: string }

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
        const data = block.split('\n').filter(l => l.startsWith('data: ')).map(l => l.slice(6)).join('\n');
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
