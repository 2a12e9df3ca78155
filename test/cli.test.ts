// The operator's view: `berth admin create` for scripted installs, `berth start` as a real
// process — secrets never in its log, SIGTERM finishes in-flight requests and exits 0.
import t from 'tap';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createServer } from 'node:net';
import { createTestDatabase, Client } from '@berth/core/testing';
import { cli, nodeFlags, repoRoot } from './helpers.ts';

const run = promisify(execFile);
const freePort = () => new Promise<number>((resolve, reject) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => {
    const port = (s.address() as { port: number }).port;
    s.close(() => resolve(port));
  });
  s.on('error', reject);
});

async function waitHealthy(url: string, ms = 30_000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch { /* not yet */ }
    await new Promise(r => setTimeout(r, 100));
  }
  throw new Error(`${url} did not become healthy`);
}

t.test('admin create prints a working API key; berth start serves it; secrets stay out of the log; SIGTERM is graceful', async t => {
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const dataDir = t.testdir();
  const env = { ...process.env, DATABASE_URL: db.url, BERTH_DATA_DIR: dataDir, BERTH_LOG_LEVEL: 'trace', BERTH_CONFIG: '' };

  const created = await run(process.execPath, [...nodeFlags, cli, 'admin', 'create', '--email', 'ops@example.com', '--password', 'ops-secret-password'], { env, cwd: repoRoot });
  const { apiKey, organizationId } = JSON.parse(created.stdout.trim().split('\n').pop()!);
  t.match(apiKey, /^[A-Za-z0-9_-]{40,}$/);
  t.ok(organizationId);
  const twice = await run(process.execPath, [...nodeFlags, cli, 'admin', 'create', '--email', 'x@example.com', '--password', 'another-password'], { env, cwd: repoRoot }).catch(e => e);
  t.equal(twice.code, 1, 'a second admin create fails');
  t.match(twice.stderr, /already exists/);

  const port = await freePort();
  const child = spawn(process.execPath, [...nodeFlags, cli, 'start'], { env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, cwd: repoRoot });
  let log = '';
  child.stdout.on('data', d => (log += d));
  child.stderr.on('data', d => (log += d));
  const exited = new Promise<number | null>(resolve => child.on('exit', code => resolve(code)));
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url);

  const client = new Client(url, { apiKey });
  const project = await client.post('project.create', { name: 'from-cli' });
  t.equal(project.status, 200);
  const login = await new Client(url).post('auth.login', { email: 'ops@example.com', password: 'ops-secret-password' });
  t.equal(login.status, 200);
  await new Client(url, { token: login.body.token }).get('auth.get?token=leak-check');
  await client.get('project.all');

  // An in-flight request when SIGTERM arrives still gets its answer.
  const inflight = client.get('project.all');
  await new Promise(r => setTimeout(r, 5));
  child.kill('SIGTERM');
  const answer = await inflight;
  t.equal(answer.status, 200, 'in-flight request answered');
  t.equal(await exited, 0, 'exits 0 after SIGTERM');

  t.match(log, /Berth listening on/);
  t.match(log, /shutting down/);
  for (const secret of [apiKey, 'ops-secret-password', login.body.token, 'leak-check']) {
    t.notOk(log.includes(secret), `the log never contains ${secret.slice(0, 4)}…`);
  }
});

t.test('a bad configuration stops the start with a message naming the key', async t => {
  const bad = await run(process.execPath, [...nodeFlags, cli, 'start'], { env: { ...process.env, PORT: 'eighty', BERTH_DATA_DIR: t.testdir(), BERTH_CONFIG: '' }, cwd: repoRoot }).catch(e => e);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /Invalid configuration: PORT/);
});
