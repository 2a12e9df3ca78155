import t from 'tap';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { loadConfig, ConfigError } from '../src/config.ts';
import { refuseUnknown } from '../src/config-sections.ts';
import { resolveConfig } from '../src/loader.ts';

t.test('defaults', async t => {
  const c = loadConfig({});
  t.equal(c.port, 3000);
  t.equal(c.host, '0.0.0.0');
  t.equal(c.dataDir, path.resolve('./data'));
  t.equal(c.databaseUrl, undefined, 'no DATABASE_URL = embedded database');
  t.equal(c.plugins, undefined, 'all built-in plugins');
  t.same(c.extraPlugins, []);
});

t.test('environment variables are read and converted', async t => {
  const c = loadConfig({ PORT: '8080', HOST: '127.0.0.1', BERTH_DATA_DIR: '/var/lib/berth', DATABASE_URL: 'postgresql://u:p@db:5432/berth', BERTH_PLUGINS: 'auth, user,project', BERTH_JOBS: 'false' });
  t.equal(c.port, 8080);
  t.equal(c.host, '127.0.0.1');
  t.equal(c.dataDir, '/var/lib/berth');
  t.equal(c.databaseUrl, 'postgresql://u:p@db:5432/berth');
  t.same(c.plugins, ['auth', 'user', 'project']);
  t.equal(c.jobs, false);
});

t.test('a file named by BERTH_CONFIG, overridden by the environment; its paths are relative to it', async t => {
  const dir = t.testdir({ 'berth.config.json': JSON.stringify({ port: 4000, dataDir: 'state', extraPlugins: ['./my-plugin', 'some-package'] }) });
  const file = path.join(dir, 'berth.config.json');
  const c = loadConfig({ BERTH_CONFIG: file });
  t.equal(c.port, 4000);
  t.equal(c.dataDir, path.join(dir, 'state'));
  t.same(c.extraPlugins, [path.join(dir, 'my-plugin'), 'some-package']);
  t.equal(loadConfig({ BERTH_CONFIG: file, PORT: '5000' }).port, 5000);
});

t.test('bad values are refused with the key named', async t => {
  t.throws(() => loadConfig({ PORT: 'eighty' }), { name: 'ConfigError', message: /PORT/ });
  t.throws(() => loadConfig({ PORT: '70000' }), /PORT must be <= 65535/);
  t.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /DATABASE_URL/);
  t.throws(() => loadConfig({ BERTH_LOG_LEVEL: 'loud' }), /BERTH_LOG_LEVEL/);
  t.throws(() => loadConfig({ BERTH_SECRET: 'short' }), /BERTH_SECRET/);
  const dir = t.testdir({ 'a.json': JSON.stringify({ prot: 1 }), 'b.json': '{not json', 'c.json': JSON.stringify({ port: 'x' }) });
  const { config } = await resolveConfig({ BERTH_CONFIG: path.join(dir, 'a.json') });
  t.throws(() => refuseUnknown(config), /unknown key "prot"/, 'a key no package declares');
  t.throws(() => loadConfig({ BERTH_CONFIG: path.join(dir, 'b.json') }), /cannot read/);
  t.throws(() => loadConfig({ BERTH_CONFIG: path.join(dir, 'c.json') }), /"port" in .*c\.json/);
  t.ok(new ConfigError('x') instanceof Error);
  writeFileSync(path.join(dir, 'unused'), '');
});

t.test("plugin sections: a key belongs to one package; the file's section, the environment and the old top level feed it", async t => {
  const { applySections } = await import('../src/config-sections.ts');
  const { default: Type } = await import('typebox');
  const a = { name: 'alpha', owner: 'pkg-alpha', enabled: true, schema: Type.Object({ size: Type.Integer({ env: 'T_SIZE', minimum: 1, default: 2 }) }) };
  const b = { name: 'beta', owner: 'pkg-beta', enabled: false, schema: Type.Object({ size: Type.Integer({ default: 3 }) }) };
  t.throws(() => applySections(loadConfig({}), [a, b]), { name: 'ConfigError', message: /the key size is declared by both pkg-alpha and pkg-beta/ });
  const kernelKey = { ...b, schema: Type.Object({ port: Type.Integer() }) };
  t.throws(() => applySections(loadConfig({}), [kernelKey]), /pkg-beta declares the key port, which is the kernel's/);
  const dir = t.testdir({ 'top.json': JSON.stringify({ size: 5 }), 'both.json': JSON.stringify({ size: 5, alpha: { size: 6 } }) });
  const top = loadConfig({ BERTH_CONFIG: path.join(dir, 'top.json') });
  t.match(applySections(top, [a]), [/top-level keys that now belong to a plugin's section.*size → alpha/]);
  t.equal((top as unknown as { size: number }).size, 5);
  const both = loadConfig({ BERTH_CONFIG: path.join(dir, 'both.json') });
  applySections(both, [a]);
  t.equal((both as unknown as { size: number }).size, 6, 'the section wins over the old top level');
  const env = loadConfig({ BERTH_CONFIG: path.join(dir, 'both.json'), T_SIZE: '7' });
  applySections(env, [a]);
  t.equal((env as unknown as { size: number }).size, 7, 'the environment wins over the file');
  const defaults = loadConfig({});
  t.same(applySections(defaults, [a]), [], 'nothing set: no warning');
  t.equal((defaults as unknown as { size: number }).size, 2, 'the default');
});
