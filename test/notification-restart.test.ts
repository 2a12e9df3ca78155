// The outbox's promise: a delivery stored by a process that is killed (SIGKILL) before it sends
// goes out once after the next start. The process that stores it runs without the job worker
// (BERTH_JOBS=false), so the kill lands between the commit and the send every time; its event is
// the real one of every start, platformStart, heard by a channel with dokployRestart on. Then a
// deploy: its status `done` and its appDeploy delivery commit together (the bus's durable emit),
// the process is killed the moment `done` is readable while the channel's endpoint is still down,
// and the delivery goes out once after the restart, when the endpoint is up.
import t from 'tap';
import http from 'node:http';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { processDatabase, dataDirFor, startHttpSink, waitFor, freePort, sleep, removeServiceAndVolume, Client, TEST_BASE_IMAGE, LOOPBACK_STAND_INS } from '@berth/core/testing';
import { cli, nodeFlags, repoRoot } from './helpers.ts';

const run = promisify(execFile);
t.setTimeout(240_000);

t.test('a delivery stored before a kill is sent once after the restart', async t => {
  const db = await processDatabase();
  t.teardown(() => db.drop());
  const sink = await startHttpSink(t);
  const dataDir = dataDirFor(t);
  const env = { ...process.env, ...db.env, BERTH_DATA_DIR: dataDir, BERTH_CONFIG: '', BERTH_LOG_LEVEL: 'warn', BERTH_PROXY: 'none', BERTH_OUTBOUND_ALLOW: LOOPBACK_STAND_INS.join(',') };
  const created = await run(process.execPath, [...nodeFlags, cli, 'admin', 'create', '--email', 'ops@example.com', '--password', 'ops-secret-password'], { env, cwd: repoRoot });
  const { apiKey } = JSON.parse(created.stdout.trim().split('\n').pop()!);

  const children: ChildProcess[] = [];
  t.teardown(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });
  const start = async (jobs: boolean) => {
    const port = await freePort();
    const child = spawn(process.execPath, [...nodeFlags, cli, 'start'], { env: { ...env, PORT: String(port), HOST: '127.0.0.1', BERTH_JOBS: String(jobs) }, cwd: repoRoot, stdio: 'ignore' });
    children.push(child);
    const url = `http://127.0.0.1:${port}`;
    await waitFor('Berth to listen', async () => (await fetch(`${url}/health`).catch(() => null))?.ok, { timeout: 60_000 });
    return { child, client: new Client(url, { apiKey }) };
  };
  const kill = async (child: ChildProcess) => {
    child.kill('SIGKILL');
    await waitFor('the process to die', () => child.exitCode !== null || child.signalCode !== null);
  };

  const first = await start(false);
  const toggles = { appBuildError: false, databaseBackup: false, dokployRestart: true, appDeploy: false, dockerCleanup: false };
  const channel = await first.client.post('notification.createCustom', { name: 'restarts', ...toggles, endpoint: `${sink.url}/hook` });
  t.equal(channel.status, 200, JSON.stringify(channel.body));
  const notificationId = channel.body.notificationId;
  await kill(first.child);

  const second = await start(false);
  const stored = await waitFor('the start stored as a delivery', async () => {
    const r = await second.client.get('notification.deliveries', { notificationId });
    return r.status === 200 && r.body.length === 1 ? r.body[0] : null;
  });
  t.match(stored, { event: 'platformStart', state: 'pending', tries: 0 }, 'committed, not sent');
  await kill(second.child);
  t.same(sink.requests, [], 'nothing was sent before the kill');

  const third = await start(true);
  await waitFor('both starts delivered', () => sink.requests.length >= 2, { timeout: 30_000 });
  await sleep(1_500);
  const ids = sink.requests.map(r => r.headers['webhook-id']);
  t.equal(ids.filter(id => id === stored.deliveryId).length, 1, 'the delivery stored before the kill went out once');
  t.equal(sink.requests.length, 2, "and the third start's own; nothing twice");
  const log = (await third.client.get('notification.deliveries', { notificationId })).body as any[];
  t.same(
    log.map(d => [d.state, d.tries]),
    [
      ['sent', 1],
      ['sent', 1],
    ],
  );
  await kill(third.child);
});

t.test('a deploy killed right after its status is done: its delivery goes out after the restart', async t => {
  const db = await processDatabase();
  t.teardown(() => db.drop());
  const dataDir = dataDirFor(t);
  const env = {
    ...process.env,
    ...db.env,
    BERTH_DATA_DIR: dataDir,
    BERTH_CONFIG: '',
    BERTH_LOG_LEVEL: 'warn',
    BERTH_PROXY: 'none',
    BERTH_OUTBOUND_ALLOW: LOOPBACK_STAND_INS.join(','),
    BERTH_DEPLOY_SETTLE: '0',
  };
  const created = await run(process.execPath, [...nodeFlags, cli, 'admin', 'create', '--email', 'ops@example.com', '--password', 'ops-secret-password'], { env, cwd: repoRoot });
  const { apiKey } = JSON.parse(created.stdout.trim().split('\n').pop()!);
  const children: ChildProcess[] = [];
  t.teardown(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });
  const start = async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [...nodeFlags, cli, 'start'], { env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, cwd: repoRoot, stdio: 'ignore' });
    children.push(child);
    const url = `http://127.0.0.1:${port}`;
    await waitFor('Berth to listen', async () => (await fetch(`${url}/health`).catch(() => null))?.ok, { timeout: 60_000 });
    return { child, client: new Client(url, { apiKey }) };
  };

  // The receiver's port, with nothing listening on it until the restart: no send can succeed before the kill.
  const receiverPort = await freePort();
  const first = await start();
  const c = first.client;
  const toggles = { appBuildError: false, databaseBackup: false, dokployRestart: false, appDeploy: true, dockerCleanup: false };
  const channel = await c.post('notification.createCustom', { name: 'deploys', ...toggles, endpoint: `http://127.0.0.1:${receiverPort}/hook` });
  t.equal(channel.status, 200, JSON.stringify(channel.body));
  const notificationId = channel.body.notificationId;
  const project = await c.post('project.create', { name: 'killed-shop' });
  const app = (await c.post('application.create', { name: 'web', environmentId: project.body.environment.environmentId })).body;
  t.teardown(() => removeServiceAndVolume(app.appName));
  await c.post('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_BASE_IMAGE });
  await c.post('application.update', { applicationId: app.applicationId, command: 'sleep', args: ['3600'] });
  t.equal((await c.post('application.deploy', { applicationId: app.applicationId })).status, 200);
  await waitFor('the application done', async () => (await c.get('application.one', { applicationId: app.applicationId })).body.applicationStatus === 'done', { timeout: 180_000, interval: 20 });
  first.child.kill('SIGKILL');
  await waitFor('the process to die', () => first.child.exitCode !== null || first.child.signalCode !== null);

  const received: { id: string; body: string }[] = [];
  const receiver = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', p => parts.push(p as Buffer));
    req.on('end', () => {
      received.push({ id: String(req.headers['webhook-id']), body: Buffer.concat(parts).toString('utf8') });
      res.end('{}');
    });
  });
  await new Promise<void>(r => receiver.listen(receiverPort, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>(r => {
        receiver.closeAllConnections();
        receiver.close(() => r());
      }),
  );

  const second = await start();
  const log = await waitFor('the delivery stored before the kill', async () => {
    const r = await second.client.get('notification.deliveries', { notificationId });
    return r.status === 200 && r.body.length ? (r.body as any[]) : null;
  });
  t.equal(log.length, 1, 'one delivery, stored with the status before the kill');
  t.equal(log[0].event, 'appDeploy');
  // A try that met the closed port waits out its backoff (10 s); one cut mid-send, its lock (40 s).
  await waitFor('the delivery sent after the restart', () => received.length > 0, { timeout: 90_000 });
  await sleep(1_500);
  t.same(
    received.map(r => r.id),
    [log[0].deliveryId],
    'it went out once',
  );
  t.match(received[0]!.body, app.appName, 'naming the deployed application');
  const after = (await second.client.get('notification.deliveries', { notificationId })).body as any[];
  t.match(after, [{ deliveryId: log[0].deliveryId, state: 'sent' }]);
  second.child.kill('SIGKILL');
});
