// The cross-organization matrix: no operation of the OpenAPI document lets one organization reach
// another's records. Organization A gets a real record of every kind (test/fuzz-records.ts), and so
// does organization B, whose admin is another account, no member of A. B then calls every
// operation whose input names one of A's records, once per such field, with an otherwise good
// input aimed at A's record (B's own records in the other id fields; again with only the required
// ones filled), on both wire forms (REST and tRPC). Each call must be refused (404, 403, a 400, or
// an empty list) exactly as a call naming no record at all is, never answer A's ids or names, and
// write nothing of A's: every read A can make of its records answers the same before and after, so
// a remover left A's record in place and an engine operation (deploy, stop...) ran nothing. The
// few operations that answer 2xx are listed in NOT_REFUSED with why that reaches nothing of A's.
// Operations added later join the matrix on their own: it is driven by the document, not a list.
// B's calls (and A's reads) go a few at a time (AT_ONCE): none of them changes what another answers.
import t from 'tap';
import { startTestServer, signUpAdmin, addMember, otherOrganization, type Client, type Reply } from '@berth/core/testing';
import { fuzzRecords, fuzzStandIns, NO_RECORD } from './fuzz-records.ts';
import { AT_ONCE, documentOperations, goodValue, idFieldsOf, inPool, type Operation } from './openapi-operations.ts';

/** The same exception for both inputs (B's records in every other id field, and in the required ones only). */
const both = (key: string, why: string) => ({ [key]: why, [`${key} alone`]: why });

/**
 * Operations that answer 2xx to B aimed at A's record, each with why that reaches nothing of A's
 * (`operation field` → reason). The test fails when one of them is refused after all (remove it)
 * and when any other is not.
 */
const NOT_REFUSED: Record<string, string> = {
  'domain.generateDomain serverId': "accepted and ignored (the peer's input): the host is made from this instance's own address, the same for every organization; no server's record is read",
  'domain.canGenerateTraefikMeDomains serverId': "accepted and ignored (the peer's input): answers this instance's own address, the same for every organization",
  // gitlab.create makes a new connection of the caller's (in B): the peer's input carries these ids, and Berth ignores them.
  ...both('gitlab.create authId', 'the owner the peer names; Berth makes the caller the owner whatever it names'),
  ...both('gitlab.create gitlabId', 'ignored: a create makes its own id'),
  ...both('gitlab.create gitProviderId', 'ignored: a create makes its own id'),
  ...both('gitlab.create applicationId', "the GitLab OAuth application's client id, not a record of Berth: stored as given on B's new connection"),
  ...both('bitbucket.create authId', 'the owner the peer names; Berth makes the caller the owner whatever it names'),
  ...both('bitbucket.create bitbucketId', 'ignored: a create makes its own id'),
  ...both('bitbucket.create gitProviderId', 'ignored: a create makes its own id'),
  ...both('registry.update organizationId', 'accepted and ignored (the schema says so): a registry stays in its organization'),
  'notification.updateSlack organizationId': "accepted and ignored (the peer's input): a channel stays in its organization (the other kinds' updates answer 400: B's channel is a Slack one)",
  // The older variant's projectId is read only without an environmentId: with B's environment it is ignored (alone, it is refused).
  ...Object.fromEntries(
    ['application', 'compose', 'postgres', 'mysql', 'mariadb', 'mongo', 'redis'].map(k => [
      `${k}.create projectId`,
      "ignored beside environmentId (B's): the older variant's field, read only without one",
    ]),
  ),
  // A backup's kind (databaseType, serviceType) says which id field it reads; the other kinds' ids are ignored, not stored.
  ...Object.fromEntries(['composeId', 'mongoId', 'mysqlId', 'postgresId', 'redisId'].map(f => [`backup.create ${f}`, "ignored: databaseType (mariadb) reads mariadbId, B's"])),
  'backup.create userId': "the peer's field, ignored: a backup belongs to its database's organization",
  ...Object.fromEntries(['applicationId', 'mariadbId', 'mongoId', 'mysqlId', 'postgresId', 'redisId'].map(f => [`volumeBackups.create ${f}`, "ignored: serviceType (compose) reads composeId, B's"])),
  ...Object.fromEntries(
    ['composeId', 'applicationId', 'mariadbId', 'mongoId', 'mysqlId', 'postgresId', 'redisId'].flatMap(f =>
      Object.entries(both(`volumeBackups.update ${f}`, 'ignored: a volume backup keeps the workload it was made for (serviceType cannot change)')),
    ),
  ),
};

/** Fields of an operation that share a name with one of A's records but name something else (`operation field` → what). */
const NOT_A_RECORD: Record<string, string> = {
  'gitlab.getGitlabBranches id': "the project's number on the GitLab server",
  'compose.deployTemplate id': "a template of the catalog's",
  'auth.createUser id': 'an invitation, accepted without a session by whoever holds its id (the link mailed; plugins/auth and plugins/organization test invitations)',
  'auth.verifyLogin2FA id': 'a pending password login, asked for without a session',
  'ai.deploy id': "the suggestion's slug, the new stack's name",
};

/** A 2xx that reads nothing: an empty list, as a search or list filtered by a record the caller cannot see answers. */
function answersNothing(r: Reply): boolean {
  const body = r.body?.result?.data ? r.body.result.data.json : r.body;
  return r.status === 200 && ((Array.isArray(body) && body.length === 0) || (Array.isArray(body?.items) && body.items.length === 0 && body.total === 0));
}

/** Plain values goodValue cannot guess from a schema, by field name (so the input's other fields pass the services' checks too). */
const GOOD: Record<string, string> = {
  schedule: '0 3 * * *',
  cronExpression: '0 3 * * *',
  // a closed port: a connection test fails at once
  endpoint: 'http://127.0.0.1:9',
  mountPath: '/data/cross',
  password: 'a long password',
  pin: '123456',
  dockerCompose: 'services:\n  web:\n    image: berth-test/busybox:1\n',
  composeFile: 'services:\n  web:\n    image: berth-test/busybox:1\n',
};

/**
 * Whether a refusal is one: not found, forbidden, a 400, or an empty list (a search or a list
 * filtered by a record the caller cannot see). A 400 may name the field aimed at (a rule of the
 * input, such as "a workload stays on its host"): what it must not do is answer differently for
 * A's record than for none at all, which every refusal is compared with (`shown`).
 */
function refused(r: Reply): boolean {
  return r.status === 400 || r.status === 403 || r.status === 404 || answersNothing(r);
}

/**
 * A reply with a value replaced, to compare the answer for A's record with the answer for a record
 * that does not exist (random names an answer makes, such as a probe's object key, masked).
 */
const shown = (r: Reply, value: string, by: string) =>
  `${r.status} ${JSON.stringify(r.body)
    .split(value)
    .join(by)
    .replace(/[0-9a-f]{12,}/g, '<random>')}`;

/** Fields of A's reads that change on A's own schedule (notification.deliveries: a failing delivery's retries). */
const RETRIES = ['tries', 'lastAttemptAt', 'nextAttemptAt'];
/** Reads that answer this machine's swarm nodes as the engine does, and the fields a relabel changes. */
const NODE_READS = ['cluster.getNodes', 'swarm.getNodeInfo'];
const NODE_STAMPS = ['Version', 'UpdatedAt'];
/** The prefix of a node's placement label per organization (docs/swarm-nodes.md, placement by ownership). */
const PLACEMENT_LABEL = 'berth.org.';

/** A's records as A reads them: every read whose required input is ids of A's records, or nothing. */
async function readAll(c: Client, reads: { op: Operation; input: Record<string, unknown> }[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  // Reads change nothing: a few at a time.
  await inPool(
    AT_ONCE,
    reads.map(({ op, input }) => async () => {
      const r = await c.get(op.path, input);
      // A's own deliveries retry on their schedule while the matrix runs: their attempts are not B's
      // doing. Nor is a node of this machine's swarm gaining or losing an organization's placement
      // label (B's first deploy adds B's; other servers on the same engine add theirs), which bumps
      // the node's version: the node is compared without them.
      const node = NODE_READS.includes(op.path);
      const kept = (k: string, v: unknown) => (RETRIES.includes(k) || (node && (NODE_STAMPS.includes(k) || k.startsWith(PLACEMENT_LABEL))) ? undefined : v);
      out.set(op.path, `${r.status} ${JSON.stringify(r.body, kept)}`);
    }),
  );
  return out;
}

t.setTimeout(600_000);

t.test("organization B reaches no record of organization A's through any operation", async t => {
  // No proxy: nothing here should reach one, and a domain change would start one on the shared engine.
  const standIns = await fuzzStandIns(t);
  const server = await startTestServer({ proxy: 'none', ...standIns.config });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const a = admin.client;
  const records = await fuzzRecords(t, server, a, admin, { bitbucket: standIns.bitbucket });
  const ids = records.ids;
  // B's admin is another account: made in A, given an organization of its own, then removed from A.
  const stranger = await addMember(server, a, 'stranger@example.com');
  const other = await otherOrganization(server, stranger.userId);
  const b = other.client;
  t.equal((await a.post('user.remove', { userId: stranger.userId })).status, 200, "B's admin is no member of A");
  t.equal((await b.get('project.all')).status, 200, 'and acts in B');
  // B's own records fill every other id field, so a call gets past its input's shape to the record aimed at.
  const own = (await fuzzRecords(t, server, b, { userId: stranger.userId, organizationId: other.organizationId }, { portBase: 21000, bitbucket: standIns.bitbucket })).ids;
  // (goodValue takes a string for a field by its name: B's ids, and the values GOOD gives.)
  const fill = { ...GOOD, ...own };

  const operations = await documentOperations(a);
  const idFields = idFieldsOf(operations);
  // The fields aimed at: every id field with one of A's records behind it.
  const aimed = (op: Operation) => Object.keys(op.schema.properties ?? {}).filter(f => f in ids && !NO_RECORD[f] && !NOT_A_RECORD[`${op.path} ${f}`]);
  t.same(
    Object.keys(NOT_A_RECORD).filter(k => !operations.some(op => k === `${op.path} ${k.split(' ')[1]}` && k.split(' ')[1]! in (op.schema.properties ?? {}))),
    [],
    'NOT_A_RECORD names only fields of the document',
  );

  // A's reads: GET operations of one or more of A's ids or no input at all, answering 200, and the
  // same twice in a row (a read of the engine or the clock is left out, named in the output).
  const candidates = operations
    .filter(op => op.method === 'get')
    .map(op => ({ op, input: goodValue('', op.schema, ids) as Record<string, unknown> }))
    .filter(({ op }) => (op.schema.required ?? []).every((f: string) => f in ids && !NO_RECORD[f]));
  const first = await readAll(a, candidates);
  const second = await readAll(a, candidates);
  const unstable = candidates.filter(({ op }) => first.get(op.path) !== second.get(op.path)).map(({ op }) => op.path);
  const reads = candidates.filter(({ op }) => first.get(op.path)!.startsWith('200 ') && !unstable.includes(op.path));
  t.comment(`${reads.length} reads of A's records; left out, answering differently twice in a row: ${unstable.join(' ') || 'none'}`);
  const before = await readAll(a, reads);
  const seen = [...before.values()].join('\n');
  t.same(
    [...idFields].filter(f => f in ids && !NO_RECORD[f] && !seen.includes(ids[f]!)),
    [],
    "every record aimed at shows in one of A's reads (a remover that took it would be seen)",
  );

  // What B must never be answered: A's record ids and the names of A's records.
  const secrets = new Set<string>(Object.values(ids));
  // Names are taken from records only (objects with an id field), not from the document's own descriptions.
  const collect = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(collect);
    else if (v && typeof v === 'object') {
      const isRecord = Object.keys(v).some(k => /Id$|^id$/.test(k));
      for (const [k, x] of Object.entries(v)) {
        if (typeof x === 'string' && isRecord && /^(name|appName|host|email|username|registryName)$/.test(k) && x.length >= 8) secrets.add(x);
        else collect(x);
      }
    }
  };
  for (const value of before.values()) collect(JSON.parse(value.slice(value.indexOf(' ') + 1)));

  const leaks: string[] = [];
  const oracles: string[] = [];
  const notRefused: string[] = [];
  const statuses = new Map<number, number>();
  let sent = 0;
  const started = Date.now();
  // Every call of B is refused or reaches only B's own records, so the calls are independent of
  // each other: a few at a time (one at a time leaves the server and PostgreSQL half idle). A
  // call and its twin naming no record still go one after the other.
  const calls: (() => Promise<void>)[] = [];
  for (const op of operations) {
    for (const field of aimed(op)) {
      // Two inputs: B's records in every other id field, and in the required ones only (an optional
      // field is often read only when another is absent: projectId when no environmentId).
      const alone: Record<string, unknown> = { ...(goodValue('', op.schema, fill) as Record<string, unknown>), [field]: ids[field] };
      const full: Record<string, unknown> = { ...alone };
      for (const f of Object.keys(op.schema.properties ?? {})) if (f in own && !NO_RECORD[f] && !NOT_A_RECORD[`${op.path} ${f}`]) full[f] ??= own[f];
      for (const [variant, input] of [
        ['', full],
        [' alone', alone],
      ] as const) {
        if (variant && JSON.stringify(input) === JSON.stringify(full)) continue;
        const key = `${op.path} ${field}${variant}`;
        for (const [form, reply] of [
          ['rest', (i: Record<string, unknown>) => (op.method === 'get' ? b.get(op.path, i) : b.post(op.path, i))],
          ['trpc', (i: Record<string, unknown>) => b.trpc(op.method === 'get' ? 'query' : 'mutation', op.path, i)],
        ] as const) {
          calls.push(async () => {
            const r = await reply(input);
            sent++;
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
            if (!refused(r)) notRefused.push(`${key} (${form} ${r.status} ${JSON.stringify(r.body).slice(0, 160)})`);
            else {
              // B cannot tell A's record from none: the same answer for a record that does not exist.
              const missing = 'M'.repeat(ids[field]!.length);
              const none = await reply({ ...input, [field]: missing });
              sent++;
              const [mine, nothing] = [shown(r, ids[field]!, '<id>'), shown(none, missing, '<id>')];
              if (mine !== nothing) oracles.push(`${key} (${form}): ${mine.slice(0, 160)} ≠ ${nothing.slice(0, 160)}`);
            }
            const text = JSON.stringify(r.body);
            const sentValues = new Set(Object.values(input).filter(v => typeof v === 'string'));
            const leaked = [...secrets].filter(s => !sentValues.has(s) && text.includes(s));
            if (leaked.length) leaks.push(`${key} (${form} ${r.status}): ${leaked.join(', ')}`);
          });
        }
      }
    }
  }
  await inPool(AT_ONCE, calls);
  const figures = [...statuses.entries()]
    .sort(([x], [y]) => x - y)
    .map(([s, n]) => `${s}×${n}`)
    .join(', ');
  t.comment(`${sent} requests of B in ${((Date.now() - started) / 1000).toFixed(1)} s: ${figures}`);

  const unexpected = notRefused.filter(n => !NOT_REFUSED[n.slice(0, n.indexOf(' ('))]);
  t.same(unexpected.sort(), [], 'every call of B aimed at a record of A is refused');
  t.same(
    Object.keys(NOT_REFUSED).filter(k => !notRefused.some(n => n.startsWith(`${k} (`))),
    [],
    'every exception of NOT_REFUSED is still answered 2xx (else remove it)',
  );
  t.same(leaks.sort(), [], "no answer to B holds A's record ids or names");
  t.same(oracles.sort(), [], "every refusal answers B as for a record that does not exist (B cannot tell A's records from none)");

  const after = await readAll(a, reads);
  // What changed, to chase a finding.
  for (const { op } of reads) if (before.get(op.path) !== after.get(op.path)) t.comment(`${op.path} before: ${before.get(op.path)!.slice(0, 2000)}\nafter: ${after.get(op.path)!.slice(0, 2000)}`);
  t.same(
    reads.map(({ op }) => op.path).filter(p => before.get(p) !== after.get(p)),
    [],
    "every read of A's records answers as before: B wrote, removed and ran nothing of A's",
  );
});
