// GET /api/deployment.logs/stream?deploymentId=… — a deployment's log as Server-Sent Events:
// what is written so far, then each new line as it lands, then `event: end` with the final
// status (the peer's), state (Berth's) and error message, as deployment.one answers them. It reads the file and the record, so it follows a run of any process.
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerResponse } from 'node:http';
import { CANCELLED_MESSAGE, parseInput, WIRE_STATUS, type BerthHost, type DeploymentState, type EntityManager } from '@berth/core';
import { Deployment } from './entities.ts';
import { readFrom } from './log.ts';
import { DeploymentIdInput } from './schemas.ts';
import type { DeploymentStore } from './service.ts';
import { isFinished } from './views.ts';

export const STREAM_PATH = '/api/deployment.logs/stream';
const POLL_MS = 200;
const STATUS_EVERY_MS = 500;
/** A comment line now and then keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

export function registerLogStream(berth: BerthHost, store: DeploymentStore): void {
  const open = new Set<ServerResponse>();
  berth.http(app => {
    // Open streams would hold a graceful stop for its whole grace period.
    app.addHook('preClose', async () => {
      for (const res of open) res.end();
    });
    app.get(STREAM_PATH, { schema: { hide: true } }, async (req, reply) => {
      const principal = await berth.authenticate(req);
      // Checked as deployment.one's input: a 400 naming deploymentId when it is missing, not one string, or holds what no column could.
      const { deploymentId } = parseInput<{ deploymentId: string }>(DeploymentIdInput, req.query, true);
      const em = () => berth.container.cradle.orm.em.fork() as EntityManager;
      const record = await store.find(deploymentId, principal.organizationId, em());

      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' });
      open.add(res);
      let closed = false;
      res.on('close', () => {
        closed = true;
        open.delete(res);
      });
      const send = (chunk: string) => {
        if (!closed) res.write(chunk);
      };

      const decoder = new StringDecoder('utf8');
      let offset = 0;
      let partial = '';
      let lastStatusCheck = 0;
      let lastWrite = Date.now();
      let final: { status: string | null; state: string | null; errorMessage: string | null } | null = null;
      try {
        while (!closed) {
          const chunk = await readFrom(record.logPath, offset);
          if (chunk.length) {
            offset += chunk.length;
            const lines = (partial + decoder.write(chunk)).split('\n');
            partial = lines.pop() ?? '';
            if (lines.length) {
              send(lines.map(l => `data: ${l}\n\n`).join(''));
              lastWrite = Date.now();
            }
            continue;
          }
          // The run closes its log before it records the end, so a final status means the file is complete.
          if (final) {
            if (partial) send(`data: ${partial}\n\n`);
            send(`event: end\ndata: ${JSON.stringify(final)}\n\n`);
            break;
          }
          if (Date.now() - lastStatusCheck >= STATUS_EVERY_MS) {
            lastStatusCheck = Date.now();
            const row = await em().findOne(Deployment, { deploymentId }, { fields: ['status', 'errorMessage'] });
            if (!row) final = { status: null, state: null, errorMessage: null };
            else if (isFinished(row.status)) {
              const state = row.status as DeploymentState;
              final = { status: WIRE_STATUS[state], state, errorMessage: row.errorMessage ?? (state === 'cancelled' ? CANCELLED_MESSAGE : null) };
            }
            if (final) continue;
          }
          if (Date.now() - lastWrite >= KEEPALIVE_MS) {
            send(': keep-alive\n\n');
            lastWrite = Date.now();
          }
          await sleep(POLL_MS);
        }
      } catch (e) {
        req.log.error({ err: e, deploymentId }, 'deployment log stream failed');
      } finally {
        open.delete(res);
        if (!res.writableEnded) res.end();
      }
    });
  });
}
