// The files Berth writes, checked by the real programs that will read them: every example template,
// and each transform of it (suffix, isolation, domains for Traefik and Caddy), is accepted by
// Debian's docker-compose (`config`) and by `docker stack config`; and each example template runs on
// the real engine from local images and answers, one of them isolated on its own network (each
// compose project is removed with its volumes and networks after).
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { parse } from 'yaml';
import { addSuffix, isolate, loadCatalog, processTemplate, withDomains, type ComposeDomainRoute } from '../../src/file/index.ts';

const exec = promisify(execFile);
const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../examples/templates');

/** A workload's directory as the compose plugin lays it out: code/ (the file, .env) and files/ (mounts). */
async function layout(root: string, compose: string, env: string[], mounts: { filePath: string; content: string }[]): Promise<string> {
  const code = path.join(root, 'code');
  await mkdir(code, { recursive: true });
  await writeFile(path.join(code, 'docker-compose.yml'), compose);
  await writeFile(path.join(code, '.env'), env.join('\n') + '\n');
  for (const m of mounts) {
    const file = path.join(root, 'files', m.filePath);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, m.content);
  }
  return code;
}

const envObject = (env: string[]) => Object.fromEntries(env.map(l => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));

async function composeConfig(code: string, file: string): Promise<Record<string, any>> {
  await writeFile(path.join(code, 'check.yml'), file);
  const { stdout } = await exec('docker-compose', ['-p', 'berth-config-check', '-f', path.join(code, 'check.yml'), '--env-file', path.join(code, '.env'), 'config'], { cwd: code });
  return parse(stdout) as Record<string, any>;
}

async function stackConfig(code: string, file: string, env: Record<string, string>): Promise<Record<string, any>> {
  await writeFile(path.join(code, 'check.yml'), file);
  const { stdout } = await exec('docker', ['stack', 'config', '-c', path.join(code, 'check.yml')], { cwd: code, env: { ...process.env, ...env } });
  return parse(stdout) as Record<string, any>;
}

t.test('every example template and each transform of it is a file docker-compose and docker stack accept', async t => {
  const root = await mkdtemp(path.join(tmpdir(), 'berth-compose-config-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const catalog = await loadCatalog(EXAMPLES);
  t.equal(catalog.length, 3);
  for (const { id } of catalog) {
    const tpl = await processTemplate(EXAMPLES, id, { domainBase: 'apps.example.com', appName: `tpl-${id}` });
    const code = await layout(path.join(root, id), tpl.compose, tpl.env, tpl.mounts);
    const routes: ComposeDomainRoute[] = tpl.domains.map((d, i) => ({
      ...d,
      https: true,
      uniqueConfigKey: i + 1,
      appName: `tpl-${id}`,
      certificateType: 'letsencrypt',
      stripPath: false,
      internalPath: '/',
    }));
    const variants: [string, string][] = [
      ['as written', tpl.compose],
      ['with a suffix', addSuffix(tpl.compose, 'abc123', 'berth-network')],
      ['isolated', isolate(tpl.compose, `tpl-${id}`, { volumes: true })],
      ['with Traefik labels', withDomains(tpl.compose, routes, { type: 'docker-compose', proxy: 'labels', platformNetwork: 'berth-network' })],
      ["with Caddy's alias", withDomains(tpl.compose, routes, { type: 'docker-compose', proxy: 'alias', platformNetwork: 'berth-network' })],
    ];
    for (const [what, file] of variants) {
      const config = await composeConfig(code, file);
      t.ok(Object.keys(config.services ?? {}).length > 0, `${id} ${what}: docker-compose config accepts it`);
    }
    const stack = await stackConfig(code, withDomains(tpl.compose, routes, { type: 'stack', proxy: 'labels', platformNetwork: 'berth-network' }), envObject(tpl.env));
    const routed = stack.services[tpl.domains[0]!.serviceName];
    t.ok(routed.deploy.labels['traefik.swarm.network'] === 'berth-network', `${id} as a stack with Traefik: docker stack config accepts it, labels under deploy`);
    t.equal(routed.deploy.endpoint_mode, 'dnsrr', `${id} as a stack: dnsrr`);
  }
});

t.test('each example template runs from local images and answers', async t => {
  const root = await mkdtemp(path.join(tmpdir(), 'berth-compose-run-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const ctx = { domainBase: 'apps.example.com', appName: 'tpl' };
  const up = async (id: string, isolated = false) => {
    const tpl = await processTemplate(EXAMPLES, id, ctx);
    const project = `berth-tpl-${process.pid}-${id}`;
    const code = await layout(path.join(root, id), isolated ? isolate(tpl.compose, project) : tpl.compose, tpl.env, tpl.mounts);
    const compose = (...args: string[]) =>
      exec('docker-compose', ['-p', project, '-f', path.join(code, 'docker-compose.yml'), '--env-file', path.join(code, '.env'), ...args], { cwd: code, timeout: 120_000 });
    t.teardown(() =>
      compose('down', '-v', '--remove-orphans', '-t', '1').then(
        () => undefined,
        () => undefined,
      ),
    );
    await compose('up', '-d');
    return { tpl, compose, env: envObject(tpl.env), project };
  };
  /** Runs a command in a service until it succeeds (the service may still be starting). */
  const inService = async (compose: Awaited<ReturnType<typeof up>>['compose'], service: string, ...cmd: string[]) => {
    let last = '';
    for (let i = 0; i < 40; i++) {
      try {
        return (await compose('exec', '-T', service, ...cmd)).stdout;
      } catch (e) {
        last = String((e as { stderr?: string }).stderr ?? e);
        await new Promise(r => setTimeout(r, 250));
      }
    }
    throw new Error(`${service}: ${cmd.join(' ')} never succeeded: ${last}`);
  };

  const hello = await up('hello-http', true);
  t.equal((await inService(hello.compose, 'hello', 'wget', '-qO-', 'http://127.0.0.1:8080/')).trim(), `Hello from ${hello.tpl.domains[0]!.host}`, 'hello-http answers its greeting on 8080');
  const net = await exec('docker', ['network', 'inspect', hello.project, '--format', '{{.Driver}} {{.Attachable}}']);
  t.equal(net.stdout.trim(), 'overlay true', "isolated: docker-compose made the stack's own attachable overlay network");

  const site = await up('static-site');
  t.match(await inService(site.compose, 'site', 'wget', '-qO-', 'http://127.0.0.1:80/index.html'), `<h1>Served by Berth at ${site.tpl.domains[0]!.host}</h1>`, 'static-site serves the mounted file');

  const redis = await up('web-redis');
  t.equal((await inService(redis.compose, 'cache', 'redis-cli', '-a', redis.env.REDIS_PASSWORD!, '--no-auth-warning', 'ping')).trim(), 'PONG', 'redis answers with the generated password');
  t.match(await inService(redis.compose, 'cache', 'redis-cli', 'ping'), /NOAUTH/, 'and refuses without it');
  const { stdout } = await redis.compose('ps', '-q', 'web');
  t.ok(stdout.trim(), 'the web front runs');
});
