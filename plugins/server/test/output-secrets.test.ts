// What Berth reads from a server never gives a secret away, and reading never changes the server
// (issue 46), on two kit hosts (network namespaces with their own dockerd and sshd):
// - the reachability probe connects and reads only: a host not set up stays out of swarm mode and
//   gets no platform network;
// - server.setup on a new manager (`docker swarm init` prints a join token) and on a worker (its
//   manager's steps skipped) leaves no join token in any answer, deployment log, line of Berth's own log or row of its
//   database; the filter is shown to see a real token (a server command that prints one);
// - the doctor's security audit writes no predictable file as root: a link planted at the former
//   path is not followed, and its temporary file is gone afterwards.
import t from 'tap';
import pg from 'pg';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { canRun, signUpAdmin, startTestServer } from '@berth/core/testing';
import { inHost, privateRemoteHosts, remoteHostsMissing, type RemoteHost } from '@berth/test/remote-hosts';

t.setTimeout(600_000);

/** A join token not masked (the mask itself, SWMTKN-<redacted>, says only that one was there). */
const UNMASKED = /SWMTKN-(?!<redacted>)/;

if (canRun(t, 'remote-hosts', remoteHostsMissing())) {
  const set = await privateRemoteHosts(2);
  t.teardown(() => set.down());
  const [a, b] = set.hosts as [RemoteHost, RemoteHost];
  const onHost = async (h: RemoteHost, argv: string[]) => {
    const r = await inHost(h, argv);
    if (r.code !== 0) throw new Error(`on ${h.name}: ${argv.join(' ')}: exit ${r.code}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const swarmState = (h: RemoteHost) => onHost(h, ['docker', 'info', '--format', '{{.Swarm.LocalNodeState}}']);
  const networks = (h: RemoteHost) => onHost(h, ['docker', 'network', 'ls', '--format', '{{.Name}}']);

  const server = await startTestServer({ deploySettleSeconds: 0, proxy: 'none' });
  t.teardown(() => server.destroy());
  // Every level of Berth's own log kept (not printed), searched for tokens at the end.
  const logged: string[] = [];
  // cast: the kernel's logger is pino's, which keeps its destination under a symbol of its own
  const logger = server.kernel.container.cradle.logger as unknown as Record<symbol, { write(line: string): boolean }> & { level: string };
  const streamSym = Object.getOwnPropertySymbols(logger).find(s => s.description === 'pino.stream');
  if (!streamSym) throw new Error("pino's destination was not found on the logger");
  logger[streamSym]!.write = (line: string) => (logged.push(line), true);
  logger.level = 'trace';

  const { client } = await signUpAdmin(server);
  const answers: string[] = [];
  const call = async (op: string, input: Record<string, unknown>, kind: 'get' | 'post' = 'post') => {
    const res = kind === 'get' ? await client.get(op, input) : await client.post(op, input);
    answers.push(JSON.stringify(res.body));
    return res;
  };
  const key = await call('sshKey.create', { name: 'kit', privateKey: a.privateKey, publicKey: a.publicKey });
  const serverOf = async (h: RemoteHost) => {
    const res = await call('server.create', { name: h.name, ipAddress: h.address, port: 22, username: 'root', sshKeyId: key.body.sshKeyId, hostKeyFingerprint: h.hostKeyFingerprint });
    if (res.status !== 200) throw new Error(`server.create: ${JSON.stringify(res.body)}`);
    return res.body.serverId as string;
  };
  const [A, B] = [await serverOf(a), await serverOf(b)];
  const logsOf = async (serverId: string) => {
    const deployments = (await call('deployment.allByServer', { serverId }, 'get')).body as { deploymentId: string }[];
    return Promise.all(deployments.map(async d => (await call('deployment.readLogs', { deploymentId: d.deploymentId, tail: 1000 }, 'get')).body as string));
  };
  /** Every join token A's swarm has had (each read of them added). */
  const tokens = new Set<string>();
  const readTokens = async () => {
    for (const role of ['worker', 'manager']) tokens.add(await onHost(a, ['docker', 'swarm', 'join-token', '-q', role]));
  };

  t.test('the probe only connects and reads: a host not set up stays out of swarm mode, with no platform network', async t => {
    t.equal(await swarmState(b), 'inactive', 'before: not in swarm mode');
    const { serverProbe, orm } = server.kernel.container.cradle;
    const em = orm.em.fork();
    const rowOf = async (serverId: string) => (await em.getConnection().execute('select failed_probes, unreachable_since from servers where server_id = ?', [serverId]))[0];
    // A server on a port nothing answers: the probe counts a failure (it does reach out).
    const closed = (await call('server.create', { name: 'closed port', ipAddress: b.address, port: 2, username: 'root', sshKeyId: key.body.sshKeyId })).body.serverId as string;
    t.teardown(() => call('server.remove', { serverId: closed }));
    await serverProbe.sweep();
    t.match(await rowOf(closed), { failed_probes: 1 }, 'a server that does not answer: one failed probe');
    t.match(await rowOf(B), { failed_probes: 0, unreachable_since: null }, 'the host not set up answered the probe');
    t.equal(await swarmState(b), 'inactive', 'after: still not in swarm mode');
    t.notMatch(await networks(b), /berth-network/, 'and no platform network was made');
  });

  t.test('the security audit writes no predictable file as root', async t => {
    // The former fixed path, planted as a link to a file root owns: the old audit would have written through it.
    await onHost(a, ['sh', '-c', 'echo untouched > /root/victim && ln -sfn /root/victim /tmp/.berth-sshd-T']);
    t.teardown(() => onHost(a, ['rm', '-f', '/root/victim', '/tmp/.berth-sshd-T']));
    const before = await onHost(a, ['sh', '-c', 'ls -a /tmp | grep -c berth-sshd-T || true']);
    const audit = await call('server.security', { serverId: A }, 'get');
    t.equal(audit.status, 200, JSON.stringify(audit.body));
    t.match(audit.body.ssh, { enabled: true, keyAuth: true }, 'sshd -T was read (through a temporary file of mktemp)');
    t.equal(await onHost(a, ['cat', '/root/victim']), 'untouched', 'the link at the former path was not followed');
    t.equal(await onHost(a, ['sh', '-c', 'ls -a /tmp | grep -c berth-sshd-T || true']), before, 'its temporary file is gone');
  });

  t.test('setup of a new manager: its answer and log carry no join token', async t => {
    const res = await call('server.setup', { serverId: A });
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.match(
      res.body.steps.find((s: { step: string }) => s.step === 'swarm'),
      { result: 'changed' },
      '`docker swarm init` ran (and printed a join token)',
    );
    await readTokens();
    for (const step of res.body.steps as Record<string, unknown>[]) t.same(Object.keys(step).sort(), ['command', 'exitCode', 'result', 'stderr', 'step'], `${step.step}: only the outcome's fields`);
    const text = JSON.stringify(res.body) + (await logsOf(A)).join('\n');
    t.notMatch(text, /SWMTKN-/, 'no join token, nor a mask of one, in the answer or the log');
    for (const token of tokens) t.notOk(text.includes(token.split('-').pop()!), 'not a piece of any of its tokens');
  });

  t.test('setup of a worker: no join token either', async t => {
    const joined = await call('cluster.joinServer', { serverId: B, managerServerId: A, role: 'worker' });
    t.equal(joined.status, 200, JSON.stringify(joined.body));
    await readTokens();
    t.equal(await swarmState(b), 'active', 'B is a member of A’s swarm');
    const res = await call('server.setup', { serverId: B });
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.match(
      res.body.steps.find((s: { step: string }) => s.step === 'swarm'),
      { result: 'unchanged' },
      'a member already: swarm unchanged',
    );
    t.notOk(
      res.body.steps.some((s: { step: string }) => s.step === 'network'),
      "the platform network is its manager's: skipped on a worker",
    );
    const logs = await logsOf(B);
    t.match(logs.join('\n'), /network: skipped: the server is a swarm worker/, 'the log says why');
    const text = JSON.stringify(res.body) + logs.join('\n');
    t.notMatch(text, /SWMTKN-/, 'no join token, nor a mask of one, in the answer or the log');
    for (const token of tokens) t.notOk(text.includes(token.split('-').pop()!), 'not a piece of any token');
  });

  t.test('positive control: a server command that prints a join token has it masked in the log', async t => {
    await call('server.update', { serverId: A, command: 'docker swarm join-token worker' });
    t.teardown(() => call('server.update', { serverId: A, command: '' }));
    const res = await call('server.setup', { serverId: A });
    t.equal(res.status, 200, JSON.stringify(res.body));
    await readTokens();
    const log = (await call('deployment.readLogs', { deploymentId: res.body.deploymentId, tail: 100 }, 'get')).body as string;
    t.match(log, /docker swarm join --token SWMTKN-<redacted> \S+:2377/, 'the token the command printed, masked');
    t.notMatch(log, UNMASKED);
  });

  t.test('no join token anywhere: answers, deployment log files, Berth’s log, every table of its database', async t => {
    await readTokens();
    const pieces = [...tokens].map(token => token.split('-').pop()!);
    t.ok(pieces.length >= 3, `${pieces.length} tokens of A's swarm looked for (rotated by each join)`);
    const found = (what: string, text: string) => {
      t.notMatch(text, UNMASKED, `${what}: nothing shaped like a join token`);
      t.same(
        pieces.filter(p => text.includes(p)),
        [],
        `${what}: none of the real tokens`,
      );
    };
    t.ok(answers.length > 15, `${answers.length} answers searched`);
    found('answers', answers.join('\n'));
    const dir = path.join(server.dataDir, 'logs', 'deployments');
    const files = readdirSync(dir);
    t.ok(files.length >= 3, `${files.length} deployment log files read`);
    found('deployment log files', files.map(f => readFileSync(path.join(dir, f), 'utf8')).join('\n'));
    t.ok(logged.length > 0, `${logged.length} lines of Berth's own log searched`);
    found("Berth's own log (trace level)", logged.join(''));
    const db = new pg.Client(server.database);
    await db.connect();
    t.teardown(() => db.end());
    const tables = (await db.query<{ name: string }>("select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'")).rows.map(r => r.name);
    t.ok(tables.includes('servers') && tables.includes('deployments'), `${tables.length} tables dumped`);
    let dump = '';
    for (const table of tables) dump += (await db.query<{ row: string }>(`select t::text as row from "${table.replace(/"/g, '""')}" t`)).rows.map(r => r.row).join('\n');
    t.match(dump, A, 'the dump holds the servers');
    found('the database', dump);
  });
}
