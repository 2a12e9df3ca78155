// What a stop does to deployments: a graceful stop ends the running one with the reason; a
// process that died leaves it `running`, and the next boot marks it error and settles it.
// Queued deployments survive either and run after the restart.
import { setTimeout as delay } from 'node:timers/promises';
import t from 'tap';
import { signUpAdmin, waitFor, Client } from '@berth/core/testing';
import { startServer, enqueue, waitForStatus, logText, events, follow, gate, unique } from './helpers.ts';

const STOPPED = 'Berth stopped while this deployment was running (the process exited or was killed)';

t.test('a stop in the middle of a deployment: error with the reason, settled, the queue runs after the restart', async t => {
  let server = await startServer();
  t.teardown(() => server.destroy());
  const { apiKey } = await signUpAdmin(server);
  let client = new Client(server.url, { apiKey });

  const target = unique('long');
  // A gate nobody opens: only the stop ends it.
  const long = await enqueue(client, target, { lines: ['started'], gate: gate(server).file });
  const next = await enqueue(client, target, { lines: ['next one'] });
  const elsewhere = await enqueue(client, unique('other'), { lines: ['other target'] });
  await waitFor('the long deployment to start', () => logText(long.logPath).includes('started'));
  // An open log stream must not hold the stop: stop once the stream has delivered its first line.
  let firstLine!: () => void;
  const streaming = new Promise<void>(resolve => {
    firstLine = resolve;
  });
  const following = follow(server.url, long.deploymentId, { 'x-api-key': apiKey }, received => {
    if (received.length) firstLine();
    return false;
  });
  await Promise.race([
    streaming,
    following.then(r => {
      throw new Error(`the stream ended before its first line: ${JSON.stringify(r)}`);
    }),
  ]);
  const stopping = Date.now();
  const stopped = await Promise.race([server.stop().then(() => true), delay(60_000, false, { ref: false })]);
  t.ok(stopped, 'the stop ended although a log stream was open');
  t.ok(Date.now() - stopping < 30_000, `the stop took ${Date.now() - stopping} ms`);
  const followed = await following;
  t.same(followed.events.slice(0, 1), [{ event: 'message', data: 'started' }], 'the stream got the line and was closed');

  server = await server.restart();
  client = new Client(server.url, { apiKey });
  const ended = (await client.get('deployment.one', { deploymentId: long.deploymentId })).body;
  t.match(ended, { status: 'error', errorMessage: STOPPED, finishedAt: String });
  t.match(logText(long.logPath), new RegExp(`started\\n${STOPPED.replace(/[()]/g, '\\$&')}\\n$`));
  t.match(
    events(server).filter(e => e.event === 'settle' && e.targetId === target),
    [{ outcome: 'error', reason: STOPPED }],
  );
  t.equal((await waitForStatus(client, next.deploymentId, ['done', 'error'])).status, 'done', 'the queued deployment of the same target ran after the restart');
  t.equal((await waitForStatus(client, elsewhere.deploymentId, ['done', 'error'])).status, 'done');
  t.match(logText(next.logPath), 'next one');
});

t.test('a deployment left running by a process that died: error with the reason at boot, settled once', async t => {
  let server = await startServer();
  t.teardown(() => server.destroy());
  const { apiKey } = await signUpAdmin(server);
  let client = new Client(server.url, { apiKey });

  const target = unique('crash');
  const d = await enqueue(client, target, { lines: ['was working'] });
  await waitForStatus(client, d.deploymentId, ['done']);
  const queued = await enqueue(client, unique('q'), {}, {});
  await waitForStatus(client, queued.deploymentId, ['done']);
  // What a killed process leaves behind: the row still running, a queued one never started. Written
  // through a kernel without the job scheduler (it neither recovers nor dispatches), so the same on
  // an external PostgreSQL and on the embedded database.
  server = await server.restart({ jobs: false });
  const connection = server.kernel.container.cradle.orm.em.getConnection();
  await connection.execute(`update deployments set status = 'running', finished_at = null where deployment_id = ?`, [d.deploymentId]);
  await connection.execute(`update deployments set status = 'queued', started_at = null, finished_at = null where deployment_id = ?`, [queued.deploymentId]);
  const startsBefore = events(server).filter(e => e.event === 'start' && e.deploymentId === queued.deploymentId).length;

  server = await server.restart();
  client = new Client(server.url, { apiKey });
  const after = (await client.get('deployment.one', { deploymentId: d.deploymentId })).body;
  t.match(after, { status: 'error', errorMessage: STOPPED });
  t.match(logText(d.logPath), new RegExp(`was working\\n${STOPPED.replace(/[()]/g, '\\$&')}\\n$`), 'the reason ends the log');
  t.equal(events(server).filter(e => e.event === 'settle' && e.targetId === target).length, 1);
  t.match(
    events(server).find(e => e.event === 'settle' && e.targetId === target),
    { outcome: 'error', reason: STOPPED },
  );
  await waitFor('the queued deployment to run again', () => events(server).filter(e => e.event === 'start' && e.deploymentId === queued.deploymentId).length === startsBefore + 1);
  t.equal((await waitForStatus(client, queued.deploymentId, ['done'])).status, 'done', 'a deployment queued when the process died runs after the restart');
});
