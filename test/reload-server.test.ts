// settings.reloadServer on the operator command (`berth start`, as scripts/start.sh runs it): a
// request in flight when the reload is asked completes; a key changed in berth.config.json
// (bodyLimit: a body that was 413 is served after the reload) takes effect; a configuration on disk
// that fails is a 400 naming the key, and the instance goes on serving with the one it has.
// The same process serves throughout. The reload here is asked right after the first /health answers:
// on the embedded database the start's jobs are often still starting then, and such a reload was
// once answered true and lost (the 413 stayed).
import t from 'tap';
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { processDatabase, dataDirFor, waitFor, freePort, Client } from '@berth/core/testing';
import { cli, nodeFlags, repoRoot } from './helpers.ts';

const run = promisify(execFile);
t.setTimeout(180_000);

/**
 * A POST whose headers go now and whose body's last bytes go when `finish` is called. It asks
 * `Expect: 100-continue`: `received` settles when the server's "100 Continue" arrives, which Node's
 * server writes once it has parsed the request's headers and taken the request in, so the request
 * is in flight on the server from then on.
 */
function slowPost(url: string, apiKey: string, body: string): { finish(): void; received: Promise<void>; answer: Promise<{ status: number; body: string }> } {
  let finish!: () => void;
  let received!: Promise<void>;
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-api-key': apiKey, expect: '100-continue' } }, res => {
      let text = '';
      res.on('data', c => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject);
    received = new Promise<void>(ok => req.on('continue', () => ok()));
    req.flushHeaders();
    void received.then(() => req.write(body.slice(0, 5)));
    finish = () => req.end(body.slice(5));
  });
  return { finish, received, answer };
}

t.test('reloadServer: in-flight requests complete, the configuration on disk takes effect', async t => {
  const db = await processDatabase();
  t.teardown(() => db.drop());
  const dataDir = dataDirFor(t);
  const configFile = path.join(dataDir, 'berth.config.json');
  writeFileSync(configFile, JSON.stringify({ bodyLimit: 4096 }));
  const port = await freePort();
  const env = { ...process.env, ...db.env, BERTH_DATA_DIR: dataDir, BERTH_CONFIG: configFile, BERTH_LOG_LEVEL: 'warn', BERTH_PROXY: 'none', PORT: String(port), HOST: '127.0.0.1' };
  const created = await run(process.execPath, [...nodeFlags, cli, 'admin', 'create', '--email', 'ops@example.com', '--password', 'ops-secret-password'], { env, cwd: repoRoot });
  const { apiKey } = JSON.parse(created.stdout.trim().split('\n').pop()!);

  let stderr = '';
  const child = spawn(process.execPath, [...nodeFlags, cli, 'start'], { env, cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', c => (stderr += c));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${port}`;
  const serving = () => waitFor('Berth to serve', async () => (await fetch(`${url}/health`).catch(() => null))?.ok, { timeout: 60_000 });
  await serving();
  const c = new Client(url, { apiKey });

  // A valid JSON body of 8 KiB: its padding is whitespace.
  const big = JSON.stringify({ name: 'big' }) + ' '.repeat(8192);
  const tooLarge = await fetch(`${url}/api/project.create`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: big });
  t.equal(tooLarge.status, 413, 'bodyLimit 4096 from berth.config.json: an 8 KiB body is refused');

  const inFlight = slowPost(`${url}/api/project.create`, apiKey, JSON.stringify({ name: 'in-flight' }));
  // The server has the request (its 100 Continue came back) before the reload is asked.
  await inFlight.received;
  writeFileSync(configFile, JSON.stringify({ bodyLimit: 65536 }));
  const reloaded = await c.post('settings.reloadServer', {});
  t.equal(reloaded.status, 200, JSON.stringify(reloaded.body));
  t.equal(reloaded.body, true, 'reloadServer answers true');
  inFlight.finish();
  const done = await inFlight.answer;
  t.equal(done.status, 200, `the request in flight completed: ${done.body}`);
  t.equal(JSON.parse(done.body).project?.name ?? JSON.parse(done.body).name, 'in-flight', 'its project was created');

  await serving();
  const served = await fetch(`${url}/api/project.create`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: big });
  t.equal(served.status, 200, 'after the reload, bodyLimit 65536 from the file: the same body is served');
  const projects = await c.get('project.all');
  t.same(projects.body.map((p: { name: string }) => p.name).sort(), ['big', 'in-flight'], 'both projects are there');

  writeFileSync(configFile, JSON.stringify({ bodyLimit: 'lots' }));
  const refused = await c.post('settings.reloadServer', {});
  t.equal(refused.status, 400, 'a configuration on disk that fails is the caller’s error');
  t.match(refused.body.message, /nothing was reloaded.*bodyLimit/, 'naming the key');
  t.equal((await c.get('project.all')).status, 200, 'and Berth goes on serving');
  t.equal(child.exitCode, null, 'the same process serves throughout');
  t.notMatch(stderr, /reload failed|berth: /, 'nothing failed on the way');

  child.kill('SIGTERM');
  await waitFor('Berth to stop', () => child.exitCode !== null);
  t.equal(child.exitCode, 0, 'and it stops cleanly after reloads');
});
