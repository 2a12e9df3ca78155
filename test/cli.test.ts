// The operator's view: `berth admin create` for scripted installs, `berth start` as a real
// process — secrets never in its log (credentials, and the secrets of registries, storage, AI,
// notification channels and SSH keys, also on failing paths), SIGTERM finishes in-flight requests and exits 0. On the
// default database (BERTH_TEST_DB=default) both commands run without DATABASE_URL, on the
// embedded database in the data directory.
import t from 'tap';
import { spawn, execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import { createTestDatabase, dataDirFor, freePort, testDbMode, waitFor, Client } from '@berth/core/testing';
import { cli, nodeFlags, repoRoot } from './helpers.ts';

const run = promisify(execFile);

t.test('admin create prints a working API key; berth start serves it; secrets stay out of the log; SIGTERM is graceful', async t => {
  const dataDir = dataDirFor(t);
  const env: NodeJS.ProcessEnv = { ...process.env, BERTH_DATA_DIR: dataDir, BERTH_LOG_LEVEL: 'trace', BERTH_CONFIG: '' };
  delete env.DATABASE_URL;
  if (testDbMode() === 'external') {
    const db = await createTestDatabase();
    t.teardown(() => db.drop());
    env.DATABASE_URL = db.url;
  }

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
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    `${url}/health`,
    async () => {
      if (child.exitCode !== null) throw new Error(`berth start exited with ${child.exitCode}: ${log}`);
      return (await fetch(`${url}/health`)).ok;
    },
    { timeout: 60_000 },
  );

  const client = new Client(url, { apiKey });
  const project = await client.post('project.create', { name: 'from-cli' });
  t.equal(project.status, 200);
  const login = await new Client(url).post('auth.login', { email: 'ops@example.com', password: 'ops-secret-password' });
  t.equal(login.status, 200);
  await new Client(url, { token: login.body.token }).get('auth.get?token=leak-check');
  await client.get('project.all');
  // Secrets given to Berth, each also on a path that fails (a refused connection, a bad value),
  // where an error's message or its logged request could carry them.
  const secrets = {
    registry: 'registry-pw-leak-check',
    s3: 'S3secretLeakCheck0000000000000000',
    ai: 'sk-ai-leak-check',
    slack: 'T000/B000/slackLeakCheck',
    smtp: 'smtp-pw-leak-check',
    telegram: '123:telegramLeakCheck',
  };
  const quiet = { appBuildError: true, databaseBackup: false, dokployRestart: false, appDeploy: false, dockerCleanup: false };
  const registry = { registryName: 'leaky', username: 'ops', password: secrets.registry, registryUrl: '127.0.0.1:9', registryType: 'cloud', imagePrefix: null };
  const destination = { name: 'leaky', provider: 's3', accessKey: 'AKIALEAKCHECK', secretAccessKey: secrets.s3, bucket: 'b', region: 'us-east-1', endpoint: 'http://127.0.0.1:9' };
  const generated = (await client.post('sshKey.generate', { type: 'ed25519' })).body as { privateKey: string; publicKey: string };
  const privateLine = generated.privateKey.split('\n')[2]!;
  const calls: [string, unknown, 'get' | 'post'][] = [
    ['registry.create', registry, 'post'],
    ['registry.testRegistry', registry, 'post'],
    ['destination.create', destination, 'post'],
    ['destination.testConnection', destination, 'post'],
    ['ai.create', { name: 'leaky', apiUrl: 'http://127.0.0.1:9/v1', apiKey: secrets.ai, model: 'm', isEnabled: true }, 'post'],
    ['ai.getModels', { apiUrl: 'http://127.0.0.1:9/v1', apiKey: secrets.ai }, 'get'],
    ['notification.createSlack', { name: 'leaky', ...quiet, webhookUrl: `http://127.0.0.1:9/services/${secrets.slack}`, channel: '#ops' }, 'post'],
    ['notification.testSlackConnection', { webhookUrl: `http://127.0.0.1:9/services/${secrets.slack}`, channel: '#ops' }, 'post'],
    ['notification.testEmailConnection', { smtpServer: '127.0.0.1', smtpPort: 9, username: 'ops', password: secrets.smtp, fromAddress: 'a@example.com', toAddresses: ['b@example.com'] }, 'post'],
    ['notification.testTelegramConnection', { botToken: secrets.telegram, chatId: '1' }, 'post'],
    ['sshKey.create', { name: 'leaky', ...generated, organizationId }, 'post'],
    ['sshKey.create', { name: 'x'.repeat(300), ...generated, organizationId }, 'post'],
  ];
  for (const [op, input, kind] of calls) {
    const r = kind === 'get' ? await client.get(op, input as Record<string, unknown>) : await client.post(op, input);
    t.ok(r.status < 500 && r.status !== 404, `${op} answered ${r.status} (served, and no 500)`);
  }

  // An in-flight request when SIGTERM arrives still gets its answer. Deterministically in flight:
  // its headers have arrived (the log has the incoming request) and its body is half sent when
  // the signal comes; the rest follows once the process has logged that it is shutting down.
  const creations = () => log.split('\n').filter(l => l.includes('"msg":"incoming request"') && l.includes('"url":"/api/project.create"')).length;
  const before = creations();
  const body = JSON.stringify({ name: 'in-flight' });
  let req!: http.ClientRequest;
  const inflight = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req = http.request(`${url}/api/project.create`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-api-key': apiKey } }, res => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', chunk => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
  });
  req.flushHeaders();
  req.write(body.slice(0, 5));
  await waitFor('the server to receive the in-flight request', () => creations() > before);
  child.kill('SIGTERM');
  await waitFor('berth start to log that it is shutting down', () => /shutting down/.test(log));
  req.end(body.slice(5));
  const answer = await inflight;
  t.equal(answer.status, 200, `in-flight request answered (${answer.text})`);
  t.equal(await exited, 0, 'exits 0 after SIGTERM');

  t.match(log, testDbMode() === 'default' ? /Berth listening on .*\(embedded database in / : /Berth listening on .*\(external PostgreSQL\)/, 'on the database of this run');
  t.match(log, /shutting down/);
  for (const secret of [apiKey, 'ops-secret-password', login.body.token, 'leak-check', ...Object.values(secrets), privateLine]) {
    t.notOk(log.includes(secret), `the log never contains ${secret.slice(0, 4)}…`);
  }
});

t.test('a bad configuration stops the start with a message naming the key', async t => {
  const bad = await run(process.execPath, [...nodeFlags, cli, 'start'], { env: { ...process.env, PORT: 'eighty', BERTH_DATA_DIR: dataDirFor(t), BERTH_CONFIG: '' }, cwd: repoRoot }).catch(e => e);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /Invalid configuration: PORT/);
});

t.test("berth --help lists the commands of the enabled plugins; berth restore is the backups plugin's", async t => {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, BERTH_CONFIG: '', BERTH_DATA_DIR: dataDirFor(t) };
  const help = await run(process.execPath, [...nodeFlags, cli, '--help'], { env, cwd: repoRoot });
  t.match(help.stdout, /berth start\n/);
  t.match(help.stdout, /berth restore --from <archive file> --passphrase-env <VAR> --data-dir <new directory>/, "the backups plugin's command, with its usage");
  // It runs as a command of its own: no server, and here it stops at its arguments before opening anything.
  const bare = await run(process.execPath, [...nodeFlags, cli, 'restore'], { env, cwd: repoRoot }).catch(e => e);
  t.equal(bare.code, 1);
  t.match(bare.stderr, /--from, --passphrase-env and --data-dir are required\nusage: berth restore/);
  const without = { ...env, BERTH_PLUGINS: 'auth,user,organization' };
  t.notMatch((await run(process.execPath, [...nodeFlags, cli, '--help'], { env: without, cwd: repoRoot })).stdout, /berth restore/, 'not listed with the backups plugin disabled');
  const unknown = await run(process.execPath, [...nodeFlags, cli, 'restore'], { env: without, cwd: repoRoot }).catch(e => e);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /unknown command restore/);
});

t.test('berth start prints readable lines on a terminal and JSON lines through a pipe', async t => {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, BERTH_CONFIG: '', HOST: '127.0.0.1', PORT: '0', BERTH_JOBS: 'false' };
  if (testDbMode() === 'external') {
    const db = await createTestDatabase();
    t.teardown(() => db.drop());
    env.DATABASE_URL = db.url;
  }
  /** Runs berth start until it listens, stops it with SIGTERM (by its process id) and answers what it printed. */
  const startAndStop = async (tty: boolean) => {
    const argv = [process.execPath, ...nodeFlags, cli, 'start'];
    // util-linux's script gives the command a pseudo-terminal; it takes one command line, quoted here for sh.
    const quoted = argv.map(a => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = tty
      ? spawn('script', ['-qec', `exec ${quoted}`, '/dev/null'], { env: { ...env, BERTH_DATA_DIR: dataDirFor(t) }, cwd: repoRoot })
      : spawn(argv[0]!, argv.slice(1), { env: { ...env, BERTH_DATA_DIR: dataDirFor(t) }, cwd: repoRoot });
    let out = '';
    child.stdout.on('data', d => (out += d));
    child.stderr.on('data', d => (out += d));
    const exited = new Promise<number | null>(resolve => child.on('exit', code => resolve(code)));
    t.teardown(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    await waitFor(
      'berth start to listen',
      () => {
        if (child.exitCode !== null) throw new Error(`it exited: ${out}`);
        return /Berth listening on/.test(out);
      },
      { timeout: 60_000 },
    );
    // Under script the berth process is script's child: its pid is in its own log lines.
    const pid = tty ? Number(/INFO\S* \((\d+)\)/.exec(out.replace(/\x1b\[[0-9;]*m/g, ''))?.[1]) : child.pid!;
    t.ok(pid > 0, 'the berth process id');
    process.kill(pid, 'SIGTERM');
    t.equal(await exited, 0, 'it stops on SIGTERM');
    return out;
  };
  const terminal = (await startAndStop(true))
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split(/\r?\n/)
    .filter(Boolean);
  t.ok(
    terminal.some(l => /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(\d+\): Berth listening on http:\/\/127\.0\.0\.1:\d+/.test(l)),
    'a readable line: time, level, pid and the message',
  );
  t.same(
    terminal.filter(l => l.startsWith('{')),
    [],
    'no JSON object on the terminal',
  );
  const piped = (await startAndStop(false)).split('\n').filter(Boolean);
  const parsed = piped.map(l => JSON.parse(l) as { level: number; msg?: string });
  t.ok(
    parsed.some(l => /^Berth listening on/.test(l.msg ?? '') && l.level === 30),
    'through a pipe every line is a JSON object, as before',
  );
});
