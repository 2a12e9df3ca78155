// Compose stacks deployed for real, through the API, on the real Docker engine: both compose
// types deploy a two-service stack with a named volume, stop, start, redeploy with a changed
// file, and delete with or without its volumes; a custom command runs and a refused one is a
// 400 naming `command`; the deploy log starts with what the type ignores.
import t from 'tap';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, deploymentFinished, deploymentIdOf, freePort, waitFor, makeGitRepo, commitFiles, TEST_BASE_IMAGE, type Client } from '@berth/core/testing';

const docker = new Docker();
t.setTimeout(900_000);

async function get(port: number): Promise<string | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) });
    return res.status === 200 ? await res.text() : undefined;
  } catch {
    return undefined;
  }
}
const served = (port: number, expect: RegExp) =>
  waitFor(
    `port ${port} serving ${expect}`,
    async () => {
      const body = await get(port);
      return body && expect.test(body) ? body : undefined;
    },
    { timeout: 60_000, interval: 200 },
  );
const unreachable = (port: number) => waitFor(`nothing on port ${port}`, async () => (await get(port)) === undefined, { timeout: 60_000, interval: 200 });

/** Two services sharing a named volume: web serves what it wrote there, worker ticks into it. */
const stackFile = (port: number, message: string) => `# a comment that must survive
services:
  web:
    image: ${TEST_BASE_IMAGE}
    init: true
    stop_grace_period: 1s
    command: ["sh", "-c", "mkdir -p /data/www && echo \\"${message} \${GREETING}\\" > /data/www/index.html && exec httpd -f -p 8080 -h /data/www"]
    ports:
      - target: 8080
        published: ${port}
        mode: host
    volumes:
      - data:/data
    deploy:
      endpoint_mode: dnsrr
  worker:
    image: ${TEST_BASE_IMAGE}
    init: true
    stop_grace_period: 1s
    depends_on: [web]
    command: ["sh", "-c", "while true; do date > /data/tick; sleep 1; done"]
    volumes:
      - data:/data
    deploy:
      endpoint_mode: dnsrr
volumes:
  data: {}
`;

const label = (type: string, project: string) => `${type === 'stack' ? 'com.docker.stack.namespace' : 'com.docker.compose.project'}=${project}`;
const volumesOf = async (type: string, project: string) => ((await docker.listVolumes({ filters: { label: [label(type, project)] } })).Volumes ?? []).map(v => v.Name);
const containersOf = (type: string, project: string) => docker.listContainers({ all: true, filters: { label: [label(type, project)] } });

async function run(client: Client, op: string, composeId: string, status = 'done') {
  const res = await client.post(op, { composeId });
  if (res.status !== 200) throw new Error(`${op}: ${res.status} ${JSON.stringify(res.body)}`);
  const deployment = await deploymentFinished(client, deploymentIdOf(res));
  const log = (await client.get('deployment.readLogs', { deploymentId: deployment.deploymentId })).body;
  if (deployment.status !== status) throw new Error(`${op} ended ${deployment.status}: ${deployment.errorMessage}\n${typeof log === 'string' ? log : JSON.stringify(log)}`);
  return { deployment, log: typeof log === 'string' ? log : JSON.stringify(log) };
}

t.test('compose stacks on the real engine', async t => {
  // The git test reads a repository of this host: the operator grants that.
  const server = await startTestServer({ deploySettleSeconds: 1, hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: true } });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Stacks' });
  const cleanup: (() => Promise<unknown>)[] = [];
  t.teardown(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => {});
  });

  for (const type of ['docker-compose', 'stack'] as const) {
    t.test(`${type}: deploy, stop, start, redeploy, delete`, async t => {
      const port = await freePort();
      const appName = `cmp-${type === 'stack' ? 'stk' : 'dc'}-${Date.now().toString(36)}`;
      const created = await client.post('compose.create', {
        name: `two services (${type})`,
        environmentId: environment.environmentId,
        composeType: type,
        appName,
        composeFile: stackFile(port, 'first'),
      });
      t.equal(created.status, 200, 'created');
      const { composeId } = created.body;
      t.match(created.body, { sourceType: 'raw', composeType: type, composeStatus: 'idle', composePath: './docker-compose.yml', env: null });
      cleanup.push(() => client.post('compose.delete', { composeId, deleteVolumes: true }));
      t.equal((await client.post('compose.saveEnvironment', { composeId, env: 'GREETING=from-env' })).status, 200);

      t.same((await client.get('compose.loadServices', { composeId })).body, ['web', 'worker']);
      const { log } = await run(client, 'compose.deploy', composeId);
      if (type === 'stack') t.match(log, /depends_on/, 'the log names what docker stack deploy ignores');
      t.notMatch(log, /from-env/, 'the env value never reaches the log');
      t.match(await served(port, /first from-env/), /first from-env/, "web serves, with the env from the stack's env");
      const one = (await client.get('compose.one', { composeId })).body;
      t.match(one, { composeStatus: 'done', env: 'GREETING=from-env', environment: { environmentId: environment.environmentId } });
      t.ok(one.deployments.length >= 1, 'one lists its deployments');
      t.equal((await volumesOf(type, appName)).length, 1, 'the named volume exists');
      const lastGood = await docker
        .getImage(`berth/${appName}-web:last-good`)
        .inspect()
        .catch(() => null);
      t.ok(lastGood, 'the running image is tagged as the last good one');
      const mounts = (await client.get('compose.loadMountsByService', { composeId, serviceName: 'worker' })).body;
      t.match(mounts, [{ Type: 'volume', Destination: '/data' }], "loadMountsByService lists the worker's volume");

      await run(client, 'compose.stop', composeId);
      await unreachable(port);
      t.equal((await client.get('compose.one', { composeId })).body.composeStatus, 'idle');
      await run(client, 'compose.start', composeId);
      await served(port, /first from-env/);
      t.equal((await client.get('compose.one', { composeId })).body.composeStatus, 'done');

      t.equal((await client.post('compose.update', { composeId, composeFile: stackFile(port, 'second') })).status, 200);
      await run(client, 'compose.redeploy', composeId);
      t.match(await served(port, /second/), /second from-env/, 'the changed file runs after redeploy');

      const keep = type === 'docker-compose';
      const deleted = await client.post('compose.delete', { composeId, deleteVolumes: !keep });
      t.equal(deleted.status, 200, 'deleted');
      t.equal(deleted.body.composeId, composeId);
      await waitFor("the stack's containers gone", async () => (await containersOf(type, appName)).length === 0, { timeout: 60_000 });
      await unreachable(port);
      const left = await volumesOf(type, appName);
      if (keep) {
        t.equal(left.length, 1, 'deleteVolumes false keeps the named volume');
        for (const v of left) await docker.getVolume(v).remove();
      } else {
        t.same(left, [], 'deleteVolumes true removes the named volume');
      }
      t.equal((await client.get('compose.one', { composeId })).status, 404);
      t.equal(
        await docker
          .getImage(`berth/${appName}-web:last-good`)
          .inspect()
          .then(
            () => 'tagged',
            () => 'gone',
          ),
        'gone',
        'the last-good tags go with the stack',
      );
    });
  }

  t.test('a custom command runs; a refused one is a 400 naming command', async t => {
    const port = await freePort();
    const appName = `cmp-cmd-${Date.now().toString(36)}`;
    const {
      body: { composeId },
    } = await client.post('compose.create', { name: 'custom', environmentId: environment.environmentId, appName, composeFile: stackFile(port, 'custom') });
    cleanup.push(() => client.post('compose.delete', { composeId, deleteVolumes: true }));
    for (const command of ['docker-compose up -d; rm -rf /', 'sh -c "docker-compose up"', 'docker-compose -f /etc/passwd up -d']) {
      const res = await client.post('compose.update', { composeId, command });
      t.equal(res.status, 400, `refused: ${command}`);
      t.same(
        res.body.issues?.map((i: { path: string[] }) => i.path.join('.')),
        ['command'],
      );
    }
    const command = `docker-compose -p ${appName} -f code/.berth-compose.yml --env-file code/.env up -d`;
    const ok = await client.post('compose.update', { composeId, command });
    t.equal(ok.status, 200, "a command starting with the Compose program, its files inside the stack's directory");
    const { log } = await run(client, 'compose.deploy', composeId);
    // The default command names the files by absolute path and ends with `up -d --build --remove-orphans`:
    // this line, relative paths and ending at `up -d`, only the custom command writes.
    t.match(log, new RegExp(`Running ${command.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'), 'the log runs the custom command, word for word');
    t.notMatch(log, /Running .* up -d --build --remove-orphans$/m, 'and not the default one');
    await served(port, /custom/);
    t.equal((await client.post('compose.delete', { composeId, deleteVolumes: true })).status, 200);
    t.same(await volumesOf('docker-compose', appName), []);
  });

  t.test('a git source: the file at composePath, its relative bind mounts inside the checkout', async t => {
    const port = await freePort();
    const site = (text: string) =>
      `services:\n  web:\n    image: ${TEST_BASE_IMAGE}\n    init: true\n    stop_grace_period: 1s\n    command: ["httpd", "-f", "-p", "8080", "-h", "/www"]\n    ports:\n      - target: 8080\n        published: ${port}\n        mode: host\n    volumes:\n      - ./site:/www:ro\n# ${text}\n`;
    const repo = await makeGitRepo({ 'deploy/stack.yml': site('v1'), 'deploy/site/index.html': 'from git v1\n' });
    t.teardown(() => repo.cleanup());
    const appName = `cmp-git-${Date.now().toString(36)}`;
    const {
      body: { composeId },
    } = await client.post('compose.create', { name: 'from git', environmentId: environment.environmentId, appName });
    cleanup.push(() => client.post('compose.delete', { composeId, deleteVolumes: true }));
    const set = await client.post('compose.update', { composeId, sourceType: 'git', customGitUrl: repo.dir, customGitBranch: 'main', composePath: './deploy/stack.yml' });
    t.equal(set.status, 200, JSON.stringify(set.body));
    const { log } = await run(client, 'compose.deploy', composeId);
    t.match(log, new RegExp(`Fetched ${repo.commit.slice(0, 7)}`), 'the log names the commit');
    t.equal((await served(port, /from git/)).trim(), 'from git v1');
    t.same((await client.get('compose.loadServices', { composeId })).body, ['web'], 'the services of the fetched file');
    await commitFiles(repo.dir, { 'deploy/site/index.html': 'from git v2\n', 'deploy/stack.yml': site('v2') });
    await run(client, 'compose.redeploy', composeId);
    t.equal((await served(port, /v2/)).trim(), 'from git v2', 'a redeploy fetches the new commit');
  });

  t.test('a service that exits fails the deploy, naming it', async t => {
    const appName = `cmp-bad-${Date.now().toString(36)}`;
    const file = `services:\n  ok:\n    image: ${TEST_BASE_IMAGE}\n    init: true\n    command: ["sleep", "3600"]\n  broken:\n    image: ${TEST_BASE_IMAGE}\n    command: ["sh", "-c", "exit 3"]\n`;
    const {
      body: { composeId },
    } = await client.post('compose.create', { name: 'broken', environmentId: environment.environmentId, appName, composeFile: file });
    cleanup.push(() => client.post('compose.delete', { composeId, deleteVolumes: true }));
    const { deployment } = await run(client, 'compose.deploy', composeId, 'error');
    t.match(deployment.errorMessage, /service broken.*exit code 3/);
    t.equal((await client.get('compose.one', { composeId })).body.composeStatus, 'error');
  });
});
