// The configuration as an operator meets it: every variable that existed before plugins declared
// their own keys still sets the same key; the documented sectioned file (docs/running-berth.md) and the old flat file give
// the same configuration (the flat one with one warning naming the sections); a disabled plugin's
// key is a warning, a bad value of an enabled one stops the boot naming the key and its variable;
// the generated reference is what the schemas say; a third party's plugin declares a key the same way.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { createKernel, type Kernel } from '@berth/core';
import { createTestDatabase, dataDirFor, signUpAdmin, startTestServer } from '@berth/core/testing';
import { resolveConfig } from '../core/src/loader.ts';
import { loadProvider } from '../core/src/provider-loader.ts';
import { builtinPlugins } from '../core/src/loader.ts';
import { configurationReference, referenceFile, renderReference } from '../scripts/config-reference.ts';
import { examplePlugin, repoRoot } from './helpers.ts';

/** Every variable of the configuration before this change (issue #26), with a value that is not its default, and what it sets. */
const variablesBefore: [env: string, value: string, key: string, expected: unknown][] = [
  ['PORT', '4100', 'port', 4100],
  ['HOST', '127.0.0.1', 'host', '127.0.0.1'],
  ['BERTH_PLUGINS', '', 'plugins', undefined], // set below: every built-in
  ['BERTH_EXTRA_PLUGINS', '', 'extraPlugins', []],
  ['BERTH_PROVIDERS', '{"builder":{"nixpacks":false}}', 'providers', { builder: { nixpacks: false } }],
  ['BERTH_SECRET', 's'.repeat(40), 'secret', 's'.repeat(40)],
  ['BERTH_LOG_LEVEL', 'silent', 'logLevel', 'silent'],
  ['BERTH_BODY_LIMIT', '2048', 'bodyLimit', 2048],
  ['BERTH_PUBLIC_URL', 'https://berth.example.com', 'publicUrl', 'https://berth.example.com'],
  ['BERTH_DB_POOL', '3', 'dbPoolSize', 3],
  ['BERTH_JOBS', 'false', 'jobs', false],
  ['BERTH_CHECK_RESPONSES', 'true', 'checkResponses', true],
  ['BERTH_SWARM_ADVERTISE_ADDR', '10.0.0.5', 'swarmAdvertiseAddr', '10.0.0.5'],
  ['BERTH_DEPLOY_CONCURRENCY', '3', 'deployConcurrency', 3],
  ['BERTH_DEPLOY_TIMEOUT', '600', 'deployTimeoutSeconds', 600],
  ['BERTH_DEPLOY_SETTLE', '1.5', 'deploySettleSeconds', 1.5],
  ['BERTH_DEPLOYMENTS_KEPT', '7', 'deploymentsKept', 7],
  ['BERTH_BACKUP_VERIFY', 'schedule', 'backupVerify', 'schedule'],
  ['BERTH_BACKUP_VERIFY_SCHEDULE', '0 3 * * *', 'backupVerifySchedule', '0 3 * * *'],
  ['BERTH_BACKUP_TICK', '30', 'backupTickSeconds', 30],
  ['BERTH_BACKUP_PASSPHRASE', 'p'.repeat(20), 'backupPassphrase', 'p'.repeat(20)],
  ['BERTH_BACKUP_HELPER_IMAGE', 'busybox:1', 'backupHelperImage', 'busybox:1'],
  ['BERTH_HOST_ACCESS', '{"bindMountRoots":["/srv"],"hostNetworks":true}', 'hostAccess', { bindMountRoots: ['/srv'], hostNetworks: true, localGit: false }],
  ['BERTH_PROXY', 'none', 'proxy', 'none'],
  ['BERTH_PROXY_IMAGE', 'caddy:2.7', 'proxyImage', 'caddy:2.7'],
  ['BERTH_PROXY_HTTP_PORT', '8080', 'proxyHttpPort', 8080],
  ['BERTH_PROXY_HTTPS_PORT', '8443', 'proxyHttpsPort', 8443],
  ['BERTH_SERVER_IP', '203.0.113.7', 'serverIp', '203.0.113.7'],
  ['BERTH_GENERATED_DOMAIN_BASE', 'nip.io', 'generatedDomainBase', 'nip.io'],
  ['BERTH_DNS_RESOLVER', '127.0.0.1:53', 'dnsResolver', '127.0.0.1:53'],
  ['BERTH_TEMPLATES', '/srv/templates', 'templatesSource', '/srv/templates'],
];
/** The two that became the static builder's options (its instance shows them). */
const staticBefore = { BERTH_STATIC_IMAGE: 'caddy:2', BERTH_STATIC_ROOT: '/srv/www' };

const boot = (env: NodeJS.ProcessEnv, config: Record<string, unknown> = {}): Promise<Kernel> => createKernel({ headless: true, env, config: { logLevel: 'silent', jobs: false, ...config } });

t.test('every variable that existed before sets the same key to the same value', async t => {
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const dataDir = dataDirFor(t);
  const env: NodeJS.ProcessEnv = { ...staticBefore, DATABASE_URL: db.url, BERTH_DATA_DIR: dataDir };
  for (const [name, value] of variablesBefore) env[name] = value;
  env.BERTH_PLUGINS = builtinPlugins().join(',');
  const kernel = await createKernel({ headless: true, env });
  t.teardown(() => kernel.stop());
  const config = kernel.config as unknown as Record<string, unknown>;
  for (const [name, , key, expected] of variablesBefore) {
    if (name === 'BERTH_PLUGINS') t.same(config.plugins, builtinPlugins(), name);
    else t.same(config[key], expected, `${name} → ${key}`);
  }
  t.equal(config.dataDir, dataDir, 'BERTH_DATA_DIR → dataDir');
  t.equal(config.databaseUrl, db.url, 'DATABASE_URL → databaseUrl');
  const staticBuilder = kernel.container.cradle.providers.get('builder', 'static') as unknown as { image: string; root: string };
  t.same({ image: staticBuilder.image, root: staticBuilder.root }, { image: 'caddy:2', root: '/srv/www' }, 'BERTH_STATIC_IMAGE and BERTH_STATIC_ROOT → the static builder');
  t.same(kernel.configWarnings, [], 'nothing to warn about');
  // Every variable is still declared, now by the package that owns its key, once.
  const declared = (await configurationReference()).flatMap(o => o.keys.map(k => k.env)).filter(Boolean);
  t.same(
    declared.filter((v, i) => declared.indexOf(v) !== i),
    [],
    'no variable is declared twice',
  );
  for (const name of [...variablesBefore.map(b => b[0]), ...Object.keys(staticBefore), 'BERTH_DATA_DIR', 'DATABASE_URL']) t.ok(declared.includes(name), `${name} is declared`);
});

/** A sectioned file as files were written before: every plugin's keys at the top level. */
function flatten(sectioned: Record<string, unknown>): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(sectioned)) {
    if (builtinPlugins().includes(key) && typeof value === 'object') Object.assign(flat, value);
    else flat[key] = value;
  }
  return flat;
}

/** The documented configuration example: the first json block of the section "Configuration" of docs/running-berth.md. */
function documentedExample(): Record<string, unknown> {
  const page = readFileSync(path.join(repoRoot, 'docs/running-berth.md'), 'utf8');
  const at = page.indexOf('\n## Configuration\n');
  if (at === -1) throw new Error('docs/running-berth.md: no section Configuration');
  const block = /```json\n([\s\S]*?)```/.exec(page.slice(at));
  if (!block) throw new Error('docs/running-berth.md: no json example in the section Configuration');
  return JSON.parse(block[1]!) as Record<string, unknown>;
}

/** The last commit of main before plugins declared their own keys (issue #26): the configuration every existing operator has. */
const BEFORE = 'f279919';
type OldLoad = (env: NodeJS.ProcessEnv) => Record<string, unknown>;
/** That commit's loadConfig, read from git (placed, for the time of the test, where its one dependency, typebox, resolves). */
async function loadConfigBefore(t: Test): Promise<OldLoad> {
  const file = path.join(repoRoot, 'core/test', `.config-before-${process.pid}.ts`);
  writeFileSync(file, execFileSync('git', ['show', `${BEFORE}:core/src/config.ts`], { cwd: repoRoot }));
  t.teardown(() => rmSync(file, { force: true }));
  return ((await import(file)) as { loadConfig: OldLoad }).loadConfig;
}

t.test('the documented example (docs/running-berth.md) and every variable give the configuration the Berth before gave, key by key', async t => {
  const before = await loadConfigBefore(t);
  const example = documentedExample();
  const dir = t.testdir({ 'sectioned.json': JSON.stringify(example), 'flat.json': JSON.stringify(flatten(example)) });
  const everyVariable: NodeJS.ProcessEnv = { ...staticBefore, BERTH_DATA_DIR: '/srv/berth-data', DATABASE_URL: 'postgresql://u:p@db:5432/berth' };
  for (const [name, value] of variablesBefore) everyVariable[name] = value;
  everyVariable.BERTH_PLUGINS = builtinPlugins().join(',');
  const cases: [string, NodeJS.ProcessEnv, NodeJS.ProcessEnv][] = [
    ['every variable', everyVariable, everyVariable],
    ['the documented file (the flat form before, the sectioned one now)', { BERTH_CONFIG: path.join(dir, 'flat.json') }, { BERTH_CONFIG: path.join(dir, 'sectioned.json') }],
    ['nothing set: the defaults', {}, {}],
  ];
  for (const [what, envBefore, envNow] of cases) {
    const old = before(envBefore);
    const { config } = await resolveConfig(envNow);
    const now = config as unknown as Record<string, unknown>;
    const staticBuilder = (await loadProvider(config, 'builder', 'static')) as unknown as { image: string; root: string };
    // Before, the static builder took its entry's options, else staticImage/staticRoot.
    const oldOptions = (old.providers as { builder?: { static?: { options?: { image?: string; root?: string } } } }).builder?.static?.options ?? {};
    for (const [key, value] of Object.entries(old)) {
      if (key === 'staticImage') t.same(staticBuilder.image, oldOptions.image ?? value, `${what}: the static builder's image`);
      else if (key === 'staticRoot') t.same(staticBuilder.root, oldOptions.root ?? value, `${what}: the static builder's root`);
      else if (key === 'backupHelperImage') t.equal(now[key], envBefore.BERTH_BACKUP_HELPER_IMAGE, `${what}: backupHelperImage (no test image as its default any more: issue #26)`);
      else if (key === 'swarmAdvertiseAddr')
        t.equal(now[key], value === '127.0.0.1' ? undefined : value, `${what}: swarmAdvertiseAddr (unset: the default route's address, no longer 127.0.0.1: issue #29)`);
      else t.same(now[key], value, `${what}: ${key}`);
    }
  }
});

t.test('the documented sectioned file and the same keys at the top level, as files were written before, give the same configuration', async t => {
  const example = documentedExample();
  const flat = flatten(example);
  t.ok(Object.keys(flat).length > Object.keys(example).length, 'the example has plugin sections');
  const dir = t.testdir({ 'sectioned.json': JSON.stringify(example), 'flat.json': JSON.stringify(flat) });
  const sectioned = await resolveConfig({ BERTH_CONFIG: path.join(dir, 'sectioned.json') });
  const old = await resolveConfig({ BERTH_CONFIG: path.join(dir, 'flat.json') });
  t.same(sectioned.warnings, [], 'the sectioned file: no warning');
  const keys = new Set([...Object.keys(sectioned.config), ...Object.keys(old.config)]);
  for (const key of keys) t.same((old.config as never)[key], (sectioned.config as never)[key], key);
  t.equal(old.warnings.length, 1, 'the flat file: one warning');
  for (const [key, value] of Object.entries(example)) {
    if (!builtinPlugins().includes(key)) continue;
    for (const inner of Object.keys(value as object)) t.match(old.warnings[0], `${inner} → ${key}`, `it names ${inner}'s section, ${key}`);
  }
});

t.test("a disabled plugin's keys are one warning and the boot goes on; a bad value of an enabled plugin's key stops it, naming key and variable", async t => {
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const dir = t.testdir({ 'berth.config.json': JSON.stringify({ backups: { backupTickSeconds: 30 }, backupVerify: 'never' }) });
  const plugins = builtinPlugins().filter(p => p !== 'backups');
  const env = { DATABASE_URL: db.url, BERTH_DATA_DIR: dataDirFor(t), BERTH_CONFIG: path.join(dir, 'berth.config.json'), BERTH_PLUGINS: plugins.join(','), BERTH_BACKUP_PASSPHRASE: 'p'.repeat(20) };
  const kernel = await boot(env);
  t.teardown(() => kernel.stop());
  t.equal(kernel.configWarnings.length, 1, 'one warning');
  t.match(kernel.configWarnings[0], /plugin backups is not enabled/);
  t.match(kernel.configWarnings[0], /"backupVerify"/);
  t.match(kernel.configWarnings[0], /section "backups"/);
  t.match(kernel.configWarnings[0], /BERTH_BACKUP_PASSPHRASE/);
  t.notOk(kernel.configWarnings[0]!.includes('p'.repeat(20)), 'the value of a variable is never in the warning');
  t.equal(kernel.config.backupTickSeconds, 60, "a disabled plugin's keys are not applied: its default stands, not the file's 30");
  t.equal(kernel.config.backupPassphrase, undefined, "nor the variable's value");

  const base = { DATABASE_URL: 'postgresql://127.0.0.1:1/never-opened', BERTH_DATA_DIR: dataDirFor(t) };
  await t.rejects(
    boot({ ...base, BERTH_DEPLOY_TIMEOUT: 'soon' }),
    { name: 'ConfigError', message: /BERTH_DEPLOY_TIMEOUT \(deployment\.deployTimeoutSeconds\) must be integer/ },
    'from the environment: the variable and the key',
  );
  const bad = t.testdir({
    'a.json': JSON.stringify({ deployment: { deployConcurrency: 99 } }),
    'b.json': JSON.stringify({ deployConcurrency: 0 }),
    'c.json': JSON.stringify({ deployment: { deployConcurency: 2 } }),
  });
  await t.rejects(
    boot({ ...base, BERTH_CONFIG: path.join(bad, 'a.json') }),
    { message: /"deployment\.deployConcurrency" in .*a\.json \(env BERTH_DEPLOY_CONCURRENCY\) must be <= 32/ },
    'from a section of the file',
  );
  await t.rejects(
    boot({ ...base, BERTH_CONFIG: path.join(bad, 'b.json') }),
    { message: /"deployConcurrency" in .*b\.json \(section deployment, env BERTH_DEPLOY_CONCURRENCY\) must be >= 1/ },
    'from the top level of the file',
  );
  await t.rejects(boot({ ...base, BERTH_CONFIG: path.join(bad, 'c.json') }), { message: /unknown key "deployment\.deployConcurency"/ }, 'a misspelt key of a section');
  await t.rejects(boot({ ...base, BERTH_STATIC_ROOT: 'relative' }), { message: /BERTH_STATIC_ROOT \(providers\.builder\.static\.options\.root\) must match/ }, "a provider option's variable");
});

t.test('docs/configuration.md is what the schemas say', async t => {
  const committed = readFileSync(referenceFile, 'utf8');
  t.equal(committed, renderReference(await configurationReference()), 'regenerate it with pnpm run docs:config');
  t.match(committed.split('\n')[0], /^<!-- Generated by `pnpm run docs:config`/);
});

t.test("the example plugin, loaded from outside Berth's tree, declares a key with its variable and reads it", async t => {
  const server = await startTestServer({ extraPlugins: [examplePlugin], bookmarksPerOrganization: 2 } as never);
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  for (const title of ['one', 'two']) t.equal((await client.post('bookmark.create', { url: 'https://example.com', title })).status, 200);
  const third = await client.post('bookmark.create', { url: 'https://example.com', title: 'three' });
  t.equal(third.status, 409);
  t.match(third.body.message, /keeps 2 bookmarks already \(config bookmarks\.bookmarksPerOrganization, env BERTH_BOOKMARKS_LIMIT\)/);
  // The variable, the section and a bad value, as for a built-in plugin, from a copy outside the repository.
  const outside = mkdtempSync(path.join(os.tmpdir(), 'berth-bookmarks-'));
  t.teardown(() => rmSync(outside, { recursive: true, force: true }));
  cpSync(examplePlugin, outside, { recursive: true, filter: f => !f.includes(`${path.sep}node_modules`) });
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const dir = t.testdir({ 'berth.config.json': JSON.stringify({ extraPlugins: [outside], bookmarks: { bookmarksPerOrganization: 7 } }) });
  const env = { DATABASE_URL: db.url, BERTH_DATA_DIR: dataDirFor(t), BERTH_CONFIG: path.join(dir, 'berth.config.json') };
  const fromFile = await boot(env);
  t.equal(fromFile.plugins.find(p => p.name === 'bookmarks')?.source, outside, 'the copy outside the repository is the plugin loaded');
  t.equal(fromFile.config.bookmarksPerOrganization, 7, 'the section "bookmarks" of the file');
  await fromFile.stop();
  const fromEnv = await boot({ ...env, BERTH_BOOKMARKS_LIMIT: '3' });
  t.equal(fromEnv.config.bookmarksPerOrganization, 3, 'BERTH_BOOKMARKS_LIMIT');
  await fromEnv.stop();
  await t.rejects(boot({ ...env, BERTH_BOOKMARKS_LIMIT: '0' }), { message: /BERTH_BOOKMARKS_LIMIT \(bookmarks\.bookmarksPerOrganization\) must be >= 1/ });
});
