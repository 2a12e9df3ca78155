// Every operation on a record reaches the engine of the record's host through hosts.of(serverId):
// a plugin's source calls hosts.local() only where the engine is provably this machine's own,
// each such place listed here with its reason. A new call (or one more in a listed file) fails.
import t from 'tap';
import { globSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** file → how many calls it may make, and why they are this machine's. */
const allowed: Record<string, { calls: number; reason: string }> = {
  'plugins/workloads/src/adoption.ts': { calls: 1, reason: 'relabels services made by Berth versions that only ran workloads on this machine' },
  'plugins/domain/src/routing.ts': { calls: 1, reason: 'the proxy runs on this machine (domains on a server are not served yet)' },
  'plugins/domain/src/settings-service.ts': { calls: 1, reason: "Berth's own domain: the proxy reaches Berth through this machine's docker_gwbridge" },
  'plugins/forward-auth/src/service.ts': {
    calls: 1,
    reason: "forward auth on this machine's proxy: the proxy reaches Berth's verify route through this machine's docker_gwbridge (a server's proxy: serverIp)",
  },
};

const LOCAL_CALL = /\bhosts(\(\))?\s*\.\s*local\s*\(/g;

t.test('hosts.local() is called only at the allowed places', async t => {
  const files = globSync('plugins/*/src/**/*.ts', { cwd: root })
    .filter(f => !f.startsWith('plugins/hosts/'))
    .sort();
  t.ok(files.length > 50, `${files.length} plugin source files read`);
  const found: Record<string, number> = {};
  for (const file of files) {
    const calls = readFileSync(path.join(root, file), 'utf8').match(LOCAL_CALL)?.length ?? 0;
    if (calls) found[file] = calls;
  }
  t.same(
    found,
    Object.fromEntries(Object.entries(allowed).map(([f, a]) => [f, a.calls])),
    "a record's engine is hosts.of(record.serverId); a call for what is this machine's own joins the allow-list with its reason",
  );
});

t.test('the pattern sees the forms the code uses', async t => {
  for (const text of ['await hosts.local()', 'this.cradle().hosts.local()', 'cradle.hosts.local().catch(() => null)', 'hosts\n  .local()']) {
    t.ok(text.match(LOCAL_CALL), text);
  }
  t.notOk('hosts.of(null)'.match(LOCAL_CALL));
});
