// Forward auth through the real Caddy (Debian's, built locally) that Berth runs as its proxy: an
// application deployed through the API answers on a domain; with forward auth on, an anonymous
// browser is sent to Berth's sign-in page on the auth domain (302) and an API client gets 401; a
// member who signs in there (the accounts' own check) gets a cookie for the auth domain's parent
// and is served, with who they are in Remote-* headers and Berth's cookie taken out of the request
// the application gets; a member of another organization is refused; a role narrows it; disabling
// serves anyone again. And forwardAuth.*'s refusals beside the same calls succeeding.
import t from 'tap';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { addMember, Client, freePort, otherOrganization, runFinished, signUpAdmin, startTestServer, TEST_BASE_IMAGE, TEST_CADDY_IMAGE, waitFor, type Reply } from '@berth/core/testing';
import { workloadFile, workloadMiddlewares } from '../../../providers/proxy-traefik/src/traefik-files.ts';

t.setTimeout(300_000);
const docker = new Docker();
const PROXY = `berth-test-proxy-fa-${randomBytes(3).toString('hex')}`;
const data = (r: Reply) => (r.body?.result?.data ? r.body.result.data.json : r.body);

// A page, and a CGI script that shows what the application was sent.
const SITE =
  'mkdir -p /www/cgi-bin && echo "guarded page" > /www/index.html && ' +
  'printf \'#!/bin/sh\\necho "Content-Type: text/plain"\\necho\\necho "user=$HTTP_REMOTE_USER email=$HTTP_REMOTE_EMAIL role=$HTTP_REMOTE_ROLE cookie=$HTTP_COOKIE"\\n\' > /www/cgi-bin/who && ' +
  'chmod +x /www/cgi-bin/who && exec httpd -f -p 3000 -h /www';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}
/** A request through the proxy's published port with a Host header, as a browser whose DNS points the host here sends it. */
function through(port: number, host: string, path: string, o: { headers?: Record<string, string>; form?: Record<string, string> } = {}): Promise<Answer | undefined> {
  return new Promise(resolve => {
    const body = o.form ? new URLSearchParams(o.form).toString() : undefined;
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: body === undefined ? 'GET' : 'POST',
        timeout: 5000,
        headers: { Host: host, ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }), ...o.headers },
      },
      res => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', c => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end(body);
  });
}

t.test('forward auth through Caddy', async t => {
  const httpPort = await freePort();
  const server = await startTestServer({
    host: '0.0.0.0', // the proxy asks Berth through the engine's gateway
    proxy: 'caddy',
    proxyImage: TEST_CADDY_IMAGE,
    proxyHttpPort: httpPort,
    proxyHttpsPort: await freePort(),
    serverIp: '127.0.0.1',
    providers: { proxy: { caddy: { options: { serviceName: PROXY } } } },
  });
  const services = [PROXY];
  t.teardown(async () => {
    for (const name of services)
      await docker
        .getService(name)
        .remove()
        .catch(() => undefined);
    await server.destroy();
  });
  const operator = await signUpAdmin(server);
  const a = operator.client;
  const member = await addMember(server, a, 'member@example.com', 'member');
  const stranger = await addMember(server, a, 'stranger@example.com', 'member');
  const other = await otherOrganization(server, stranger.userId);
  t.equal((await a.post('user.remove', { userId: stranger.userId })).status, 200, "the other organization's owner is no member of this one");
  const ok = async (c: Client, op: string, input: Record<string, unknown> = {}) => {
    const r = await c.post(op, input);
    if (r.status !== 200) throw new Error(`${op}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };

  const { environment } = await ok(a, 'project.create', { name: 'Guarded' });
  const app = await ok(a, 'application.create', { name: 'site', environmentId: environment.environmentId });
  services.push(app.appName);
  await ok(a, 'application.update', { applicationId: app.applicationId, command: 'sh', args: ['-c', SITE], stopGracePeriodSwarm: 1_000_000_000 });
  await ok(a, 'application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_BASE_IMAGE });
  const deployed = await runFinished(a, 'application.deploy', { applicationId: app.applicationId });
  t.equal(deployed.status, 'done', deployed.errorMessage ?? 'deployed');
  const domain = await ok(a, 'domain.create', { host: 'app.corp.test', applicationId: app.applicationId, port: 3000 });
  const answer = (what: string, path: string, accept: (r: Answer) => boolean, o: Parameters<typeof through>[3] = {}, host = 'app.corp.test') =>
    waitFor(
      what,
      async () => {
        const r = await through(httpPort, host, path, o);
        return r && accept(r) ? r : undefined;
      },
      { timeout: 30_000, interval: 250 },
    );
  await answer('the domain serves anyone before forward auth', '/', r => r.status === 200 && r.body.includes('guarded page'));

  t.test('the auth domain of this machine: the instance operators set it; Berth is its provider', async t => {
    const set = { serverId: null, authDomain: 'Auth.Corp.test', https: false, certificateType: 'none' };
    t.equal((await member.client.post('forwardAuth.setAuthDomain', set)).status, 403, 'a member: 403');
    t.equal((await other.client.post('forwardAuth.setAuthDomain', set)).status, 403, "another organization's owner: 403 (this machine's proxy)");
    t.equal((await a.post('forwardAuth.setAuthDomain', { ...set, authDomain: 'no_host' })).status, 400, 'not a host name: 400');
    const r = await a.post('forwardAuth.setAuthDomain', set);
    t.same(r.body, { callbackUrl: 'http://auth.corp.test/api/forward-auth/sign-in' }, 'the operator sets it (lower-cased)');
    t.same(data(await a.trpc('query', 'forwardAuth.getAuthDomain', { serverId: null })), {
      host: 'auth.corp.test',
      https: false,
      certificateType: 'none',
      customCertResolver: null,
      callbackUrl: 'http://auth.corp.test/api/forward-auth/sign-in',
    });
    t.equal((await other.client.get('forwardAuth.getAuthDomain', { serverId: 'no-such-server' })).status, 404, "a server that is not the caller's: 404");
    t.match(data(await a.get('forwardAuth.listProviders')), [{ providerId: 'berth' }]);
    t.match(data(await a.get('forwardAuth.serverStatus')), [{ serverId: null, status: 'stopped', authDomain: 'auth.corp.test' }]);
    t.same(data(await other.client.get('forwardAuth.serverStatus')), [], "another organization does not see this machine's proxy");
    const early = await a.post('forwardAuth.enable', { domainId: domain.domainId });
    t.equal(early.status, 400, 'enable before Berth answers the checks: 400');
    t.match(JSON.stringify(early.body.issues), /domainId/, 'naming domainId');
    const unknown = await a.post('forwardAuth.deployOnServer', { serverId: null, providerId: 'oidc-elsewhere' });
    t.equal(unknown.status, 400, 'another provider: 400');
    t.match(JSON.stringify(unknown.body.issues), /providerId/, 'naming providerId');
    t.same((await a.post('forwardAuth.deployOnServer', { serverId: null, providerId: 'berth' })).body, { ok: true });
    t.match(data(await a.get('forwardAuth.serverStatus')), [{ serverId: null, status: 'running' }]);
    const page = await answer('the sign-in page on the auth domain', '/api/forward-auth/sign-in', r => r.status === 200, {}, 'auth.corp.test');
    t.match(page.body, /<form method="post" action="\/api\/forward-auth\/sign-in">/, 'served through the proxy');
  });

  t.test('a guarded domain: 302 or 401 anonymous, served to a signed-in member only', async t => {
    t.equal((await other.client.post('forwardAuth.enable', { domainId: domain.domainId })).status, 404, "another organization cannot guard (or see) this organization's domain");
    t.equal((await other.client.get('forwardAuth.status', { domainId: domain.domainId })).status, 404);
    t.same((await member.client.post('forwardAuth.enable', { domainId: domain.domainId })).body, { ok: true }, "a member of the domain's organization enables it");
    t.same(data(await a.get('forwardAuth.status', { domainId: domain.domainId })), { enabled: true, role: 'member' });
    t.equal(data(await a.get('domain.one', { domainId: domain.domainId })).forwardAuthEnabled, true, 'domain.one says so');

    const browser = await answer('an anonymous browser is sent to sign in', '/x?y=1', r => r.status === 302, { headers: { accept: 'text/html' } });
    const location = new URL(browser.headers.location!);
    t.equal(`${location.origin}${location.pathname}`, 'http://auth.corp.test/api/forward-auth/sign-in', 'to the sign-in page on the auth domain');
    t.equal(location.searchParams.get('rd'), 'http://app.corp.test/x?y=1', 'carrying the original URL');
    const api = await through(httpPort, 'app.corp.test', '/', { headers: { accept: 'application/json' } });
    t.equal(api?.status, 401, 'an API client: 401');
    t.notMatch(api?.body ?? '', /guarded page/, 'nothing of the page');
    const spoofed = await through(httpPort, 'app.corp.test', '/cgi-bin/who', { headers: { 'Remote-User': member.userId, cookie: 'berth_forward_auth=forged' } });
    t.equal(spoofed?.status, 401, 'Remote-User and a forged cookie from the client get nowhere');

    const wrong = await through(httpPort, 'auth.corp.test', '/api/forward-auth/sign-in', { form: { email: 'member@example.com', password: 'not it', rd: location.searchParams.get('rd')! } });
    t.equal(wrong?.status, 401, 'a wrong password: 401');
    t.notOk(wrong?.headers['set-cookie'], 'and no cookie');
    const signed = await through(httpPort, 'auth.corp.test', '/api/forward-auth/sign-in', { form: { email: 'member@example.com', password: member.password, rd: location.searchParams.get('rd')! } });
    t.equal(signed?.status, 303, 'the member signs in');
    t.equal(signed?.headers.location, 'http://app.corp.test/x?y=1', 'and goes back to the original URL');
    const setCookie = signed!.headers['set-cookie']![0]!;
    t.match(setCookie, /^berth_forward_auth=[^;]+; Domain=corp\.test; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/, "scoped to the auth domain's parent, HttpOnly, Lax (not Secure over http)");
    const cookie = setCookie.split(';')[0]!;
    t.equal((await new Client(server.url, { token: cookie.slice(cookie.indexOf('=') + 1) }).get('user.get')).status, 401, "the cookie's value is no API credential");

    const served = await answer('the member is served', '/', r => r.status === 200, { headers: { cookie } });
    t.match(served.body, /guarded page/);
    const who = await through(httpPort, 'app.corp.test', '/cgi-bin/who', { headers: { cookie: `theme=dark; ${cookie}`, 'Remote-User': 'someone-else' } });
    t.match(
      who?.body,
      new RegExp(`user=${member.userId} email=member@example.com role=member cookie=theme=dark\\s*$`),
      "the application gets who signed in (the client's Remote-User replaced) and not Berth's cookie",
    );

    const abroad = await through(httpPort, 'auth.corp.test', '/api/forward-auth/sign-in', { form: { email: 'member@example.com', password: member.password, rd: 'http://evil.test/' } });
    t.equal(abroad?.status, 200, 'a return address that is no guarded domain of the member: signed in, not redirected');
    t.notOk(abroad?.headers.location);

    const strangerSigned = await through(httpPort, 'auth.corp.test', '/api/forward-auth/sign-in', {
      form: { email: 'stranger@example.com', password: stranger.password, rd: 'http://app.corp.test/' },
    });
    t.equal(strangerSigned?.status, 200, "another organization's member signs in, and is not sent to this organization's domain");
    const strangerCookie = strangerSigned!.headers['set-cookie']![0]!.split(';')[0]!;
    const refused = await through(httpPort, 'app.corp.test', '/', { headers: { cookie: strangerCookie } });
    t.equal(refused?.status, 403, "a member of another organization: 403 (the domain's own member above: 200)");
    t.notMatch(refused?.body ?? '', /guarded page/);
  });

  t.test('a role narrows it; signing out ends it; disabling serves anyone again', async t => {
    const signIn = async (email: string, password: string) =>
      (await through(httpPort, 'auth.corp.test', '/api/forward-auth/sign-in', { form: { email, password } }))!.headers['set-cookie']![0]!.split(';')[0]!;
    const memberCookie = await signIn('member@example.com', member.password);
    const ownerCookie = await signIn('admin@example.com', 'correct horse battery');
    t.same((await a.post('forwardAuth.enable', { domainId: domain.domainId, role: 'admin' })).body, { ok: true });
    t.equal((await answer('a member is refused once admin is asked', '/', r => r.status === 403, { headers: { cookie: memberCookie } })).status, 403);
    t.match((await through(httpPort, 'app.corp.test', '/', { headers: { cookie: ownerCookie } }))?.body, /guarded page/, 'the owner is served');
    t.same((await a.post('forwardAuth.enable', { domainId: domain.domainId })).body, { ok: true }, 'back to any member');
    await answer('the member is served again', '/', r => r.status === 200, { headers: { cookie: memberCookie } });

    // The cookie's session is a normal session: signing it out (auth.logout with its token) ends it.
    const token = server.kernel.container.cradle.secrets.decrypt(memberCookie.slice(memberCookie.indexOf('=') + 1));
    t.equal((await new Client(server.url, { token }).post('auth.logout')).status, 200);
    await answer('a signed-out session is refused', '/', r => r.status === 401, { headers: { cookie: memberCookie } });

    t.same((await member.client.post('forwardAuth.disable', { domainId: domain.domainId })).body, { ok: true });
    t.same(data(await a.get('forwardAuth.status', { domainId: domain.domainId })), { enabled: false, role: null });
    const open = await answer('anonymous served again once disabled', '/', r => r.status === 200);
    t.match(open.body, /guarded page/);
  });

  t.test('removing the auth domain: guarded domains are not served unchecked', async t => {
    t.same((await a.post('forwardAuth.enable', { domainId: domain.domainId })).body, { ok: true });
    t.equal((await member.client.post('forwardAuth.removeAuthDomain', { serverId: null })).status, 403, 'a member: 403');
    t.same((await a.post('forwardAuth.removeAuthDomain', { serverId: null })).body, { ok: true }, 'the operator removes it');
    t.equal(data(await a.get('forwardAuth.getAuthDomain', { serverId: '' })), null, 'none left (REST: "" is null)');
    const r = await answer('the guarded domain is no longer routed', '/', x => x.status === 404);
    t.notMatch(r.body, /guarded page/, 'the proxy has no route for it (never served without its check)');
    t.same((await a.post('forwardAuth.disable', { domainId: domain.domainId })).body, { ok: true });
    await answer('served again once disabled', '/', x => x.status === 200);
  });
});

t.test("Traefik's files: the domain's forward-auth middleware in the peer's layout", async t => {
  const forwardAuth = { upstream: 'gateway.test:3000', uri: '/api/forward-auth/verify?domainId=d7', copyHeaders: ['Remote-User', 'Remote-Email', 'Remote-Role'], cookie: 'berth_forward_auth' };
  const route = {
    domainId: 'd7',
    uniqueConfigKey: 7,
    host: 'app.corp.test',
    path: '/',
    internalPath: '/',
    stripPath: false,
    https: true,
    certificateType: 'letsencrypt' as const,
    customCertResolver: null,
    port: 3000,
    serviceName: null,
    customEntrypoint: null,
    middlewares: ['mine@file'],
    forwardAuth,
  };
  const w = { appName: 'site-abc', routes: [route], redirects: [], basicAuth: [] };
  t.same(workloadMiddlewares(w), {
    'forward-auth-site-abc-7': {
      forwardAuth: { address: 'http://gateway.test:3000/api/forward-auth/verify?domainId=d7', trustForwardHeader: true, authResponseHeaders: ['Remote-User', 'Remote-Email', 'Remote-Role'] },
    },
  });
  const routers = workloadFile(w)!.http!.routers!;
  t.same(routers['site-abc-router-websecure-7']!.middlewares, ['forward-auth-site-abc-7', 'mine@file'], "the gate before the domain's own middlewares, as the peer's");
  t.same(routers['site-abc-router-7']!.middlewares, ['redirect-to-https'], 'the plain-http router only redirects');
});
