// Single sign-on through real identity providers on loopback and a real Berth on a real
// PostgreSQL: an OpenID provider (oidc-provider: authorization code with PKCE) and a SAML identity
// provider (assertions signed by xml-crypto). Each refusal is paired with the sign-in it blocks
// succeeding: a wrong key, an expired ID token, a replayed answer; an unsigned, wrongly signed,
// wrongly addressed or expired assertion. JIT members, trusted origins, enforced SSO.
import t from 'tap';
import { Client, manualClock, signUpAdmin, startTestServer, type Reply } from '@berth/core/testing';
import { browseToCallback, samlIdentityProvider, startClientSwap, startOpenIdProvider } from './idp.ts';

const data = (r: Reply) => (r.body?.result?.data ? r.body.result.data.json : r.body);

t.test('sso', async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const clock = manualClock(server);
  const admin = await signUpAdmin(server);
  const a = admin.client;
  const anonymous = new Client(server.url);
  const CLIENT = { clientId: 'berth', clientSecret: 'the-client-secret-of-berth' };
  const OTHER_CLIENT = { clientId: 'someone-else', clientSecret: 'the-client-secret-of-someone-else' };
  const idp = await startOpenIdProvider(
    { ...CLIENT, redirectUris: [`${server.url}/api/sso/callback/corp`, `${server.url}/api/sso/callback/corp-bad-keys`] },
    { ...OTHER_CLIENT, redirectUris: [`${server.url}/api/sso/callback/corp-swapped`] },
  );
  t.teardown(() => idp.close());
  const swap = await startClientSwap(idp.issuer, OTHER_CLIENT);
  t.teardown(() => swap.close());
  const otherIdp = await startOpenIdProvider({ ...CLIENT, redirectUris: [] });
  t.teardown(() => otherIdp.close());
  const saml = samlIdentityProvider();
  const acs = `${server.url}/api/sso/saml2/callback/corp-saml`;
  const spEntityId = 'https://berth.example.com/sp';

  /** Starts a sign-in: Berth's 302 to the provider. */
  const start = async (providerId: string, callbackURL?: string) => {
    const res = await fetch(`${server.url}/api/sso/${providerId}/sign-in${callbackURL ? `?callbackURL=${encodeURIComponent(callbackURL)}` : ''}`, { redirect: 'manual' });
    return { status: res.status, location: res.headers.get('location') ?? '', body: res.status === 302 ? null : await res.json() };
  };
  const callback = async (url: string) => {
    const res = await fetch(url, { redirect: 'manual' });
    const text = await res.text();
    return { status: res.status, location: res.headers.get('location'), cookie: res.headers.get('set-cookie'), body: text ? JSON.parse(text) : null };
  };
  const acsPost = async (form: Record<string, string>) => {
    const res = await fetch(acs, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
    return { status: res.status, location: res.headers.get('location'), body: await res.json().catch(() => null) };
  };

  t.test('providers are registered, listed with their secrets masked, and kept sealed', async t => {
    t.equal(data(await anonymous.get('sso.showSignInWithSSO')), false, 'no provider yet: no SSO button');
    const r = await a.post('sso.register', { providerId: 'corp', issuer: idp.issuer, domains: ['Corp.example.com'], oidcConfig: CLIENT });
    t.equal(r.status, 200, JSON.stringify(r.body));
    t.same(r.body, { success: true });
    t.equal(
      (await a.post('sso.register', { providerId: 'corp-bad-keys', issuer: idp.issuer, domains: ['bad.example.com'], oidcConfig: { ...CLIENT, jwksEndpoint: otherIdp.jwksUrl } })).status,
      200,
      'a provider whose ID tokens are checked against another key set',
    );
    const swapped = { ...CLIENT, authorizationEndpoint: `${swap.url}/auth`, tokenEndpoint: `${swap.url}/token` };
    t.equal(
      (await a.post('sso.register', { providerId: 'corp-swapped', issuer: idp.issuer, domains: ['swapped.example.com'], oidcConfig: swapped })).status,
      200,
      'a provider whose tokens an attacker swaps for another client’s',
    );
    const samlConfig = { entryPoint: saml.entryPoint, cert: saml.cert, callbackUrl: acs, audience: spEntityId, idpMetadata: { entityID: saml.entityId }, spMetadata: { entityID: spEntityId } };
    t.equal((await a.post('sso.register', { providerId: 'corp-saml', issuer: 'http://127.0.0.1:9/saml/idp', domains: ['saml.example.com'], samlConfig })).status, 200);
    const taken = await a.post('sso.register', { providerId: 'again', issuer: idp.issuer, domains: ['corp.example.com'], oidcConfig: CLIENT });
    t.equal(taken.status, 400, 'a domain belongs to one provider');
    t.match(taken.body.issues?.[0]?.message, /^domains\.0: corp\.example\.com is already registered/);
    const list = data(await a.get('sso.listProviders'));
    t.same(
      list.map((p: any) => [p.providerId, p.domain, p.organizationId]),
      [
        ['corp', 'corp.example.com', admin.organizationId],
        ['corp-bad-keys', 'bad.example.com', admin.organizationId],
        ['corp-swapped', 'swapped.example.com', admin.organizationId],
        ['corp-saml', 'saml.example.com', admin.organizationId],
      ],
    );
    t.equal(JSON.parse(list[0].oidcConfig).clientSecret, '******', 'the client secret is answered masked');
    t.equal(list[3].oidcConfig, null);
    const rows = await server.kernel.container.cradle.orm.em.fork().getConnection().execute<{ oidc_config: string }[]>("select oidc_config from sso_providers where provider_id = 'corp'");
    t.notMatch(rows[0]!.oidc_config, /the-client-secret/, 'stored sealed');
    t.equal(data(await a.get('sso.one', { providerId: 'corp' })).issuer, idp.issuer);
    t.equal(data(await anonymous.get('sso.showSignInWithSSO')), true, 'a provider: the SSO button shows');
  });

  t.test('OIDC: a new user signs in through the provider (PKCE), becomes a member, and gets a session', async t => {
    const s = await start('corp');
    t.equal(s.status, 302);
    const auth = new URL(s.location);
    t.equal(auth.origin, idp.issuer, 'sent to the provider');
    t.equal(auth.searchParams.get('code_challenge_method'), 'S256', 'with a PKCE challenge');
    t.ok(auth.searchParams.get('nonce') && auth.searchParams.get('state'), 'a nonce and a state');
    const back = await browseToCallback(s.location, 'jane@corp.example.com', `${server.url}/api/sso/callback/`);
    const answer = await callback(back);
    t.equal(answer.status, 200, JSON.stringify(answer.body));
    t.match(answer.cookie, /^berth_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax/);
    const jane = new Client(server.url, { token: answer.body.token });
    const me = await jane.get('user.get');
    t.equal(me.status, 200, `the token is a Berth session: ${JSON.stringify(me.body).slice(0, 300)}`);
    t.equal(me.body.user?.email ?? me.body.email, 'jane@corp.example.com');
    t.equal(me.body.role, 'member', 'made a member with the default role');
    t.equal(answer.body.organizationId, admin.organizationId, "in the provider's organization");

    t.test('the same answer replayed is refused', async t => {
      const again = await callback(back);
      t.equal(again.status, 400, JSON.stringify(again.body));
      t.match(again.body.message, /already used/);
    });
  });

  t.test('OIDC: back to a trusted origin only, the token in the fragment', async t => {
    const refused = await start('corp', 'https://evil.example.net/after');
    t.equal(refused.status, 400, 'an untrusted callbackURL is refused');
    t.match(JSON.stringify(refused.body), /callbackURL/);
    t.equal((await a.post('sso.addTrustedOrigin', { origin: 'https://app.example.com/' })).status, 200);
    t.same(data(await a.get('sso.getTrustedOrigins')), ['https://app.example.com']);
    const s = await start('corp', 'https://app.example.com/after');
    t.equal(s.status, 302);
    const answer = await callback(await browseToCallback(s.location, 'jane@corp.example.com', `${server.url}/api/sso/callback/`));
    t.equal(answer.status, 302, JSON.stringify(answer.body));
    t.match(answer.location, /^https:\/\/app\.example\.com\/after#token=.+/);
    const token = decodeURIComponent(answer.location!.split('#token=')[1]!);
    t.equal((await new Client(server.url, { token }).get('user.get')).status, 200, 'the fragment holds a session');
  });

  t.test('OIDC: an ID token signed by another key is refused (the same sign-in with the right keys succeeds above)', async t => {
    const s = await start('corp-bad-keys');
    const answer = await callback(await browseToCallback(s.location, 'joe@bad.example.com', `${server.url}/api/sso/callback/`));
    t.equal(answer.status, 401, JSON.stringify(answer.body));
    const users = await server.kernel.container.cradle.orm.em.fork().getConnection().execute("select 1 from users where email = 'joe@bad.example.com'");
    t.equal(users.length, 0, 'nobody was made');
  });

  t.test('OIDC: an ID token issued to another client (its audience) is refused', async t => {
    const s = await start('corp-swapped');
    const answer = await callback(await browseToCallback(s.location, 'eve@swapped.example.com', `${server.url}/api/sso/callback/`));
    t.equal(answer.status, 401, JSON.stringify(answer.body));
    t.match(answer.body.message, /aud/);
  });

  t.test('OIDC: an expired ID token is refused', async t => {
    const s = await start('corp');
    const back = await browseToCallback(s.location, 'jane@corp.example.com', `${server.url}/api/sso/callback/`);
    clock.advance(3 * 3600_000);
    const answer = await callback(back);
    clock.advance(-3 * 3600_000);
    t.equal(answer.status, 401, JSON.stringify(answer.body));
    t.match(answer.body.message, /exp|expired|timestamp/i);
  });

  t.test('SAML: a signed assertion signs in; unsigned, wrongly signed, wrongly addressed or expired ones are refused', async t => {
    const cases: [string, Record<string, unknown>][] = [
      ['unsigned', { sign: false }],
      ['signed by another key', { key: saml.otherKey }],
      ['for another audience', { audience: 'https://someone-else.example.com/sp' }],
      ['expired', { expired: true }],
    ];
    for (const [what, o] of cases) {
      const s = await start('corp-saml');
      t.equal(s.status, 302);
      const r = await acsPost(saml.respond(s.location, { email: 'sam@saml.example.com', acs, audience: spEntityId, ...o }));
      t.equal(r.status, 401, `${what}: ${JSON.stringify(r.body)}`);
    }
    const s = await start('corp-saml');
    t.equal(new URL(s.location).origin + new URL(s.location).pathname, saml.entryPoint, 'sent to the IdP with an AuthnRequest');
    const form = saml.respond(s.location, { email: 'sam@saml.example.com', acs, audience: spEntityId });
    const r = await acsPost(form);
    t.equal(r.status, 200, JSON.stringify(r.body));
    const sam = await new Client(server.url, { token: r.body.token }).get('user.get');
    t.equal(sam.status, 200);
    t.equal(sam.body.role, 'member', 'a JIT member with the default role');
    t.equal((await acsPost(form)).status, 400, 'the same response replayed is refused');
  });

  t.test("a provider's default role: its new members get it (member, admin or a custom role; never owner)", async t => {
    const saml2 = { providerId: 'corp-saml', issuer: 'http://127.0.0.1:9/saml/idp', domains: ['saml.example.com'] };
    t.equal(data(await a.get('sso.one', { providerId: 'corp-saml' })).defaultRole, 'member', 'member unless given');
    for (const [role, why] of [
      ['owner', /^defaultRole: cannot be owner/],
      ['no-such-role', /^defaultRole: no-such-role is no role of this organization/],
    ] as const) {
      const bad = await a.post('sso.update', { ...saml2, defaultRole: role });
      t.equal(bad.status, 400, `${role}: refused`);
      t.match(bad.body.issues?.[0]?.message, why, 'naming the field');
    }
    t.equal((await a.post('customRole.create', { roleName: 'deployer', permissions: { deployment: ['create'] } })).status, 200);
    t.equal((await a.post('sso.update', { ...saml2, defaultRole: 'deployer' })).status, 200, 'a custom role of the organization is taken (the control)');
    t.equal(data(await a.get('sso.one', { providerId: 'corp-saml' })).defaultRole, 'deployer');
    const sign = async (email: string) => {
      const s = await start('corp-saml');
      const r = await acsPost(saml.respond(s.location, { email, acs, audience: spEntityId }));
      t.equal(r.status, 200, JSON.stringify(r.body));
      return (await new Client(server.url, { token: r.body.token }).get('user.get')).body.role;
    };
    t.equal(await sign('dee@saml.example.com'), 'deployer', "a new person gets the provider's custom role");
    t.equal(await sign('sam@saml.example.com'), 'member', 'a member signed in before keeps the role it has');
    t.equal((await a.post('customRole.update', { roleName: 'deployer', newRoleName: 'shipper', permissions: { deployment: ['create'] } })).status, 200);
    t.equal(await sign('ria@saml.example.com'), 'member', 'the role renamed since: a new person gets member, the least');
    t.equal((await a.post('sso.update', { ...saml2, defaultRole: 'member' })).status, 200);
  });

  t.test('enforceSSO: a member is refused password login; the instance owner is not', async t => {
    t.equal((await a.post('user.createUserWithCredentials', { email: 'pat@corp.example.com', password: 'member-password-1', role: 'member' })).status, 200);
    const member = { client: new Client(server.url, { token: data(await anonymous.post('auth.login', { email: 'pat@corp.example.com', password: 'member-password-1' })).token }) };
    t.equal(data(await anonymous.get('sso.enforceSSO')), false);
    const byMember = await member.client.post('settings.updateEnforceSSO', { enforceSSO: true });
    t.equal(byMember.status, 403, `not by a member: ${JSON.stringify(byMember.body)}`);
    const on = await a.post('settings.updateEnforceSSO', { enforceSSO: true });
    t.equal(on.status, 200, JSON.stringify(on.body));
    t.equal(data(await anonymous.get('sso.enforceSSO')), true);
    const refused = await anonymous.post('auth.login', { email: 'pat@corp.example.com', password: 'member-password-1' });
    t.equal(refused.status, 403, JSON.stringify(refused.body));
    t.match(refused.body.message, /single sign-on/);
    const owner = await anonymous.post('auth.login', { email: 'admin@example.com', password: 'correct horse battery' });
    t.equal(owner.status, 200, 'the instance owner keeps password login (break-glass)');
    t.equal((await a.post('settings.updateEnforceSSO', { enforceSSO: false })).status, 200);
    t.equal((await anonymous.post('auth.login', { email: 'pat@corp.example.com', password: 'member-password-1' })).status, 200, 'off again: the member logs in');
  });

  t.test('deleteProvider removes it', async t => {
    t.equal((await a.post('sso.deleteProvider', { providerId: 'corp-bad-keys' })).status, 200);
    t.equal((await a.get('sso.one', { providerId: 'corp-bad-keys' })).status, 404);
    t.equal((await start('corp-bad-keys')).status, 404);
  });
});
