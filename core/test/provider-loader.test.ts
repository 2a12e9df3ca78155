// Which providers a config enables, before anything is imported: every built-in unless set to
// false, third parties by `resolve`, paths relative to the config file, the environment's JSON,
// and the bad key named.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { loadConfig } from '../src/config.ts';
import { builtinProviders, enabledProviders, providersDir } from '../src/provider-loader.ts';

const names = (list: { contract: string; id: string }[]) => list.map(p => `${p.contract}.${p.id}`).sort();

t.test('the built-in providers come from the package.json of providers/, libraries left out', async t => {
  t.same(names(builtinProviders()), [
    'ai.anthropic',
    'ai.ollama',
    'ai.openai',
    'builder.dockerfile',
    'builder.heroku_buildpacks',
    'builder.nixpacks',
    'builder.paketo_buildpacks',
    'builder.railpack',
    'builder.static',
    'database.libsql',
    'database.mariadb',
    'database.mongo',
    'database.mysql',
    'database.postgres',
    'database.redis',
    'git.bitbucket',
    'git.gitea',
    'git.github',
    'git.gitlab',
    'host.local',
    'host.ssh',
    'notify.custom',
    'notify.discord',
    'notify.email',
    'notify.gotify',
    'notify.lark',
    'notify.mattermost',
    'notify.ntfy',
    'notify.pushover',
    'notify.resend',
    'notify.slack',
    'notify.teams',
    'notify.telegram',
    'persistence.embedded',
    'proxy.caddy',
    'proxy.traefik',
    'source.docker',
    'source.drop',
    'source.git',
    'storage.local',
    'storage.s3',
  ]);
});

t.test('every built-in is enabled by default; false disables one, which is then never imported', async t => {
  t.same(names(enabledProviders({})), names(builtinProviders()));
  const fewer = enabledProviders({ builder: { nixpacks: false }, database: { mongo: false } });
  t.notOk(names(fewer).includes('builder.nixpacks'));
  t.notOk(names(fewer).includes('database.mongo'));
  t.notOk(
    fewer.some(p => p.url.includes('/builder-nixpacks/') || p.url.includes('/database-mongo/')),
    'its entry file is not among those imported',
  );
  t.equal(fewer.length, builtinProviders().length - 2);
  const withOptions = enabledProviders({ builder: { static: { options: { image: 'caddy:2' } } } }).find(p => p.id === 'static');
  t.same(withOptions?.options, { image: 'caddy:2' });
  t.ok(withOptions?.url.startsWith(pathToFileURL(providersDir).href), 'a built-in is imported from providers/');
});

t.test("a third party's provider comes from resolve, and may replace a built-in", async t => {
  const dir = t.testdir({ p: { 'package.json': JSON.stringify({ name: 'p', type: 'module', main: 'main.js' }), 'main.js': '' } });
  const list = enabledProviders({ source: { svn: { resolve: path.join(dir, 'p'), options: { depth: 1 } } }, builder: { static: { resolve: path.join(dir, 'p') } } });
  const svn = list.find(p => p.id === 'svn');
  t.equal(svn?.url, pathToFileURL(path.join(dir, 'p', 'main.js')).href, "the package's main");
  t.same(svn?.options, { depth: 1 });
  t.equal(list.filter(p => p.id === 'static').length, 1, 'one builder.static');
  t.equal(list.find(p => p.id === 'static')?.source, path.join(dir, 'p'), "the third party's, instead of the built-in");
  t.throws(() => enabledProviders({ builder: { make: {} } }), {
    name: 'ConfigError',
    message: /providers\.builder\.make is not a built-in provider \(built-in builder providers: dockerfile, .*static\); a third party's needs "resolve"/,
  });
  t.throws(() => enabledProviders({ source: { svn: { resolve: 'no-such-package-anywhere' } } }), /Cannot find provider package "no-such-package-anywhere"/);
});

t.test('a package name is found in node_modules from the working directory upwards', async t => {
  const dir = t.testdir({
    node_modules: { 'berth-provider-source-svn': { 'package.json': JSON.stringify({ name: 'berth-provider-source-svn', type: 'module', exports: { '.': './index.js' } }), 'index.js': '' } },
    app: {},
  });
  const cwd = process.cwd();
  process.chdir(path.join(dir, 'app'));
  t.teardown(() => process.chdir(cwd));
  const svn = enabledProviders({ source: { svn: { resolve: 'berth-provider-source-svn' } } }).find(p => p.id === 'svn');
  t.equal(svn?.url, pathToFileURL(path.join(dir, 'node_modules/berth-provider-source-svn/index.js')).href, 'its exports["."]');
});

t.test("the config: a file's relative resolve is relative to it; the environment gives JSON; bad keys are named", async t => {
  const dir = t.testdir({
    'berth.config.json': JSON.stringify({ providers: { database: { pgcompat: { resolve: './providers/pgcompat' } }, builder: { nixpacks: false } } }),
    'bad.json': JSON.stringify({ providers: { builder: { static: { option: {} } } } }),
    'bad-id.json': JSON.stringify({ providers: { builder: { 'Not-An-Id': false } } }),
  });
  const c = loadConfig({ BERTH_CONFIG: path.join(dir, 'berth.config.json') });
  t.same(c.providers, { database: { pgcompat: { resolve: path.join(dir, 'providers/pgcompat') } }, builder: { nixpacks: false } });
  t.same(loadConfig({}).providers, {}, 'default: nothing over the built-ins');
  t.same(loadConfig({ BERTH_PROVIDERS: '{"builder":{"railpack":false}}' }).providers, { builder: { railpack: false } });
  t.throws(() => loadConfig({ BERTH_PROVIDERS: '{builder' }), { name: 'ConfigError', message: /BERTH_PROVIDERS must be JSON/ });
  t.throws(() => loadConfig({ BERTH_CONFIG: path.join(dir, 'bad.json') }), { name: 'ConfigError', message: /"providers" in .*bad\.json at providers\.builder\.static/ });
  t.throws(() => loadConfig({ BERTH_CONFIG: path.join(dir, 'bad-id.json') }), {
    name: 'ConfigError',
    message: /"providers" in .*bad-id\.json at providers\.builder\.Not-An-Id is not an allowed name/,
  });
});
