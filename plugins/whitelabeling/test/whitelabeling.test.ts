// whitelabeling.* through the real kernel and a real PostgreSQL database, on both wire forms: an
// instance operator changes and resets it, every signed-in member reads it, anyone reads its public
// part; a member of the instance's organization and the owner of another organization are refused
// the changes (403), and bad input is refused naming the field.
import t from 'tap';
import { addMember, Client, otherOrganization, signUpAdmin, startTestServer, type Reply } from '@berth/core/testing';

/** The answer of either wire form: the tRPC envelope's json, or the REST body. */
const data = (r: Reply) => (r.body?.result?.data ? r.body.result.data.json : r.body);

const FIELDS = ['appDescription', 'appName', 'customCss', 'docsUrl', 'errorPageDescription', 'errorPageTitle', 'faviconUrl', 'footerText', 'loginLogoUrl', 'logoUrl', 'metaTitle', 'supportUrl'];
const PUBLIC_FIELDS = FIELDS.filter(f => f !== 'supportUrl' && f !== 'docsUrl');
const NOTHING_SET = Object.fromEntries(FIELDS.map(f => [f, null]));

const CONFIG = {
  appName: 'Acme Deploy',
  appDescription: 'Deployments of Acme',
  logoUrl: 'https://cdn.acme.example/logo.svg',
  faviconUrl: 'https://cdn.acme.example/favicon.ico',
  customCss: ':root { --primary: #0ea5e9; }',
  loginLogoUrl: 'http://cdn.acme.example/login.png',
  supportUrl: 'https://acme.example/support',
  docsUrl: 'https://acme.example/docs',
  errorPageTitle: 'Something went wrong',
  errorPageDescription: 'Ask the platform team',
  metaTitle: 'Acme',
  footerText: '© Acme',
};

t.test('whitelabeling.*', async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const anonymous = new Client(server.url);
  const operator = await signUpAdmin(server);
  const a = operator.client;
  const member = await addMember(server, a, 'member@example.com', 'member');
  const stranger = await addMember(server, a, 'stranger@example.com', 'member');
  const other = await otherOrganization(server, stranger.userId);
  t.equal((await a.post('user.remove', { userId: stranger.userId })).status, 200, "the other organization's owner is no member of the instance's");

  t.test('nothing set at first: every field null, to everyone who may read it', async t => {
    t.same(data(await a.get('whitelabeling.get')), NOTHING_SET, 'the operator');
    t.same(data(await member.client.trpc('query', 'whitelabeling.get')), NOTHING_SET, 'a member (tRPC)');
    const pub = await anonymous.get('whitelabeling.getPublic');
    t.equal(pub.status, 200, 'getPublic needs no credential');
    t.same(Object.keys(data(pub)).sort(), PUBLIC_FIELDS, "the peer's public fields: no support or docs link");
    t.equal((await anonymous.get('whitelabeling.get')).status, 401, 'get needs a credential');
  });

  t.test('the operator changes it; everyone reads the change', async t => {
    const r = await a.post('whitelabeling.update', { whitelabelingConfig: CONFIG });
    t.equal(r.status, 200, JSON.stringify(r.body));
    t.same(r.body, { success: true });
    t.same(data(await a.get('whitelabeling.get')), CONFIG, 'get answers every field as stored');
    t.same(data(await member.client.get('whitelabeling.get')), CONFIG, "a member of the instance's organization reads it");
    t.same(data(await other.client.get('whitelabeling.get')), CONFIG, "another organization's owner reads it too: it is the instance's");
    const pub = data(await anonymous.trpc('query', 'whitelabeling.getPublic'));
    t.same(pub, Object.fromEntries(PUBLIC_FIELDS.map(f => [f, CONFIG[f as keyof typeof CONFIG]])), 'getPublic answers its fields to anyone (tRPC)');

    const cleared = await a.trpc('mutation', 'whitelabeling.update', { whitelabelingConfig: { ...CONFIG, appName: '', docsUrl: null } });
    t.equal(cleared.status, 200, JSON.stringify(cleared.body));
    t.same(data(await a.get('whitelabeling.get')), { ...CONFIG, appName: null, docsUrl: null }, '"" and null both clear a field (tRPC)');
  });

  t.test('a member and another organization are refused the changes, and nothing changes', async t => {
    const before = data(await a.get('whitelabeling.get'));
    for (const [who, c] of [
      ["a member of the instance's organization", member.client],
      ["another organization's owner", other.client],
    ] as const) {
      for (const r of [
        await c.post('whitelabeling.update', { whitelabelingConfig: { ...CONFIG, appName: 'Taken over' } }),
        await c.trpc('mutation', 'whitelabeling.update', { whitelabelingConfig: { ...CONFIG, appName: 'Taken over' } }),
        await c.post('whitelabeling.reset'),
      ]) {
        t.equal(r.status, 403, `${who}: ${JSON.stringify(r.body)}`);
      }
    }
    const r = await other.client.post('whitelabeling.update', { whitelabelingConfig: CONFIG });
    t.match(r.body.message, /Berth's own machine/, "the refusal names the instance operators' scope");
    t.equal((await anonymous.post('whitelabeling.update', { whitelabelingConfig: CONFIG })).status, 401, 'no credential: 401');
    t.same(data(await a.get('whitelabeling.get')), before, 'nothing changed');
  });

  t.test('bad input is refused naming the field, and changes nothing', async t => {
    const before = data(await a.get('whitelabeling.get'));
    const refused = async (patch: Record<string, unknown>, field: string, why: string) => {
      const r = await a.post('whitelabeling.update', { whitelabelingConfig: { ...CONFIG, ...patch } });
      t.equal(r.status, 400, `${why}: ${JSON.stringify(r.body)}`);
      t.ok(
        (r.body.issues ?? []).some((i: { path: string[]; message: string }) => i.path.join('.') === `whitelabelingConfig.${field}` && i.message.startsWith(`whitelabelingConfig.${field}:`)),
        `${why}: the issue names whitelabelingConfig.${field}`,
      );
    };
    await refused({ logoUrl: 'javascript:alert(1)' }, 'logoUrl', 'a javascript: URL');
    await refused({ faviconUrl: 'data:image/png;base64,AAAA' }, 'faviconUrl', 'a data: URL');
    await refused({ supportUrl: 'ftp://acme.example/x' }, 'supportUrl', 'an ftp URL');
    await refused({ docsUrl: `https://acme.example/${'a'.repeat(2100)}` }, 'docsUrl', 'a URL over 2048 characters');
    await refused({ loginLogoUrl: 'not a url' }, 'loginLogoUrl', 'not a URL');
    await refused({ customCss: 'a'.repeat(65_537) }, 'customCss', 'CSS over 64 KiB');
    await refused({ appName: 'n'.repeat(256) }, 'appName', 'a name over 255 characters');
    await refused({ footerText: 'f'.repeat(2001) }, 'footerText', 'a footer over 2000 characters');
    await refused({ metaTitle: 42 }, 'metaTitle', 'a number');
    const { appDescription: _left, ...missing } = CONFIG;
    const r = await a.post('whitelabeling.update', { whitelabelingConfig: missing });
    t.equal(r.status, 400, "every field is required, as the peer's input has it");
    t.match(JSON.stringify(r.body.issues), /whitelabelingConfig\.appDescription/);
    t.same(data(await a.get('whitelabeling.get')), before, 'nothing changed');
  });

  t.test('reset clears every field', async t => {
    t.equal((await member.client.post('whitelabeling.reset')).status, 403, 'not by a member');
    const r = await a.trpc('mutation', 'whitelabeling.reset');
    t.equal(r.status, 200);
    t.same(data(r), { success: true });
    t.same(data(await a.get('whitelabeling.get')), NOTHING_SET);
    t.same(data(await anonymous.get('whitelabeling.getPublic')), Object.fromEntries(PUBLIC_FIELDS.map(f => [f, null])));
  });

  t.test('the stored row is the one the database holds', async t => {
    t.equal((await a.post('whitelabeling.update', { whitelabelingConfig: CONFIG })).status, 200);
    const em = server.kernel.container.cradle.orm.em.fork();
    const rows = await em.getConnection().execute<{ key: string; config: Record<string, unknown> }[]>('select key, config from whitelabeling');
    t.equal(rows.length, 1, 'one row for the instance');
    t.same(rows[0]!.config, CONFIG, 'holding the config as given');
  });
});
