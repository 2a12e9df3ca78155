// The README's own commands, as a new user types them: a fresh clone of the repository, its start
// command (`bash scripts/start.sh`, here with a data directory and a port of its own, on the
// embedded database), then the README's walkthrough block (the fenced block tagged
// `sh berth-walkthrough`) run as it stands, with IMAGE set to a locally built image since nothing
// can be pulled here; and the operator commands `bash scripts/berth.sh admin create`,
// `bash scripts/berth.sh db copy` and `bash scripts/berth.sh restore` (with Berth stopped). Each
// answer is checked.
import t, { type Test } from 'tap';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { Client, freePort, signUpAdmin, startTestServer, waitFor, TEST_STATIC_IMAGE } from '@berth/core/testing';
import { repoRoot } from './helpers.ts';

const run = promisify(execFile);
const docker = new Docker();
const PAGE = 'served by the walkthrough image';
const IMAGE = 'berth-test/walkthrough:1';
t.setTimeout(900_000);

/** The README's walkthrough block, by its fixed marker. */
function walkthroughBlock(readme: string): string {
  const blocks = [...readme.matchAll(/^```sh berth-walkthrough\n([\s\S]*?)^```$/gm)];
  if (blocks.length !== 1) throw new Error(`README.md has ${blocks.length} blocks tagged "sh berth-walkthrough", not one`);
  return blocks[0]![1]!;
}

// The environment of a user's shell: none of the test run's own variables.
const userEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TAP|_TAPJS|NODE_OPTIONS$|TS_NODE|DATABASE_URL$|BERTH_)/.test(k))) as Record<string, string>;

const dir = mkdtempSync(path.join(os.tmpdir(), 'berth-readme-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const clone = path.join(dir, 'berth');

/** `bash scripts/start.sh` in the clone, with a data directory and a port of its own; stopped at the test's teardown. */
async function startBerth(t: Test, dataDir: string, env: Record<string, string> = {}) {
  const port = await freePort();
  // The machine set up once, by the walkthrough's start (BERTH_SETUP_HOST: '1', the default); the other starts skip it.
  const berth = spawn('bash', ['scripts/start.sh'], {
    cwd: clone,
    env: { ...userEnv, BERTH_SETUP_HOST: '0', ...env, PORT: String(port), BERTH_DATA_DIR: dataDir },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  berth.stdout!.on('data', d => (log += d));
  berth.stderr!.on('data', d => (log += d));
  const exited = new Promise<void>(resolve => berth.on('exit', () => resolve()));
  t.teardown(async () => {
    try {
      process.kill(-berth.pid!, 'SIGTERM');
    } catch {
      /* gone */
    }
    await exited;
  });
  const health = await waitFor(
    'Berth started by scripts/start.sh',
    async () => {
      if (berth.exitCode !== null) throw new Error(`scripts/start.sh exited ${berth.exitCode}`);
      const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
      return res?.status === 200 ? res.json() : undefined;
    },
    { timeout: 600_000, interval: 500 },
  ).catch(e => {
    throw new Error(`${(e as Error).message}\n${log.slice(-3000)}`);
  });
  t.same(health, { status: 'ok' }, 'scripts/start.sh serves the API');
  /** Stops it as an operator does (SIGTERM to start.sh and what it started) and waits until it has exited. */
  const stop = async () => {
    try {
      process.kill(-berth.pid!, 'SIGTERM');
    } catch {
      /* gone */
    }
    await exited;
  };
  return { port, url: `http://127.0.0.1:${port}`, log: () => log, stop };
}

/** `bash scripts/berth.sh …` in the clone, as an operator types it. */
const berthCommand = (args: string[], env: Record<string, string>) =>
  run('bash', ['scripts/berth.sh', ...args], { cwd: clone, env: { ...userEnv, ...env }, timeout: 300_000 }).catch(e => {
    throw new Error(`berth.sh ${args.slice(0, 2).join(' ')} failed (exit ${e.code}): ${e.stdout}\n${e.stderr}`);
  });

t.before(async () => {
  await run('git', ['clone', '--quiet', repoRoot, clone]);
});

t.test('a fresh clone starts with scripts/start.sh and the README walkthrough runs verbatim', async t => {
  // An image that serves HTTP on port 80, as the walkthrough's default (nginx:alpine) does.
  await run('bash', ['-c', `printf 'FROM ${TEST_STATIC_IMAGE}\\nRUN echo "${PAGE}" > /www/index.html\\n' | docker build -q -t ${IMAGE} -`]);
  const appPort = await freePort();
  t.teardown(async () => {
    // The application the walkthrough deployed: the service publishing its port.
    for (const s of await docker.listServices()) {
      if (s.Endpoint?.Ports?.some(p => p.PublishedPort === appPort))
        await docker
          .getService(s.ID)
          .remove()
          .catch(() => undefined);
    }
  });
  const berth = await startBerth(t, path.join(dir, 'walkthrough-data'), { BERTH_SETUP_HOST: '1' });
  // The start line is written once listen() resolves, which can be after the first /health answer.
  await waitFor('the start line', async () => (/Berth listening/.test(berth.log()) ? true : undefined), { timeout: 30_000, interval: 200 }).catch(() => undefined);
  t.match(berth.log(), /embedded database/i, 'on the embedded database, as without DATABASE_URL');
  t.match(berth.log(), '[setup-host] this machine is ready: 0 step(s) changed', 'start.sh first set up this machine (berth setup-host): in place here');

  const block = walkthroughBlock(readFileSync(path.join(clone, 'README.md'), 'utf8'));
  const walk = await run('bash', ['-c', `set -euo pipefail\n${block}`], { cwd: clone, env: { ...userEnv, PORT: String(berth.port), IMAGE, APP_PORT: String(appPort) }, timeout: 300_000 }).catch(e => {
    throw new Error(`the walkthrough failed (exit ${e.code}): ${e.stdout}\n${e.stderr}`);
  });
  const lines = walk.stdout.trim().split('\n');
  t.match(JSON.parse(lines[0]!), [{ name: 'shop', environments: [{ name: 'production', isDefault: true }] }], 'project.all lists the project with its default environment');
  t.match(JSON.parse(lines[1]!), { result: { data: { json: [{ name: 'shop' }] } } }, 'and the tRPC form answers the same');
  t.equal(lines[2], 'true', 'saveDockerProvider answers true');
  t.match(JSON.parse(lines[3]!), { publishedPort: appPort, targetPort: 80, publishMode: 'host' }, 'port.create answers the port');
  t.equal(lines[4], 'true', 'application.deploy answers true');
  t.equal(lines[5], 'deploy: done', 'the deployment is done');
  t.equal(lines[6], PAGE, 'the application answers on its published port');
  t.equal(lines.length, 7, 'seven answers, nothing else');
});

t.test('berth.sh admin create: the first admin and an API key, then Berth starts with them', async t => {
  const dataDir = path.join(dir, 'admin-data');
  const created = await berthCommand(['admin', 'create', '--email', 'ops@example.com', '--password', 'a long password'], { BERTH_DATA_DIR: dataDir });
  const admin = JSON.parse(created.stdout.trim().split('\n').at(-1)!);
  t.match(admin, { userId: String, organizationId: String, apiKey: String }, 'it prints {userId, organizationId, apiKey}');
  const berth = await startBerth(t, dataDir);
  t.notMatch(berth.log(), '[setup-host]', 'BERTH_SETUP_HOST=0 skips the machine setup');
  const me = await new Client(berth.url, { apiKey: admin.apiKey }).get('user.get');
  t.equal(me.status, 200, 'the printed API key works');
  t.match(me.body, { userId: admin.userId, organizationId: admin.organizationId, user: { email: 'ops@example.com' } });
});

t.test("berth.sh db copy: Berth's records from an external PostgreSQL into a new embedded database", async t => {
  const source = await startTestServer({ jobs: false }, 'external');
  t.teardown(() => source.destroy());
  const { client } = await signUpAdmin(source, 'mover@example.com', 'a long password');
  t.equal((await client.post('project.create', { name: 'moved' })).status, 200);
  const from = source.database.connectionString!; // the source's own database on the test server
  await source.stop();
  const dataDir = path.join(dir, 'copy-data');
  const copied = await berthCommand(['db', 'copy', '--from', from], { BERTH_DATA_DIR: dataDir });
  t.match(copied.stdout, /^projects\t1$/m, 'it prints each table with its rows');
  const berth = await startBerth(t, dataDir);
  const login = await new Client(berth.url).post('auth.login', { email: 'mover@example.com', password: 'a long password' });
  t.equal(login.status, 200, 'the copied account signs in on the embedded database');
  const projects = await new Client(berth.url, { token: login.body.token }).get('project.all');
  t.same(
    projects.body.map((p: { name: string }) => p.name),
    ['moved'],
    'with its project',
  );
});

t.test("berth.sh restore: an archive of Berth's own data brings the instance back into a new data directory, Berth stopped", async t => {
  const passphrase = 'a long passphrase kept elsewhere';
  const dataDir = path.join(dir, 'own-data');
  const created = await berthCommand(['admin', 'create', '--email', 'owner@example.com', '--password', 'a long password'], { BERTH_DATA_DIR: dataDir });
  const { apiKey } = JSON.parse(created.stdout.trim().split('\n').at(-1)!);
  const berth = await startBerth(t, dataDir, { BERTH_BACKUP_PASSPHRASE: passphrase });
  const client = new Client(berth.url, { apiKey });
  const project = await client.post('project.create', { name: 'kept', env: 'TOKEN=s3cret' });
  t.equal(project.status, 200, 'a project with a sealed env');
  const dest = await client.post('destination.create', { name: 'disk', provider: 'local', bucket: 'nightly', endpoint: '', region: '', accessKey: '', secretAccessKey: '' });
  t.equal(dest.status, 200, 'a local destination');
  const backup = await client.post('backup.create', {
    schedule: '0 2 * * *',
    enabled: false,
    prefix: 'berth',
    destinationId: dest.body.destinationId,
    database: 'berth',
    databaseType: 'web-server',
    keepLatestCount: 7,
  });
  t.equal(backup.status, 200, 'a web-server backup');
  const run = await client.post('backup.manualBackupWebServer', { backupId: backup.body.backupId });
  t.same([run.status, run.body], [200, true], 'manualBackupWebServer answers true once the archive is stored and read back');
  const files = (await client.get('backup.listBackupFiles', { destinationId: dest.body.destinationId, search: 'berth/' })).body as { Path: string }[];
  t.match(files, [{ Path: /^berth\/webserver-backup-.*\.archive\.enc$/ }], 'the archive is listed');
  // The local destination's bucket is a directory below dataDir/backups.
  const archive = path.join(dataDir, 'backups', 'nightly', files[0]!.Path);
  await berth.stop();

  const target = path.join(dir, 'restored');
  const restored = await berthCommand(['restore', '--from', archive, '--passphrase-env', 'BERTH_BACKUP_PASSPHRASE', '--data-dir', target], { BERTH_BACKUP_PASSPHRASE: passphrase });
  t.match(restored.stdout, `restored into ${target}`, 'it says where it restored');
  const again = await startBerth(t, target);
  const back = new Client(again.url, { apiKey });
  const all = await back.get('project.all');
  t.equal(all.status, 200, 'the API key made before the backup is accepted by the restored instance');
  t.same(
    (all.body as { name: string }[]).map(p => p.name),
    ['kept'],
    'with its project',
  );
  const one = await back.get('project.one', { projectId: project.body.project.projectId });
  t.equal(one.body.env, 'TOKEN=s3cret', 'and the sealed env opens with the restored key');
});
