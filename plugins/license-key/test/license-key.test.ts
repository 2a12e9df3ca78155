// licenseKey.* through the real kernel and a real PostgreSQL database, on both wire forms: every
// feature is on and no key is needed — haveValidLicenseKey is true for every member, activating a
// key is accepted and changes nothing, and the key-managing calls are an organization's admins'
// and owner's, as with the peer.
import t from 'tap';
import { addMember, Client, otherOrganization, signUpAdmin, startTestServer, type Reply } from '@berth/core/testing';

/** The answer of either wire form: the tRPC envelope's json, or the REST body. */
const data = (r: Reply) => (r.body?.result?.data ? r.body.result.data.json : r.body);

const NO_KEY_NEEDED = { enableEnterpriseFeatures: true, licenseKey: '' };

t.test('licenseKey.*', async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const a = admin.client;
  const member = await addMember(server, a, 'member@example.com', 'member');
  const other = await otherOrganization(server, member.userId);

  t.test('every member, of any organization, has a valid licence', async t => {
    for (const [who, c] of [
      ['the owner', a],
      ['a member', member.client],
      ["another organization's owner", other.client],
    ] as const) {
      t.equal(data(await c.get('licenseKey.haveValidLicenseKey')), true, `${who} (REST)`);
      t.equal(data(await c.trpc('query', 'licenseKey.haveValidLicenseKey')), true, `${who} (tRPC)`);
    }
    t.equal((await new Client(server.url).get('licenseKey.haveValidLicenseKey')).status, 401, 'no credential: 401');
  });

  t.test('activating a key is accepted and changes nothing', async t => {
    t.same(data(await a.get('licenseKey.getEnterpriseSettings')), NO_KEY_NEEDED, 'every feature on, no key kept');
    const activated = await a.post('licenseKey.activate', { licenseKey: 'A-KEY-OF-THE-PEER' });
    t.equal(activated.status, 200);
    t.same(activated.body, { success: true });
    t.same(data(await a.trpc('query', 'licenseKey.getEnterpriseSettings')), NO_KEY_NEEDED, 'the key is not kept (tRPC)');
    t.equal(data(await a.trpc('mutation', 'licenseKey.validate')), true, 'validate: true');
    t.same(data(await a.trpc('mutation', 'licenseKey.deactivate')), { success: true }, 'deactivate is accepted');
    t.equal(data(await a.get('licenseKey.haveValidLicenseKey')), true, 'and every feature stays on');
    t.equal(data(await a.post('licenseKey.updateEnterpriseSettings', { enableEnterpriseFeatures: false })), true, 'turning enterprise features off is accepted');
    t.same(data(await a.get('licenseKey.getEnterpriseSettings')), NO_KEY_NEEDED, 'and changes nothing');
    t.same(data(await other.client.post('licenseKey.activate', { licenseKey: 'x' })), { success: true }, "another organization's owner manages its own (nothing to manage either)");
  });

  t.test("a member is refused the key's management, as with the peer", async t => {
    for (const [op, input] of [
      ['licenseKey.activate', { licenseKey: 'x' }],
      ['licenseKey.validate', {}],
      ['licenseKey.deactivate', {}],
      ['licenseKey.updateEnterpriseSettings', { enableEnterpriseFeatures: true }],
    ] as const) {
      t.equal((await member.client.post(op, input)).status, 403, op);
    }
    t.equal((await member.client.get('licenseKey.getEnterpriseSettings')).status, 403, 'licenseKey.getEnterpriseSettings');
  });

  t.test('bad input is refused naming the field', async t => {
    for (const [licenseKey, why] of [
      ['', 'an empty key'],
      ['k'.repeat(1025), 'a key over 1024 characters'],
    ] as const) {
      const r = await a.post('licenseKey.activate', { licenseKey });
      t.equal(r.status, 400, why);
      t.match(r.body.issues?.[0]?.message, /^licenseKey: /, `${why}: names licenseKey`);
    }
    const r = await a.post('licenseKey.updateEnterpriseSettings', { enableEnterpriseFeatures: 'yes please' });
    t.equal(r.status, 400);
    t.match(r.body.issues?.[0]?.message, /^enableEnterpriseFeatures: /);
  });
});
