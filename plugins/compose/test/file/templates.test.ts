// Templates: the variable helpers (lengths, formats), the catalog read from a directory and from a
// real HTTP server serving that directory, and processTemplate's env, mounts and domains.
import { createHmac } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { loadCatalog, processTemplate, processTemplateBase64 } from '../../src/file/index.ts';
import {
  generateBase64,
  generateDomain,
  generateEmail,
  generateHash,
  generateJwt,
  generatePassword,
  generatePort,
  generateUsername,
  processValue,
  processVariables,
} from '../../src/file/template-variables.ts';

const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../examples/templates');
const ctx = { domainBase: 'apps.example.com', appName: 'shop-1a2b' };
const b64urlJson = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;

t.test('helpers: lengths and alphabets', async t => {
  t.match(generatePassword(), /^[a-z0-9]{16}$/);
  t.match(generatePassword(40), /^[a-z0-9]{40}$/);
  t.match(generateHash(), /^[0-9a-f]{8}$/);
  t.match(generateHash(5), /^[0-9a-f]{5}$/);
  t.equal(Buffer.from(generateBase64(), 'base64').length, 32);
  t.equal(Buffer.from(generateBase64(12), 'base64').length, 12);
  for (let i = 0; i < 50; i++) {
    const port = generatePort();
    t.ok(Number.isInteger(port) && port >= 1024 && port <= 65535, `port ${port}`);
  }
  t.match(generateUsername(), /^[a-z]+_[a-z]+\d{2}$/);
  t.match(generateEmail(), /^[a-z]+\.[a-z]+\d{2}@example\.com$/);
  t.not(generatePassword(), generatePassword(), 'random each time');
});

t.test('helpers: a domain under the base, or sslip.io for an IP', async t => {
  t.match(generateDomain(ctx), /^shop-1a2b-[0-9a-f]{6}\.apps\.example\.com$/);
  t.match(generateDomain({ domainBase: '203.0.113.7', appName: 'Shop_App' }), /^shop-app-[0-9a-f]{6}-203-0-113-7\.sslip\.io$/);
  t.match(generateDomain({ domainBase: '', appName: 'x'.repeat(80) }), new RegExp(`^${'x'.repeat(40)}-[0-9a-f]{6}-127-0-0-1\\.sslip\\.io$`), 'long names are cut to 40');
});

t.test('helpers: a JWT signed with HS256, or N random bytes in hex', async t => {
  const token = generateJwt({ secret: 's3cret', payload: { role: 'anon' } });
  const [header, payload, signature] = token.split('.');
  t.same(b64urlJson(header!), { alg: 'HS256', typ: 'JWT' });
  t.match(b64urlJson(payload!), { role: 'anon', iss: 'berth' });
  t.equal(signature, createHmac('sha256', 's3cret').update(`${header}.${payload}`).digest('base64url'));
  t.match(generateJwt({ length: 16 }), /^[0-9a-f]{32}$/);
});

t.test('processValue: every helper and references; unknown names stay for compose', async t => {
  const vars = { user: 'admin', pw: 'x' };
  const out = processValue('${password:10}|${base64:6}|${hash:4}|${uuid}|${randomPort}|${email}|${username}|${user}|${UNKNOWN}|${timestamps:2030-01-01T00:00:00Z}', vars, ctx).split('|');
  t.match(out[0], /^[a-z0-9]{10}$/);
  t.equal(Buffer.from(out[1]!, 'base64').length, 6);
  t.match(out[2], /^[0-9a-f]{4}$/);
  t.match(out[3], /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.ok(Number(out[4]) >= 1024 && Number(out[4]) <= 65535);
  t.match(out[5], /@example\.com$/);
  t.match(out[6], /^[a-z]+_[a-z]+\d{2}$/);
  t.equal(out[7], 'admin');
  t.equal(out[8], '${UNKNOWN}');
  t.equal(out[9], String(Date.parse('2030-01-01T00:00:00Z') / 1000));
  t.match(processValue('${jwt}', {}, ctx), /^[\w-]+\.[\w-]+\.[\w-]+$/);
});

t.test('processVariables: each generated once, references followed in any order, jwt from other variables', async t => {
  const vars = processVariables(
    {
      url: 'postgres://app:${db_password}@db:5432/${db_name}',
      db_password: '${password:20}',
      db_name: 'shop',
      main_domain: '${domain}',
      public_url: 'https://${main_domain}/',
      secret: '${base64:32}',
      payload: '{"role":"anon"}',
      anon_key: '${jwt:secret:payload}',
      port: 8080 as unknown as string,
    },
    ctx,
  );
  t.match(vars.db_password, /^[a-z0-9]{20}$/);
  t.equal(vars.url, `postgres://app:${vars.db_password}@db:5432/shop`, 'the url reads the generated password, not a second one');
  t.equal(vars.public_url, `https://${vars.main_domain}/`);
  t.equal(vars.port, '8080');
  const [h, p, s] = vars.anon_key!.split('.');
  t.match(b64urlJson(p!), { role: 'anon' });
  t.equal(s, createHmac('sha256', vars.secret!).update(`${h}.${p}`).digest('base64url'), 'signed with the secret variable');
  const cycle = processVariables({ a: '${b}', b: '${a}' }, ctx);
  t.ok(
    Object.values(cycle).every(v => /^\$\{[ab]\}$/.test(v)),
    'a cycle ends, its references left unresolved',
  );
});

const expected = ['hello-http', 'static-site', 'web-redis'];

t.test('the catalog from a directory: its meta.json, or its blueprints when there is none', async t => {
  const catalog = await loadCatalog(EXAMPLES);
  t.same(
    catalog.map(c => c.id),
    expected,
  );
  t.match(catalog[0], { id: 'hello-http', name: 'Hello HTTP', version: '1', logo: null, links: {}, tags: ['example', 'http'] });
  const scanned = t.testdir({
    blueprints: { beta: { 'meta.json': JSON.stringify({ id: 'beta', name: 'Beta', tags: ['x'], logo: 'beta.svg' }) }, alpha: { 'docker-compose.yml': 'services: {}' }, '..hidden': {} },
  });
  const list = await loadCatalog(scanned);
  t.same(
    list.map(c => [c.id, c.name, c.logo, c.description, c.version]),
    [
      ['alpha', 'alpha', null, '', 'latest'],
      ['beta', 'Beta', 'beta.svg', '', 'latest'],
    ],
  );
  await t.rejects(loadCatalog(t.testdir({})), /neither a meta\.json nor a blueprints\/ directory/);
  await t.rejects(loadCatalog(t.testdir({ 'meta.json': '{"not": "a list"}' })), /must be a list/);
  await t.rejects(loadCatalog(t.testdir({ 'meta.json': '[{' })), /not valid JSON/);
  await t.rejects(loadCatalog('relative/dir'), /absolute directory or an http/);
});

t.test("meta.json of the examples lists exactly the blueprints' own meta.json", async t => {
  const list = JSON.parse(await readFile(path.join(EXAMPLES, 'meta.json'), 'utf8')) as unknown[];
  for (const id of expected) {
    const own = JSON.parse(await readFile(path.join(EXAMPLES, 'blueprints', id, 'meta.json'), 'utf8')) as { id: string };
    t.same(
      list.find(m => (m as { id: string }).id === id),
      own,
      id,
    );
  }
  t.equal(list.length, expected.length);
});

/** A real HTTP server serving a directory, counting what it was asked for. */
async function serve(t: Test, root: string): Promise<{ url: string; asked: string[] }> {
  const asked: string[] = [];
  const answer = async (url: string | undefined): Promise<{ status: number; body: string | Buffer }> => {
    const rel = decodeURIComponent(new URL(url ?? '/', 'http://x').pathname).replace(/^\/+/, '');
    asked.push(rel);
    const file = path.resolve(root, rel);
    if (!file.startsWith(root + path.sep) || !(await stat(file).catch(() => null))?.isFile()) return { status: 404, body: 'not found' };
    return { status: 200, body: await readFile(file) };
  };
  // A failed read answers 500, so the client sees it, instead of a rejection nobody handles.
  const server: Server = createServer((req, res) => {
    answer(req.url).then(
      ({ status, body }) => res.writeHead(status, { 'content-type': 'text/plain' }).end(body),
      (e: Error) => res.writeHead(500).end(e.message),
    );
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>(resolve => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked };
}

t.test('the catalog and a template from a real HTTP server serving the directory', async t => {
  const { url, asked } = await serve(t, EXAMPLES);
  const catalog = await loadCatalog(`${url}/`);
  t.same(
    catalog.map(c => c.id),
    expected,
  );
  const hello = await processTemplate(url, 'hello-http', ctx);
  t.ok(asked.includes('blueprints/hello-http/template.toml') && asked.includes('blueprints/hello-http/docker-compose.yml'), 'the files came over HTTP');
  t.match(hello.compose, /image: berth-test\/busybox:1/);
  await t.rejects(processTemplate(url, 'no-such-template', ctx), /not in the source/);
  const empty = await serve(t, t.testdir({}));
  await t.rejects(loadCatalog(empty.url), /has no meta\.json/);
  await t.rejects(loadCatalog('http://127.0.0.1:1'), /did not answer/);
});

t.test('processTemplate: env, domains and mounts with the variables generated once', async t => {
  const hello = await processTemplate(EXAMPLES, 'hello-http', ctx);
  t.equal(hello.domains.length, 1);
  const [domain] = hello.domains;
  t.match(domain, { serviceName: 'hello', port: 8080, path: '/' });
  t.match(domain!.host, /^shop-1a2b-[0-9a-f]{6}\.apps\.example\.com$/);
  t.same(hello.env[0], `GREETING=Hello from ${domain!.host}`, 'the env reads the same generated domain');
  t.match(hello.env[1], /^APP_SECRET=[A-Za-z0-9+/]{43}=$/);
  t.same(hello.mounts, []);
  t.equal(hello.isolated, false);

  const site = await processTemplate(EXAMPLES, 'static-site', ctx);
  t.equal(site.mounts.length, 1);
  t.equal(site.mounts[0]!.filePath, 'site/index.html');
  const id = /^SITE_ID=(.+)$/.exec(site.env[0]!)?.[1];
  t.ok(id && site.mounts[0]!.content.includes(`site ${id}`), 'the mount and the env share the uuid');
  t.ok(site.mounts[0]!.content.includes(`<h1>Served by Berth at ${site.domains[0]!.host}</h1>`));

  const redis = await processTemplate(EXAMPLES, 'web-redis', ctx);
  t.match(redis.env, [/^REDIS_PASSWORD=[a-z0-9]{24}$/]);
  t.same(
    redis.domains.map(d => [d.serviceName, d.port]),
    [['web', 80]],
  );
});

t.test("processTemplate: the template format's other forms, and what it refuses", async t => {
  const dir = t.testdir({
    blueprints: {
      listenv: {
        'docker-compose.yml': 'services:\n  app: { image: x }\n',
        'template.toml':
          '[variables]\npw = "${password:8}"\n\n[config]\nisolated = true\nenv = ["A=${pw}", { B = "b-${pw}" }, "PLAIN"]\n\n[[config.domains]]\nserviceName = "app"\nport = 3000\npath = "/api"\n',
      },
      nohost: { 'docker-compose.yml': 'services:\n  app: { image: x }\n', 'template.toml': '[config]\n[[config.domains]]\nport = 80\n' },
      escape: { 'docker-compose.yml': 'services:\n  app: { image: x }\n', 'template.toml': '[config]\n[[config.mounts]]\nfilePath = "../../etc/cron.d/x"\ncontent = "boom"\n' },
      absolute: { 'docker-compose.yml': 'services:\n  app: { image: x }\n', 'template.toml': '[config]\n[[config.mounts]]\nfilePath = "/etc/passwd"\ncontent = "boom"\n' },
      badtoml: { 'docker-compose.yml': 'services:\n  app: { image: x }\n', 'template.toml': '[config\n' },
      badyaml: { 'docker-compose.yml': 'services:\n  - app\n', 'template.toml': '' },
      badport: { 'docker-compose.yml': 'services:\n  app: { image: x }\n', 'template.toml': '[config]\n[[config.domains]]\nserviceName = "app"\nport = 0\n' },
    },
  });
  const list = await processTemplate(dir, 'listenv', ctx);
  const pw = list.env[0]!.slice(2);
  t.match(pw, /^[a-z0-9]{8}$/);
  t.same(list.env, [`A=${pw}`, `B=b-${pw}`, 'PLAIN']);
  t.match(list.domains, [{ serviceName: 'app', port: 3000, path: '/api', host: /^shop-1a2b-[0-9a-f]{6}\.apps\.example\.com$/ }], 'a domain without a host gets a generated one');
  t.equal(list.isolated, true);
  t.same((await processTemplate(dir, 'nohost', ctx)).domains, [], 'no domain names a service: none');
  await t.rejects(processTemplate(dir, 'escape', ctx), /relative path inside the workload's files/);
  await t.rejects(processTemplate(dir, 'absolute', ctx), /relative path inside/);
  await t.rejects(processTemplate(dir, 'badtoml', ctx), /template\.toml is not valid TOML/);
  await t.rejects(processTemplate(dir, 'badyaml', ctx), /docker-compose\.yml: "services" must be a mapping/);
  await t.rejects(processTemplate(dir, 'badport', ctx), /port 0, not one of 1-65535/);
  await t.rejects(processTemplate(dir, '../blueprints', ctx), /not a template id/);
});

t.test("processTemplateBase64: the peer's import input, base64 of {compose, config}; APP_NAME is the appName", async t => {
  const compose = 'services:\n  app:\n    image: berth-test/busybox:1\n    environment: ["NAME=${NAME}"]\n';
  const config = '[variables]\nname = "${APP_NAME}-${hash:4}"\n\n[config]\nenv = ["NAME=${name}"]\n';
  const out = processTemplateBase64(Buffer.from(JSON.stringify({ compose, config })).toString('base64'), ctx);
  t.equal(out.compose, compose);
  t.match(out.env, [/^NAME=shop-1a2b-[0-9a-f]{4}$/]);
  t.throws(() => processTemplateBase64('not base64 json', ctx), /not base64 of a JSON object/);
  t.throws(() => processTemplateBase64(Buffer.from('{"compose": ""}').toString('base64'), ctx), /must hold "compose"/);
});
