// SCIM provisioning through the real kernel on a real PostgreSQL: scim.* makes an organization's
// token (admins only), and an identity provider with it provisions users (who then are members),
// finds them by filter and page, changes them (PUT, PATCH), deprovisions them (active false: their
// session and API key are refused on the very next call; DELETE) and moves them between groups (the
// organization's roles). A wrong or missing token is refused, and another organization's token sees
// and changes nothing of this one's.
import t from 'tap';
import { addMember, Client, otherOrganization, signUpAdmin, startTestServer, type Reply } from '@berth/core/testing';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
/** The answer of either wire form: the tRPC envelope's json, or the REST body. */
const data = (r: Reply) => (r.body?.result?.data ? r.body.result.data.json : r.body);

t.test('SCIM 2.0 provisioning', async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const a = admin.client;
  const member = await addMember(server, a, 'member@example.com', 'member');

  /** A SCIM request with a bearer token (none: no Authorization header). */
  const scim = async (token: string | null, method: string, path: string, body?: unknown): Promise<Reply> => {
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    if (body !== undefined) headers['content-type'] = 'application/scim+json';
    return new Client(server.url).raw(`/scim/v2${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  };
  const emails = async (c: Client) => ((await c.get('user.all')).body as { user: { email: string } }[]).map(m => m.user.email).sort();

  // ------------------------------------------------------------ scim.*
  const made = await a.post('scim.generateToken', { providerId: 'okta' });
  t.equal(made.status, 200, JSON.stringify(made.body));
  const token = made.body.scimToken as string;
  t.match(made.body, { providerId: 'okta', scimToken: /^berth_scim_/ }, 'the token is answered once, with its provider');
  t.equal((await member.client.post('scim.generateToken', { providerId: 'other' })).status, 403, 'a member may not make a token (the admin could: the positive control)');
  t.equal((await member.client.get('scim.listProviders')).status, 403, 'nor list the providers');
  const listed = data(await a.trpc('query', 'scim.listProviders'));
  t.same(listed, [{ id: listed[0].id, providerId: 'okta', organizationId: admin.organizationId }], 'listProviders names it (tRPC), never its token');
  const bad = await a.post('scim.generateToken', { providerId: 'Not Valid' });
  t.equal(bad.status, 400);
  t.match(bad.body.issues[0].message, /^providerId:/, 'a bad provider id is refused naming the field');
  const db = server.kernel.container.cradle.orm.em.fork().getConnection();
  const [stored] = await db.execute<{ token_hash: string }[]>('select token_hash from scim_providers');
  t.ok(stored && stored.token_hash.length === 64 && !stored.token_hash.includes(token.slice(11, 30)), 'the token is stored as its SHA-256 hash only');

  t.test('the token is required: missing or wrong, 401 in the SCIM error schema', async t => {
    for (const [what, r] of [
      ['no token', await scim(null, 'GET', '/Users')],
      ['a wrong token', await scim('berth_scim_wrong', 'GET', '/Users')],
      ["an admin's API key as the bearer", await scim(admin.apiKey, 'GET', '/Users')],
      ["the admin's session token", await scim(admin.token, 'POST', '/Users', { userName: 'x@example.com' })],
    ] as const) {
      t.equal(r.status, 401, what);
      t.match(r.body, { schemas: [ERROR], status: '401' }, `${what}: the SCIM error schema`);
    }
    const ok = await scim(token, 'GET', '/Users');
    t.equal(ok.status, 200, 'the positive control: the token gets in');
    t.match(ok.headers.get('content-type'), /^application\/scim\+json/, 'answers are application/scim+json');
  });

  t.test('discovery', async t => {
    const config = await scim(token, 'GET', '/ServiceProviderConfig');
    t.match(config.body, { patch: { supported: true }, filter: { supported: true, maxResults: 200 }, bulk: { supported: false } });
    t.same(
      (await scim(token, 'GET', '/ResourceTypes')).body.Resources.map((r: { id: string }) => r.id),
      ['User', 'Group'],
    );
    t.equal((await scim(token, 'GET', `/Schemas/${USER}`)).body.name, 'User');
    t.equal((await scim(token, 'GET', '/Nothing')).status, 404);
  });

  const ids: Record<string, string> = {};
  t.test('provisioning: the user is made and becomes a member', async t => {
    const r = await scim(token, 'POST', '/Users', {
      schemas: [USER],
      userName: 'Alice@Example.com',
      name: { givenName: 'Alice', familyName: 'Liddell' },
      externalId: 'okta-alice',
      emails: [{ value: 'alice@example.com' }],
    });
    t.equal(r.status, 201, JSON.stringify(r.body));
    t.match(r.body, { schemas: [USER], userName: 'alice@example.com', name: { givenName: 'Alice', familyName: 'Liddell' }, externalId: 'okta-alice', active: true, groups: [{ value: 'member' }] });
    t.equal(r.headers.get('location'), r.body.meta.location, 'Location names the new resource');
    ids.alice = r.body.id;
    t.ok((await emails(a)).includes('alice@example.com'), 'user.all lists the new member');
    const one = await a.get('user.one', { userId: ids.alice });
    t.match(one.body, { role: 'member', user: { email: 'alice@example.com', firstName: 'Alice', lastName: 'Liddell' } }, 'with the default role and the names given');
    const again = await scim(token, 'POST', '/Users', { schemas: [USER], userName: 'alice@example.com' });
    t.match(again, { status: 409, body: { scimType: 'uniqueness' } }, 'provisioning the same user twice: 409 uniqueness');
    const invalid = await scim(token, 'POST', '/Users', { schemas: [USER], userName: 'not an e-mail' });
    t.match(invalid, { status: 400, body: { scimType: 'invalidValue', detail: /^userName:/ } }, 'a userName that is no e-mail: 400 naming it');
    for (const name of ['bob', 'carol', 'dave']) {
      const made = await scim(token, 'POST', '/Users', { schemas: [USER], userName: `${name}@example.com`, externalId: `okta-${name}` });
      t.equal(made.status, 201);
      ids[name] = made.body.id;
    }
  });

  t.test('filter and paging', async t => {
    const found = await scim(token, 'GET', `/Users?filter=${encodeURIComponent('userName eq "BOB@example.com"')}`);
    t.equal(found.status, 200);
    t.match(found.body, { totalResults: 1, Resources: [{ id: ids.bob, userName: 'bob@example.com', externalId: 'okta-bob' }] }, 'userName eq finds one (case-insensitively)');
    const none = await scim(token, 'GET', `/Users?filter=${encodeURIComponent('userName eq "nobody@example.com"')}`);
    t.match(none.body, { totalResults: 0, Resources: [] });
    const byExternal = await scim(token, 'GET', `/Users?filter=${encodeURIComponent('externalId eq "okta-carol" or userName sw "dave"')}`);
    t.same(byExternal.body.Resources.map((u: { id: string }) => u.id).sort(), [ids.carol, ids.dave].sort(), 'or, sw and externalId');
    // The owner, the member, alice, bob, carol and dave.
    const all = await scim(token, 'GET', '/Users');
    t.equal(all.body.totalResults, 6);
    const second = await scim(token, 'GET', '/Users?startIndex=3&count=2');
    t.match(second.body, { totalResults: 6, startIndex: 3, itemsPerPage: 2 });
    t.same(
      second.body.Resources.map((u: { id: string }) => u.id),
      all.body.Resources.slice(2, 4).map((u: { id: string }) => u.id),
      'startIndex (1-based) and count page the list',
    );
    t.match(await scim(token, 'GET', `/Users?filter=${encodeURIComponent('userName eq')}`), { status: 400, body: { scimType: 'invalidFilter' } }, 'a malformed filter: 400 invalidFilter');
    t.match(await scim(token, 'GET', '/Users?count=many'), { status: 400, body: { detail: /^count:/ } });
  });

  t.test('PUT replaces and PATCH changes a user', async t => {
    const put = await scim(token, 'PUT', `/Users/${ids.bob}`, {
      schemas: [USER],
      userName: 'robert@example.com',
      name: { givenName: 'Robert', familyName: 'Tables' },
      externalId: 'okta-robert',
      active: true,
    });
    t.equal(put.status, 200, JSON.stringify(put.body));
    t.match(put.body, { userName: 'robert@example.com', externalId: 'okta-robert', name: { givenName: 'Robert' } });
    t.match((await a.get('user.one', { userId: ids.bob })).body, { user: { email: 'robert@example.com', firstName: 'Robert', lastName: 'Tables' } }, 'the account changed');
    const patch = await scim(token, 'PATCH', `/Users/${ids.bob}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'name.familyName', value: 'Droptables' }] });
    t.equal(patch.status, 200, JSON.stringify(patch.body));
    t.match(patch.body, { name: { givenName: 'Robert', familyName: 'Droptables' }, externalId: 'okta-robert', active: true }, 'PATCH changed one attribute and kept the rest');
    t.match(
      await scim(token, 'PATCH', `/Users/${ids.bob}`, { schemas: [PATCH], Operations: [{ op: 'explode', path: 'userName' }] }),
      { status: 400, body: { schemas: [ERROR] } },
      'an unknown op: 400',
    );
    t.match(await scim(token, 'PATCH', `/Users/${ids.bob}`, { Operations: [] }), { status: 400 }, 'a body that is no PatchOp: 400');
    const owner = await scim(token, 'PATCH', `/Users/${admin.userId}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
    t.equal(owner.status, 403, 'the owner is not changed through SCIM');
    t.equal((await scim(token, 'DELETE', `/Users/${admin.userId}`)).status, 403, 'nor removed');
    t.equal((await a.get('user.get')).status, 200, "the owner's credentials still work");
  });

  t.test('deprovisioning (active false) refuses the user’s session and API key at once; other organizations keep them', async t => {
    const eve = await addMember(server, a, 'eve@example.com', 'admin', 'eve-password-1', 'apiKey');
    const session = new Client(server.url, { token: eve.token });
    const key = new Client(server.url, { apiKey: eve.apiKey });
    const elsewhere = await otherOrganization(server, eve.userId);
    // The positive control: both work, warm in the credential cache.
    t.equal((await session.get('user.get')).status, 200, "eve's session works before");
    t.equal((await key.get('project.all')).status, 200, "eve's API key works before");
    t.equal((await elsewhere.client.get('project.all')).status, 200, 'and her key of her own organization');
    const r = await scim(token, 'PATCH', `/Users/${eve.userId}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: 'False' } }] });
    t.equal(r.status, 200, JSON.stringify(r.body));
    t.equal(r.body.active, false, 'the user is inactive');
    t.equal((await session.get('user.get')).status, 401, 'her session is refused on the very next call');
    t.equal((await key.get('project.all')).status, 401, 'so is her API key');
    t.notOk((await emails(a)).includes('eve@example.com'), 'she is no member any more');
    t.equal((await elsewhere.client.get('project.all')).status, 200, 'her key of the organization she owns still works');
    t.match((await scim(token, 'GET', `/Users/${eve.userId}`)).body, { active: false, userName: 'eve@example.com' }, 'SCIM still lists her, inactive');
    const login = await new Client(server.url).post('auth.login', { email: 'eve@example.com', password: 'eve-password-1' });
    t.not(login.body.organizationId, admin.organizationId, 'a new login of hers no longer acts in this organization');

    const back = await scim(token, 'PATCH', `/Users/${eve.userId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: true }] });
    t.match(back.body, { active: true, groups: [{ value: 'member' }] }, 'reactivated: a member again, with the default role');
    t.equal((await key.get('project.all')).status, 401, 'the revoked key stays revoked');
  });

  t.test('DELETE deprovisions and forgets the user', async t => {
    const carol = await scim(token, 'DELETE', `/Users/${ids.carol}`);
    t.equal(carol.status, 204);
    t.equal((await scim(token, 'GET', `/Users/${ids.carol}`)).status, 404, 'gone from SCIM');
    t.notOk((await emails(a)).includes('carol@example.com'), 'and from the members');
    t.equal((await scim(token, 'DELETE', `/Users/${ids.carol}`)).status, 404, 'a second DELETE: 404');
  });

  t.test('groups are the roles: adding and removing members changes their role', async t => {
    const groups = await scim(token, 'GET', '/Groups');
    t.same(
      groups.body.Resources.map((g: { id: string }) => g.id),
      ['admin', 'member'],
    );
    const add = await scim(token, 'PATCH', '/Groups/admin', { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: ids.alice }, { value: ids.dave }] }] });
    t.equal(add.status, 200, JSON.stringify(add.body));
    t.ok(
      add.body.members.some((m: { value: string }) => m.value === ids.alice),
      'alice is in the admin group',
    );
    t.equal((await a.get('user.one', { userId: ids.alice })).body.role, 'admin', 'alice is an admin');
    t.match((await scim(token, 'GET', `/Users/${ids.dave}`)).body, { groups: [{ value: 'admin' }] }, "the user's groups say so");
    const remove = await scim(token, 'PATCH', '/Groups/admin', { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${ids.dave}"]` }] });
    t.equal(remove.status, 200, JSON.stringify(remove.body));
    t.equal((await a.get('user.one', { userId: ids.dave })).body.role, 'member', 'dave, removed from admin, is a member again');
    t.equal((await a.get('user.one', { userId: ids.alice })).body.role, 'admin', 'alice stays an admin');
    const put = await scim(token, 'PUT', '/Groups/admin', { displayName: 'admin', members: [{ value: ids.dave }] });
    t.equal(put.status, 200, JSON.stringify(put.body));
    t.equal((await a.get('user.one', { userId: ids.alice })).body.role, 'member', 'PUT: alice, not listed, is a member again');
    t.equal((await a.get('user.one', { userId: ids.dave })).body.role, 'admin', 'and dave, listed, an admin');
    t.match(await scim(token, 'PUT', '/Groups/admin', { displayName: 'admins', members: [] }), { status: 400, body: { scimType: 'mutability' } }, "a group's name does not change");
    t.match(
      await scim(token, 'PATCH', '/Groups/admin', { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: admin.userId }] }] }),
      { status: 403 },
      'the owner joins no group',
    );
    t.match(
      await scim(token, 'PATCH', '/Groups/admin', { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: 'nobody' }] }] }),
      { status: 400, body: { detail: /^members:/ } },
      'nor does a user who is none',
    );
    t.equal((await scim(token, 'DELETE', '/Groups/admin')).status, 403, 'a role is not removed through SCIM');
    t.equal((await scim(token, 'GET', '/Groups/nothing')).status, 404);
    t.match((await scim(token, 'GET', `/Groups?filter=${encodeURIComponent('displayName eq "admin"')}&excludedAttributes=members`)).body, { totalResults: 1, Resources: [{ id: 'admin' }] });
  });
  t.test("another organization's token sees and changes nothing of this one's", async t => {
    const stranger = await addMember(server, a, 'stranger@example.com', 'member');
    const other = await otherOrganization(server, stranger.userId);
    t.equal((await a.post('user.remove', { userId: stranger.userId })).status, 200, "B's owner is no member of A");
    const theirs = (await other.client.post('scim.generateToken', { providerId: 'okta' })).body.scimToken as string;
    t.ok(theirs, 'B names its provider as A did: provider ids are per organization');
    t.same(
      (await scim(theirs, 'GET', '/Users')).body.Resources.map((u: { userName: string }) => u.userName),
      ['stranger@example.com'],
      "B's token lists B's users only",
    );
    t.equal((await scim(theirs, 'GET', `/Users?filter=${encodeURIComponent('userName eq "alice@example.com"')}`)).body.totalResults, 0, "and finds none of A's");
    t.equal((await scim(theirs, 'GET', `/Users/${ids.alice}`)).status, 404, "A's user is not found");
    t.equal((await scim(theirs, 'PATCH', `/Users/${ids.alice}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] })).status, 404);
    t.equal((await scim(theirs, 'PUT', `/Users/${ids.alice}`, { userName: 'alice@example.com', active: false })).status, 404);
    t.equal((await scim(theirs, 'DELETE', `/Users/${ids.alice}`)).status, 404);
    t.match(
      await scim(theirs, 'PATCH', '/Groups/admin', { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: ids.dave }] }] }),
      { status: 400 },
      "A's user joins none of B's groups",
    );
    t.same((await scim(theirs, 'GET', '/Groups/member')).body.members, [], "B's groups hold none of A's members");
    t.match((await scim(token, 'GET', `/Users/${ids.alice}`)).body, { active: true, userName: 'alice@example.com' }, "the positive control: A's token finds alice, unchanged");
    t.equal((await other.client.post('scim.deleteProvider', { providerId: 'nope' })).status, 404, 'a provider that is none: 404');
    t.same(data(await other.client.get('scim.listProviders')).length, 1, "B's list holds its own provider only");
  });

  t.test('a new token replaces the old; a removed provider is refused at once', async t => {
    const renewed = (await a.post('scim.generateToken', { providerId: 'okta' })).body.scimToken as string;
    t.equal((await scim(token, 'GET', '/Users')).status, 401, 'the replaced token is refused');
    t.equal((await scim(renewed, 'GET', '/Users')).status, 200, 'the new one works');
    const removed = await a.post('scim.deleteProvider', { providerId: 'okta' });
    t.same(removed.body, { success: true });
    t.equal((await scim(renewed, 'GET', '/Users')).status, 401, "the removed provider's token is refused");
    t.same(data(await a.get('scim.listProviders')), []);
    t.ok((await emails(a)).includes('alice@example.com'), 'the users it provisioned stay');
  });
});
