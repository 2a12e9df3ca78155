// The outbox's promise: a delivery stored by a process that is killed (SIGKILL) before it sends
// goes out once after the next start. The process that stores it runs without the job worker
// (BERTH_JOBS=false), so the kill lands between the commit and the send every time; its event is
// the real one of every start, platformStart, heard by a channel with dokployRestart on.
import t from 'tap';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { processDatabase, dataDirFor, startHttpSink, waitFor, freePort, sleep, Client } from '@berth/core/testing';
import { cli, nodeFlags, repoRoot } from './helpers.ts';

const run = promisify(execFile);
t.setTimeout(240_000);

t.test('a delivery stored before a kill is sent once after the restart', async t => {
  const db = await processDatabase();
  t.teardown(() => db.drop());
  const sink = await startHttpSink(t);
  const dataDir = dataDirFor(t);
  const env = { ...process.env, ...db.env, BERTH_DATA_DIR: dataDir, BERTH_CONFIG: '', BERTH_LOG_LEVEL: 'warn', BERTH_PROXY: 'none' };
  const created = await run(process.execPath, [...nodeFlags, cli, 'admin', 'create', '--email', 'ops@example.com', '--password', 'ops-secret-password'], { env, cwd: repoRoot });
  const { apiKey } = JSON.parse(created.stdout.trim().split('\n').pop()!);

  const children: ChildProcess[] = [];
  t.teardown(() => { for (const c of children) if (c.exitCode === null) c.kill('SIGKILL'); });
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
  t.equal(sink.requests.length, 2, 'and the third start\'s own; nothing twice');
  const log = (await third.client.get('notification.deliveries', { notificationId })).body as any[];
  t.same(log.map(d => [d.state, d.tries]), [['sent', 1], ['sent', 1]]);
  await kill(third.child);
});
