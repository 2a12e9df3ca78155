// What each compose type ignores or refuses, said before anything runs. The stack lists are the
// Docker CLI's own (checked against `docker stack deploy` on the real engine in the last test).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { ignoredKeys, interpolatedVariables } from '../../src/file/index.ts';

const run = promisify(execFile);
const pick = (issues: { service: string | null; key: string; effect?: string }[]) => issues.map(i => `${i.service ?? '-'}:${i.key}:${i.effect}`);

t.test('a stack ignores build, depends_on, container_name, links, restart, network_mode ... with what to do instead', async t => {
  const issues = ignoredKeys(
    `
services:
  web:
    build: .
    image: shop/web
    container_name: web
    depends_on: [db]
    links: [db]
    restart: always
    network_mode: host
    privileged: true
    expose: ["80"]
  db:
    image: postgres
    ports: ["5432:5432"]
`,
    'stack',
  );
  t.same(pick(issues), [
    'web:build:ignored',
    'web:links:ignored',
    'web:network_mode:ignored',
    'web:privileged:ignored',
    'web:restart:ignored',
    'web:container_name:ignored',
    'web:expose:ignored',
    'web:depends_on:ignored',
    'db:ports:ignored',
  ]);
  t.match(issues.find(i => i.key === 'restart')!.reason, /deploy\.restart_policy/);
  t.match(issues.find(i => i.key === 'build')!.reason, /^Ignored by docker stack deploy: a stack deploys images only/);
  t.match(issues.find(i => i.key === 'ports')!.reason, /mode: host/);
});

t.test('a stack refuses extends, volumes_from and the old resource keys', async t => {
  const issues = ignoredKeys('services:\n  a: { image: x, extends: b, volumes_from: [b], mem_limit: 10m, cpu_shares: 2 }\n  b: { image: x }\n', 'stack');
  t.same(pick(issues), ['a:extends:refused', 'a:volumes_from:refused', 'a:cpu_shares:refused', 'a:mem_limit:refused']);
  t.match(issues.find(i => i.key === 'mem_limit')!.reason, /deploy\.resources\.limits\.memory/);
});

t.test('a stack never reads .env: the variables the file interpolates are named', async t => {
  t.same(interpolatedVariables('a: ${A}\nb: $B\nc: $${NOT}\nd: ${D:-x} ${A}\ne: $$'), ['A', 'B', 'D']);
  const issues = ignoredKeys('services:\n  a:\n    image: "shop:${TAG}"\n    environment: ["PW=${PASSWORD}"]\n', 'stack');
  t.same(pick(issues), ['-:.env:ignored']);
  t.match(issues[0]!.reason, /never reads a \.env file, so \$\{TAG\}, \$\{PASSWORD\} come only from the environment/);
  t.same(ignoredKeys('services:\n  a: { image: x, ports: [{ target: 80, published: 80, mode: host }] }\n', 'stack'), [], 'a clean stack file: nothing');
});

t.test('keys merged from an anchor count too', async t => {
  t.same(pick(ignoredKeys('x-b: &b\n  restart: always\nservices:\n  a:\n    <<: *b\n    image: x\n', 'stack')), ['a:restart:ignored']);
});

t.test('docker-compose ignores the swarm-only parts of deploy and refuses external secrets and configs', async t => {
  const issues = ignoredKeys(
    `
services:
  web:
    image: x
    deploy:
      replicas: 2
      resources: { limits: { memory: 64m } }
      placement: { constraints: [node.role == manager] }
      update_config: { parallelism: 1 }
      rollback_config: { parallelism: 1 }
      endpoint_mode: dnsrr
      labels: [a=b]
      mode: global
secrets:
  from_file: { file: ./pw }
  outside: { external: true }
configs:
  conf: { external: { name: real } }
`,
    'docker-compose',
  );
  t.same(pick(issues), [
    'web:deploy.placement:ignored',
    'web:deploy.update_config:ignored',
    'web:deploy.rollback_config:ignored',
    'web:deploy.endpoint_mode:ignored',
    'web:deploy.labels:ignored',
    'web:deploy.mode:ignored',
    '-:secrets.outside:refused',
    '-:configs.conf:refused',
  ]);
  t.same(ignoredKeys('services:\n  a: { image: x, build: ., depends_on: [b], restart: always }\n  b: { image: y }\n', 'docker-compose'), [], 'compose keeps what a stack drops');
});

t.test('the stack lists match what docker stack deploy itself reports (real CLI)', async t => {
  const dir = await mkdtemp(path.join(tmpdir(), 'berth-ignored-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const stack = `berth-ignored-${process.pid}`;
  t.teardown(async () => {
    await run('docker', ['stack', 'rm', stack]).catch(() => undefined);
  });
  const keys = ['build: .', 'links: [b]', 'restart: always', 'privileged: true', 'shm_size: 64m', 'container_name: c1', 'network_mode: bridge'];
  const file = path.join(dir, 'stack.yml');
  await writeFile(
    file,
    `version: "3.8"\nservices:\n  a:\n    image: berth-test/busybox:1\n    command: ["sleep", "600"]\n${keys.map(k => `    ${k}\n`).join('')}  b:\n    image: berth-test/busybox:1\n    command: ["sleep", "600"]\n`,
  );
  const text = await readFile(file, 'utf8');
  const said = await run('docker', ['stack', 'deploy', '--detach=true', '--resolve-image', 'never', '-c', file, stack], { timeout: 60_000 }).then(
    r => r.stdout + r.stderr,
    (e: { stdout?: string; stderr?: string }) => `${e.stdout ?? ''}${e.stderr ?? ''}`,
  );
  const ignoredByCli = (/Ignoring unsupported options: ([^\n]+)/.exec(said)?.[1] ?? '')
    .split(', ')
    .map(s => s.trim())
    .filter(Boolean);
  const deprecatedByCli = [...said.matchAll(/^(\w+): /gm)].map(m => m[1]!);
  const ours = ignoredKeys(text, 'stack').map(i => i.key);
  for (const key of [...ignoredByCli, ...deprecatedByCli]) t.ok(ours.includes(key), `docker reports ${key}; so does ignoredKeys`);
  t.ok(ignoredByCli.length >= 5, `the CLI reported its ignored options (${ignoredByCli.join(', ')})`);
});
