// No input gets a 500: every operation of the OpenAPI document, driven with bad inputs (wrong
// types, nulls, NUL bytes, unpaired surrogates, huge numbers, long strings, deep nesting, wrong
// content types, malformed bodies), answers a 4xx. A real record stands behind every id field the
// document names (test/fuzz-records.ts; those that cannot exist yet are listed there with why), so
// a bad field of an otherwise good request reaches the services and the database: updates and reads
// aim at the run's records, and an operation that removes what it is given gets a new record
// whenever the one before may be gone. An operation's requests go a few at a time (AT_ONCE), a
// remover's one at a time; the operations one after another.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { startTestServer, signUpAdmin, Client, type Reply } from '@berth/core/testing';
import { fuzzRecords, fuzzStandIns, NO_RECORD } from './fuzz-records.ts';
import { AT_ONCE, documentOperations, goodValue, idFieldsOf, inPool } from './openapi-operations.ts';

/** Work on the engine (a bad value there reaches no storage, and a real record would start containers) and the caller's own session: ids of no record. */
const NO_RECORD_OPS =
  /deploy|rebuild|start|stop|reload|kill|clean|cancel|restore|manualBackup|runManually|testConnection|logout|disable|leave|transfer|setup|createAdmin|verify|login|changePassword|generateToken/i;
/** Operations that take away the record they are given. */
const REMOVES = /delete|remove/i;

const nested = (depth: number): unknown => {
  let v: unknown = 'deep';
  for (let i = 0; i < depth; i++) v = { a: [v] };
  return v;
};

/** The bad values each property gets, by label. */
const badValues: Record<string, unknown> = {
  null: null,
  nul: 'a\u0000b',
  loneHigh: 'a\ud800b',
  loneLow: '\udc00',
  long: 'y'.repeat(70_000),
  longish: 'z'.repeat(300),
  huge: 1e20,
  negHuge: -1e20,
  fraction: 0.5,
  negative: -1,
  number: 12,
  bool: true,
  object: { a: 'b\u0000' },
  array: ['a\ud800'],
  deep: nested(200),
};

// Every field of every operation, each with every bad value: past tap's default limit since the compose namespace came.
t.setTimeout(1_500_000);

t.test('every operation of the OpenAPI document answers bad input with a 4xx, never a 500', async t => {
  // No proxy: a domain change would otherwise start one (host ports 80/443) on the shared engine;
  // with none the domain operations still store and validate everything they are given.
  const standIns = await fuzzStandIns(t);
  const server = await startTestServer({ proxy: 'none', ...standIns.config });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const c = admin.client;
  const records = await fuzzRecords(t, server, c, admin, { bitbucket: standIns.bitbucket });
  const ids = records.ids;

  // BERTH_FUZZ_ONLY=<regex> drives only the matching operations (to chase a finding).
  const operations = await documentOperations(c);
  if (!process.env.BERTH_FUZZ_ONLY) t.ok(operations.length > 100, `${operations.length} operations in the document`);
  const idFields = idFieldsOf(operations);
  t.same([...idFields].filter(f => !(f in ids) && !NO_RECORD[f]).sort(), [], 'every id field of the document has a real record, or a reason in NO_RECORD why it cannot');
  t.same(
    Object.keys(NO_RECORD).filter(f => f in ids || !idFields.has(f)),
    [],
    'NO_RECORD lists only id fields the document names and no record stands behind',
  );
  t.comment(
    `real records for ${[...idFields].filter(f => f in ids).length} id fields: ${[...idFields]
      .filter(f => f in ids)
      .sort()
      .join(' ')}`,
  );

  const statuses = new Map<number, number>();
  const failures: string[] = [];
  const unnamed: string[] = [];
  let sent = 0;
  const record = (what: string, r: Reply) => {
    sent++;
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    if (r.status >= 500) failures.push(`${what} → ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
  };
  const fakeIds = Object.fromEntries(Object.keys(ids).map(k => [k, 'fuzzmissing0000000000000000000']));
  const started = Date.now();
  let freshRecords = 0;

  for (const op of operations) {
    const name = op.path.split('.')[1] ?? '';
    const removes = REMOVES.test(name) && !NO_RECORD_OPS.test(name);
    const props: Record<string, any> = op.schema.properties ?? {};
    const recordFields = Object.keys(props).filter(f => records.has(f));
    // A remover gets new records of its own, again after any request that may have removed them.
    const freshIds = async () => {
      freshRecords += recordFields.length;
      return { ...ids, ...Object.fromEntries(await Promise.all(recordFields.map(async f => [f, await records.fresh(f)]))) };
    };
    const opIds = NO_RECORD_OPS.test(name) ? fakeIds : removes ? await freshIds() : ids;
    let base = goodValue('', op.schema, opIds) as Record<string, unknown>;
    // Of a remover, the good request goes last: it removes the record.
    const baseRequest = async () => {
      const reply = await c.raw(`/api/${op.path}`, { method: 'POST', headers: { 'x-api-key': admin.apiKey, 'content-type': 'application/json' }, body: JSON.stringify(base) });
      record(`POST ${op.path} base`, reply);
      return reply;
    };
    const baseReply = removes ? undefined : await baseRequest();
    const bodies: [string, (b: Record<string, unknown>) => unknown][] = [];
    for (const field of Object.keys(props)) {
      for (const [label, bad] of Object.entries(badValues)) bodies.push([`${field}=${label}`, b => ({ ...b, [field]: bad })]);
    }
    for (const [label, bad] of Object.entries(badValues)) bodies.push([`body=${label}`, () => bad]);
    bodies.push(['extra field', b => ({ ...b, 'x\u0000y': 'a\ud800' })]);
    const send = async (label: string, bodyOf: (b: Record<string, unknown>) => unknown) => {
      const r = await c.raw(`/api/${op.path}`, { method: 'POST', headers: { 'x-api-key': admin.apiKey, 'content-type': 'application/json' }, body: JSON.stringify(bodyOf(base)) });
      record(`POST ${op.path} ${label}`, r);
      if (removes && r.status < 300) base = goodValue('', op.schema, await freshIds()) as Record<string, unknown>;
      const [field, kind] = label.split('=');
      // A string the database could not hold is refused naming its field, whatever layer noticed it.
      if (
        r.status === 400 &&
        baseReply?.status !== 400 &&
        field !== 'body' &&
        ['nul', 'loneHigh', 'loneLow', 'long', 'huge', 'negHuge'].includes(kind!) &&
        !(r.body.issues ?? []).some((i: any) => i.path?.[0] === field)
      ) {
        unnamed.push(`POST ${op.path} ${label} → ${JSON.stringify(r.body).slice(0, 200)}`);
      }
    };
    // A remover's requests go one at a time (each may take the record the next one aims at); the
    // others' are independent of each other and go a few at a time.
    const requests: (() => Promise<void>)[] = [];
    for (const [label, bodyOf] of bodies) requests.push(() => send(label, bodyOf));
    // the tRPC form and the query string of reads
    requests.push(async () => {
      const trpc = await c.raw(`/api/trpc/${op.path}`, {
        method: 'POST',
        headers: { 'x-api-key': admin.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ json: { ...base, [Object.keys(props)[0] ?? 'x']: 'a\u0000' } }),
      });
      record(`trpc ${op.path} nul`, trpc);
    });
    if (op.method === 'get') {
      for (const field of Object.keys(props)) {
        for (const raw of ['%00', '%ED%A0%80', '1e20', '-1e400', 'x'.repeat(5000), '%FF', '[]', '{"a":1}']) {
          requests.push(async () => {
            const qs = Object.entries({ ...base, [field]: undefined })
              .filter(([, v]) => v !== undefined && typeof v !== 'object')
              .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
            qs.push(`${encodeURIComponent(field)}=${raw}`);
            record(`GET ${op.path} ${field}=${raw.slice(0, 12)}`, await c.raw(`/api/${op.path}?${qs.join('&')}`, { headers: { 'x-api-key': admin.apiKey } }));
          });
        }
      }
    }
    // wrong content types and malformed bodies
    for (const [ct, body] of [
      ['text/plain', 'hello'],
      ['application/x-www-form-urlencoded', 'a=b'],
      ['application/json', '{"a":'],
      ['application/json', '\u0000'],
      ['application/octet-stream', '\u00ff\u00fe'],
    ]) {
      requests.push(async () => record(`POST ${op.path} ${ct}`, await c.raw(`/api/${op.path}`, { method: 'POST', headers: { 'x-api-key': admin.apiKey, 'content-type': ct! }, body })));
    }
    await inPool(removes ? 1 : AT_ONCE, requests);
    if (removes) await baseRequest();
  }
  t.comment(`${freshRecords} records made for the operations that remove them`);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const figures = [...statuses.entries()]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s}×${n}`)
    .join(', ');
  t.comment(`${operations.length} operations, ${sent} requests in ${seconds} s: ${figures}`);
  // BERTH_FUZZ_REPORT=<file> keeps every finding, not only the first 40 the assertions show.
  if (process.env.BERTH_FUZZ_REPORT) writeFileSync(process.env.BERTH_FUZZ_REPORT, [...failures, ...unnamed].join('\n'));
  t.same(unnamed.sort().slice(0, 40), [], `every 400 for an unstorable value names its field (${unnamed.length} did not)`);
  t.same(failures.sort().slice(0, 40), [], `no 500 among ${sent} requests (${failures.length} failed)`);
});

t.test('the inputs of the report: each a 400 naming its field, and application.search by repository works', async t => {
  const server = await startTestServer();
  t.teardown(() => server.destroy());
  const { client: c } = await signUpAdmin(server);
  const named = (r: Reply, field: string) => r.status === 400 && r.body.issues.some((i: any) => i.path[0] === field && i.message.startsWith(`${field}:`));
  t.ok(named(await c.post('project.create', { name: 'a\u0000b' }), 'name'), 'a NUL byte in a stored string');
  t.ok(named(await c.post('project.create', { name: 'a\ud800b' }), 'name'), 'an unpaired surrogate');
  t.ok(named(await c.get('project.search', { offset: '1e20' }), 'offset'), 'a huge offset');
  t.ok(named(await c.post('organization.create', { name: 'o'.repeat(300) }), 'name'), 'a name longer than its column');
  const project = await c.post('project.create', { name: 'p' });
  const app = await c.post('application.create', { name: 'a', environmentId: project.body.environment.environmentId });
  await c.post('application.saveGitProvider', { applicationId: app.body.applicationId, customGitUrl: 'https://example.com/me/shop.git', customGitBranch: 'main' });
  await c.post('application.saveDockerProvider', { applicationId: app.body.applicationId, dockerImage: 'berth-test/busybox:1' });
  const found = await c.get('application.search', { dockerImage: 'busybox' });
  t.equal(found.status, 200, 'search by a setting answers');
  t.same(
    found.body.items.map((a: any) => a.applicationId),
    [app.body.applicationId],
    'and finds the application by its image',
  );
  t.same((await c.get('application.search', { dockerImage: 'nginx' })).body.items, [], 'and not by another');
  t.equal((await c.get('application.search', { repository: 'x', owner: 'y' })).status, 200, 'repository and owner too');
});
