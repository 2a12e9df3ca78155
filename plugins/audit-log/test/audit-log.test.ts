// The audit log through the real kernel and a real PostgreSQL database: every mutation the test
// makes (REST and tRPC, succeeding, refused by its input, failing after a partial change, rolled
// back, changing nothing in the database) is compared with its entry, call by call; a password in
// an input is never stored; each organization reads only its own entries (admins and owner); a row
// edited with pg directly makes the compiled `berth audit verify` exit 1 naming it, a removed one is
// found, and retention removes old entries with verify still passing from the anchor.
import t from 'tap';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { Client, otherOrganization, signUpAdmin, startTestServer, type Reply, type TestServer } from '@berth/core/testing';
import { SecretBox } from '@berth/core';
import { cli, nodeFlags, repoRoot } from '../../../test/helpers.ts';
import { rowHash } from '../src/chain.ts';

const run = promisify(execFile);
const probePlugin = fileURLToPath(new URL('./probe-plugin', import.meta.url));
const data = (r: Reply) => (r.body?.result?.data ? r.body.result.data.json : r.body);

interface Call {
  agent: string;
  procedure: string;
  input: unknown;
  status: number;
  code?: string;
}
interface Row {
  id: string;
  procedure: string;
  outcome: string;
  error_code: string | null;
  user_id: string | null;
  organization_id: string | null;
  actor: string;
  via: string | null;
  credential_id: string | null;
  target_ids: Record<string, string>;
  input: Record<string, unknown>;
  address: string | null;
  user_agent: string;
  action: string;
  resource_type: string;
  resource_name: string | null;
  chain_index: string | null;
  hash: string | null;
}

/** Every mutation a client makes, each with a user agent of its own, so its entries are found by it. */
function recording(client: Client, calls: Call[]) {
  const send = async (procedure: string, input: unknown, trpc: boolean) => {
    const agent = `audit-test/${calls.length + 1}`;
    const headers = { 'user-agent': agent };
    const r = trpc ? await client.trpc('mutation', procedure, input, { headers }) : await client.post(procedure, input, { headers });
    calls.push({ agent, procedure, input, status: r.status, ...(r.status !== 200 ? { code: r.body?.code } : {}) });
    return r;
  };
  return { post: (procedure: string, input?: unknown) => send(procedure, input, false), trpc: (procedure: string, input?: unknown) => send(procedure, input, true) };
}

t.test('the audit log', async t => {
  let server: TestServer = await startTestServer({ jobs: false, proxy: 'none', extraPlugins: [probePlugin] });
  t.teardown(() => server.destroy());
  let db = new pg.Client(server.database);
  await db.connect();
  t.teardown(() => db.end());
  const rows = async (where = 'true', params: unknown[] = []) => (await db.query<Row>(`select * from audit_log where ${where} order by seq`, params)).rows;

  const admin = await signUpAdmin(server, 'owner@example.com');
  // A member of the organization, signed in with a session (as addMember, without reading it back).
  const joined = await admin.client.post('user.createUserWithCredentials', { email: 'member@example.com', password: 'member-password-1', role: 'member' });
  const login = await new Client(server.url).post('auth.login', { email: 'member@example.com', password: 'member-password-1' });
  const member = { userId: joined.body.userId as string, client: new Client(server.url, { token: login.body.token }) };
  const calls: Call[] = [];
  const a = recording(admin.client, calls);

  t.test('every mutation has its entry, call by call', async t => {
    const created = await a.post('project.create', { name: 'audited' });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const projectId = created.body.project?.projectId ?? created.body.projectId;
    t.equal((await a.trpc('project.update', { projectId, name: 'audited-renamed' })).status, 200, 'a change through tRPC');
    t.equal((await a.post('project.remove', { projectId: 'no-such-project-0000000000000000' })).status, 404, 'a record that does not exist');
    t.equal((await a.post('project.create', { name: 42 })).status, 400, 'refused by its input');
    // PostgreSQL stores neither in text or JSON: the entry keeps U+FFFD in their place (below).
    t.equal((await a.post('project.create', { name: 'a\u0000b' })).status, 400, 'refused for a NUL in its input');
    t.equal((await a.post('project.create', { name: 'a\ud800b' })).status, 400, 'refused for an unpaired surrogate in its input');
    t.equal((await a.post('auditProbe.change', { name: 'kept', then: 'succeed' })).status, 200, 'a row stored');
    t.equal((await a.post('auditProbe.change', { name: 'partial-404', then: 'notFound' })).status, 404, 'a row stored, then a 404');
    t.equal((await a.trpc('auditProbe.change', { name: 'partial-400', then: 'badRequest' })).status, 400, 'a row stored, then a 400 (tRPC)');
    t.equal((await a.post('auditProbe.change', { name: 'rolled-back', then: 'rollBack' })).status, 400, 'a row stored in a transaction that rolls back');
    t.equal((await a.post('auditProbe.change', { name: 'engine-only', then: 'storeNothing' })).status, 200, 'nothing stored in the database');

    const stored = (await db.query<{ name: string }>('select name from audit_probe order by name')).rows.map(r => r.name);
    t.same(stored, ['kept', 'partial-400', 'partial-404'], 'the partial changes stayed, the rolled-back one did not');

    // Each call: one entry, or (a change committed and then a failure) its change's and its failure's.
    for (const call of calls) {
      const entries = await rows('user_agent = $1', [call.agent]);
      const failed = call.status !== 200;
      // The probe's row stays when it fails with a 404 or a 400 after storing it.
      const partial = ['notFound', 'badRequest'].includes((call.input as { then?: string }).then ?? '');
      t.same(
        entries.map(e => [e.procedure, e.outcome, e.error_code]),
        [...(partial ? [[call.procedure, 'success', null]] : []), [call.procedure, failed ? 'error' : 'success', failed ? call.code : null]],
        `${call.agent} ${call.procedure} → ${call.status}`,
      );
      for (const e of entries) {
        t.equal(e.user_id, admin.userId, 'who: the user');
        t.equal(e.via, 'apiKey', 'through an API key');
        t.ok(e.credential_id, "and the key's id");
        t.equal(e.organization_id, admin.organizationId, 'in their organization');
        t.match(e.address, /^(::ffff:)?127\.0\.0\.1$|^::1$/, 'from where');
        t.equal(e.chain_index, null, 'not sealed yet: no job ran');
      }
    }
    const [update] = await rows("procedure = 'project.update'");
    t.same(update!.target_ids, { projectId }, 'the target ids of the input');
    t.equal(update!.input.name, 'audited-renamed', 'and the input');
    t.same([update!.action, update!.resource_type], ['update', 'project'], "the peer's action and resource type");
    t.same(
      (await rows("procedure = 'auditProbe.change' and outcome = 'error'")).map(e => e.error_code),
      ['NOT_FOUND', 'BAD_REQUEST', 'BAD_REQUEST'],
      'the failures: their codes',
    );
    t.same(
      (await rows("procedure = 'project.create' and outcome = 'error'")).map(e => [e.input.name, e.resource_name]),
      [
        [42, null],
        ['a\ufffdb', 'a\ufffdb'],
        ['a\ufffdb', 'a\ufffdb'],
      ],
      'a refused input PostgreSQL cannot store is recorded, its NUL and unpaired surrogate as U+FFFD',
    );
  });

  t.test('a password in an input is never in the entry', async t => {
    const password = 'audit-Secret-passw0rd';
    const r = await a.post('user.createUserWithCredentials', { email: 'second@example.com', password, role: 'member' });
    t.equal(r.status, 200, JSON.stringify(r.body));
    const [entry] = await rows("procedure = 'user.createUserWithCredentials' and user_agent like 'audit-test/%'");
    t.equal(entry!.input.password, '******', 'masked');
    t.equal(entry!.input.email, 'second@example.com', 'the rest kept');
    const everywhere = await db.query(`select count(*)::int as n from audit_log where audit_log::text like $1`, [`%${password}%`]);
    t.equal(everywhere.rows[0].n, 0, 'in no column of any entry');
    const listed = await admin.client.get('auditLog.all', { resourceName: 'second@' });
    t.notMatch(JSON.stringify(listed.body), password, 'nor in what auditLog.all answers');
  });

  t.test('auditLog.all: the organization’s own entries, filtered and paged as the peer’s, to its admins', async t => {
    const other = await otherOrganization(server, member.userId);
    t.equal((await other.client.post('project.create', { name: 'theirs' })).status, 200);
    const mine = await admin.client.get('auditLog.all', { limit: 500 });
    t.equal(mine.status, 200, JSON.stringify(mine.body));
    const logs = mine.body.logs as Record<string, any>[];
    t.equal(mine.body.total, logs.length);
    t.ok(logs.length >= calls.length, "every entry of the organization's");
    t.ok(
      logs.every(l => l.organizationId === admin.organizationId),
      "only the organization's own",
    );
    t.notOk(
      logs.some(l => l.resourceName === 'theirs'),
      "none of the other organization's",
    );
    const sorted = [...logs].sort((x, y) => y.createdAt.localeCompare(x.createdAt));
    t.same(
      logs.map(l => l.id),
      sorted.map(l => l.id),
      'newest first',
    );
    const entry = logs.find(l => JSON.parse(l.metadata).procedure === 'project.update')!;
    t.match(entry, { userId: admin.userId, userEmail: 'owner@example.com', userRole: 'owner', action: 'update', resourceType: 'project', resourceName: 'audited-renamed' });
    t.match(JSON.parse(entry.metadata), { outcome: 'success', via: 'apiKey', chainIndex: Number, hash: /^[0-9a-f]{64}$/ }, 'sealed before the answer');

    const theirs = await other.client.trpc('query', 'auditLog.all', {});
    t.equal(theirs.status, 200);
    t.same(
      data(theirs).logs.map((l: any) => [l.resourceName, l.organizationId, l.userId]),
      [['theirs', other.organizationId, member.userId]],
      'the other organization reads its own entry alone (tRPC)',
    );
    t.equal((await member.client.get('auditLog.all')).status, 403, 'a member of the organization is refused');
    t.equal((await new Client(server.url).get('auditLog.all')).status, 401, 'no credential: 401');

    const page = await admin.client.get('auditLog.all', { limit: 2, offset: 1 });
    t.same(
      page.body.logs.map((l: any) => l.id),
      logs.slice(1, 3).map(l => l.id),
      'limit and offset',
    );
    t.equal(page.body.total, logs.length, 'total counts every match');
    const creates = await admin.client.get('auditLog.all', { action: 'create', resourceType: 'project' });
    t.ok(creates.body.logs.length >= 2, 'by action and resource type');
    t.ok(creates.body.logs.every((l: any) => l.action === 'create' && l.resourceType === 'project'));
    const byUser = await admin.client.get('auditLog.all', { userId: admin.userId, userEmail: 'OWNER@' });
    t.equal(byUser.body.total, logs.filter(l => l.userId === admin.userId).length, 'by user and e-mail (case-insensitive)');
    const future = await admin.client.get('auditLog.all', { from: new Date(Date.now() + 3_600_000).toISOString() });
    t.same(future.body, { logs: [], total: 0 }, 'by time');
    const bad = await admin.client.get('auditLog.all', { to: 'yesterday-ish' });
    t.equal(bad.status, 400);
    t.match(bad.body.issues?.[0]?.message, /^to:/, 'a bad time names its field');
    t.equal((await admin.client.get('auditLog.all', { limit: 501 })).status, 400, 'at most 500 a page');
  });

  t.test('the chain: an edited row and a removed one are found; retention keeps an anchor', async t => {
    const chain = server.kernel.container.cradle.auditChain;
    t.match(await chain.verify(), { ok: true }, 'sound as written');
    const [victim, removed] = await rows("chain_index is not null and procedure = 'auditProbe.change'");
    /** The compiled operator command on the server's database; the embedded one is the server's alone: it stops meanwhile. */
    const verify = async () => {
      const external = server.kernel.config.databaseUrl;
      const env: NodeJS.ProcessEnv = { ...process.env, BERTH_DATA_DIR: server.dataDir, BERTH_CONFIG: '', BERTH_LOG_LEVEL: 'error' };
      delete env.DATABASE_URL;
      if (external) env.DATABASE_URL = external;
      else {
        await db.end();
        await server.stop();
      }
      const out = await run(process.execPath, [...nodeFlags, cli, 'audit', 'verify'], { env, cwd: repoRoot }).then(
        r => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
      if (!external) {
        server = await server.restart();
        db = new pg.Client(server.database);
        await db.connect();
      }
      return out;
    };

    await db.query(`update audit_log set input = jsonb_set(input, '{name}', '"forged"') where id = $1`, [victim!.id]);
    const edited = await verify();
    t.equal(edited.code, 1, `berth audit verify exits 1: ${edited.stderr}`);
    t.match(edited.stderr, new RegExp(`entry ${victim!.id} \\(chain index ${victim!.chain_index}\\) was edited`), 'naming the edited row');
    t.match(JSON.parse(edited.stdout.trim().split('\n').pop()!), { ok: false, entryId: victim!.id });
    await db.query(`update audit_log set input = $2 where id = $1`, [victim!.id, victim!.input]);
    t.match(await server.kernel.container.cradle.auditChain.verify(), { ok: true }, 'sound again once the row is as it was');

    // One who can write the database rewrites the entry and recomputes every hash after it, as the
    // sealer does: without the instance's secret (a plain SHA-256 key, or another instance's key) the
    // chain still breaks at that entry; with the secret's key (the control) it would pass.
    const rechain = async (key: Buffer) => {
      const conn = server.kernel.container.cradle.orm.em.fork().getConnection();
      const from = Number(victim!.chain_index);
      const [before] = await conn.execute<{ hash: string }[]>(`select coalesce((select hash from audit_log where chain_index = ?), (select anchor_hash from audit_log_chain)) as hash`, [from - 1]);
      let previous = before!.hash; // the entry before the victim's, or the anchor's when it is the first
      for (const row of await conn.execute<Parameters<typeof rowHash>[2][]>(`select * from audit_log where chain_index >= ? order by chain_index`, [from])) {
        previous = rowHash(key, previous, row);
        await conn.execute('update audit_log set hash = ? where id = ?', [previous, row.id]);
      }
      await conn.execute(`update audit_log_chain set head_hash = ?`, [previous]);
    };
    const secrets = server.kernel.container.cradle.secrets;
    await db.query(`update audit_log set input = jsonb_set(input, '{name}', '"forged"') where id = $1`, [victim!.id]);
    for (const [who, key] of [
      ['an empty key', Buffer.alloc(32)],
      ["another instance's secret", new SecretBox('another-instance-secret').deriveKey('audit-log-chain')],
      ['a key of the secret for another purpose', secrets.deriveKey('something-else')],
    ] as const) {
      await rechain(key);
      t.match(await server.kernel.container.cradle.auditChain.verify(), { ok: false, entryId: victim!.id }, `a chain recomputed with ${who} is found out at the edited entry`);
    }
    await rechain(secrets.deriveKey('audit-log-chain'));
    t.match(await server.kernel.container.cradle.auditChain.verify(), { ok: true }, "the control: recomputed with the instance's own key, it passes (the key is what stops a forger)");
    t.throws(() => secrets.deriveKey('secrets-at-rest'), /not handed out/, 'the encryption key itself is never handed out');
    await db.query(`update audit_log set input = $2 where id = $1`, [victim!.id, victim!.input]);
    await rechain(secrets.deriveKey('audit-log-chain'));
    t.match(await server.kernel.container.cradle.auditChain.verify(), { ok: true }, 'the row restored, its chain sound');

    await db.query('delete from audit_log where id = $1', [removed!.id]);
    const gap = await server.kernel.container.cradle.auditChain.verify();
    t.match(gap, { ok: false, chainIndex: Number(removed!.chain_index) }, 'a removed row is found');
    t.match((gap as { problem: string }).problem, /were removed/);

    // Retention: everything sealed before the cutoff goes (the gap with it); what came after stays.
    const cutoff = new Date();
    await new Promise(resolve => setTimeout(resolve, 5));
    const b = recording(new Client(server.url, { apiKey: admin.apiKey }), calls);
    t.equal((await b.post('auditProbe.change', { name: 'after-cutoff', then: 'succeed' })).status, 200);
    await server.kernel.container.cradle.auditChain.seal();
    const removedCount = await server.kernel.container.cradle.auditChain.prune(cutoff);
    t.ok(removedCount > 0, `old entries removed (${removedCount})`);
    const left = await rows();
    t.ok(
      left.every(r => new Date((r as unknown as { created_at: Date }).created_at) >= cutoff),
      'only entries after the cutoff are left',
    );
    t.ok(
      left.some(r => r.input?.name === 'after-cutoff'),
      'the new entry is kept',
    );
    const anchor = (await db.query('select anchor_index from audit_log_chain')).rows[0];
    t.ok(Number(anchor.anchor_index) > 0, 'the anchor keeps the last removed entry');
    t.match(await server.kernel.container.cradle.auditChain.verify(), { ok: true, from: Number(anchor.anchor_index) }, 'verify passes from the anchor');

    // The chain's ends are made at the first seal (no migration writes them): removing them is found.
    const ends = (await db.query('select * from audit_log_chain')).rows[0];
    await db.query('delete from audit_log_chain');
    t.match(await server.kernel.container.cradle.auditChain.verify(), { ok: false, problem: /ends \(table audit_log_chain\) were removed/ }, "the chain's removed ends are found");
    await db.query('insert into audit_log_chain select * from json_populate_record(null::audit_log_chain, $1)', [JSON.stringify(ends)]);
    t.match(await server.kernel.container.cradle.auditChain.verify(), { ok: true }, 'sound again once they are back');
  });
});
