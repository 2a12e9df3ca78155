// Issue 49's "done when": the peer's own clients that call its routers Berth gained there work
// unchanged. The published CLI (@dokploy/cli, its bin run as a process with the environment it
// reads: DOKPLOY_URL and DOKPLOY_API_KEY) runs each of its commands on those routers, and a few
// older ones as a control, asserting its exit code, its output and the effect read back through
// Berth's API or the engine. The published MCP server (@ahdev/dokploy-mcp, run as a process over
// stdio, driven by the real MCP client SDK) lists its tools and calls the one of them that maps to
// those routers, and two older ones as a control. Each client's coverage is derived from its own
// files and stated exactly: which of those procedures it calls, and which it does not call at all.
// Where a command fails, it fails against the peer at v0.30.2 just the same, for the reason
// PEER_REFUSES_TOO gives (the CLI sends arrays, objects and files as plain strings, and has no
// way to send false).
import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import Docker from 'dockerode';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { freePort, makeCertificate, makeGitRepo, runFinished, signUpAdmin, startSmtp, startTestServer, TEST_BASE_IMAGE, TEST_LIBSQL_IMAGE, waitFor, type Client } from '@berth/core/testing';
import { GOOD_KEY, startLlmStandIn } from '../plugins/ai/test/llm-stand-in.ts';
import { peerDocumentPath } from '../scripts/empty-string-fields.ts';

t.setTimeout(420_000); // under 2 minutes alone on two cores, 3 to 4 while others share them

/** The peer's procedures (v0.30.2) that issue 49 added to Berth. */
const ISSUE_49_ROUTERS = ['schedule', 'docker', 'network', 'tag', 'patch', 'libsql'];
const ISSUE_49_PROCEDURES = [
  'backup.manualBackupLibsql',
  ...['health', 'checkInfrastructureHealth', 'getDockerDiskUsage', 'updateBuildsConcurrency', 'getReleaseTag', 'getLogCleanupStatus', 'updateLogCleanup', 'cleanAllDeploymentQueue']
    .concat(['toggleRequests', 'haveActivateRequests', 'isCloud', 'getDokployCloudIps', 'updateRemoteServersOnly', 'checkGPUStatus', 'setupGPU', 'isUserSubscribed'])
    .concat(['cleanRedis', 'reloadRedis'])
    .map(p => `settings.${p}`),
  ...[
    'getInvitations',
    'sendInvitation',
    'getUserByToken',
    'session',
    'checkUserOrganizations',
    'getBackups',
    'getMetricsToken',
    'getServerMetrics',
    'getBookmarkedTemplates',
    'toggleTemplateBookmark',
  ].map(p => `user.${p}`),
  'project.allForPermissions',
  'project.homeStats',
  'application.readAppMonitoring',
  'application.dropDeployment',
  ...['analyzeLogs', 'getEnabledProviders', 'getCustomProviders', 'saveCustomProviders'].map(p => `ai.${p}`),
  ...['getCurrentPlan', 'getInvoices', 'upgradeSubscription', 'updateInvoiceNotifications'].map(p => `stripe.${p}`),
  'sshKey.allForApps',
  'gitProvider.allForPermissions',
  'swarm.getContainerStats',
];
/** The peer's procedures at v0.30.2, from its OpenAPI document (the shared reference, as test/peer-procedures.test.ts reads it). */
const peerDocument = peerDocumentPath();
if (!peerDocument) throw new Error("the peer's OpenAPI document (peer-openapi.json) was not found: set BERTH_PEER_OPENAPI to its path");
const PEER = new Set(Object.keys(JSON.parse(readFileSync(peerDocument, 'utf8')).paths as object).map(p => p.replace(/^\//, '')));
const ISSUE_49 = [...PEER].filter(op => ISSUE_49_ROUTERS.includes(op.split('.')[0]!) || ISSUE_49_PROCEDURES.includes(op)).sort();

/**
 * The CLI commands that fail against Berth as they fail against the peer at v0.30.2, and why: the
 * CLI sends each option as the string typed (only booleans and numbers are converted), a boolean
 * option is a flag (it can only send true), and it has no way to attach a file.
 */
const PEER_REFUSES_TOO: Record<string, string> = {
  'tag.bulkAssign': 'tagIds goes as a string; the peer reads an array (400)',
  'network.import': 'names goes as a string; the peer reads an array (400)',
  'ai.saveCustomProviders': 'providers goes as a string; the peer reads an array (400)',
  'docker.uploadFileToContainer': 'the command has no option and sends no file; the peer reads a multipart form (400)',
  'application.dropDeployment': 'the command has no option and sends no zip; the peer reads a multipart form (400)',
  'settings.setupGPU': 'this machine has no NVIDIA driver: the peer fails too (Berth: 409 naming the driver)',
  'stripe.upgradeSubscription': 'billing is off on a self-hosted instance: the peer answers 400 "No active subscription found", Berth 404 "billing is not enabled"',
  'libsql.create':
    'serverId is a required option and this machine has no id: the peer fails too (its insert of serverId "" breaks the server foreign key), Berth answers 404 (no such server); the test makes it through the API and runs every other command on it',
  'stripe.updateInvoiceNotifications': 'the peer answers 400 "only available in Dokploy Cloud" when self-hosted, Berth 404 "billing is not enabled" while billing is off',
};

/** Commands this test does not run, and why. */
const NOT_RUN: Record<string, string> = {
  'backup.manualBackupLibsql': 'needs a backup destination (an S3 stand-in); its only option is --backupId, sent as the API reads it (plugins/backups/test/libsql.test.ts runs it)',
};
/** Issue 49's procedures the CLI has no command for (its generator left them out). */
const CLI_DOES_NOT_CALL = ['settings.cleanRedis', 'settings.reloadRedis'];
/** The CLI's commands on these routers that a later peer serves and the peer at v0.30.2 does not (nor Berth). */
const CLI_BEYOND_THE_PEER = [
  'docker.deleteContainerFile',
  'docker.getEvents',
  'docker.getServerHealth',
  'docker.listContainerFiles',
  'docker.readContainerFile',
  'docker.writeContainerFile',
  'network.resync',
];

/** The CLI's commands from its generated file: `router.procedure` → the group and action that call it. */
function cliCommands(dir: string): Map<string, { group: string; action: string }> {
  const source = readFileSync(path.join(dir, 'dist', 'generated', 'commands.js'), 'utf8');
  const groups = new Map([...source.matchAll(/const (g_\w+) = program\.command\('([\w-]+)'\)/g)].map(m => [m[1]!, m[2]!]));
  const out = new Map<string, { group: string; action: string }>();
  for (const m of source.matchAll(/(g_\w+)\s*\.command\('([\w-]+)'\)[\s\S]*?api(?:Post|Get)\("([\w.]+)"/g)) out.set(m[3]!, { group: groups.get(m[1]!)!, action: m[2]! });
  return out;
}

/** The MCP server's tools from its files: tool name → the `router.procedure` its handler calls. */
function mcpTools(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const tools = path.join(dir, 'build', 'mcp', 'tools');
  for (const folder of readdirSync(tools, { withFileTypes: true }).filter(d => d.isDirectory())) {
    for (const file of readdirSync(path.join(tools, folder.name)).filter(f => f.endsWith('.js') && f !== 'index.js')) {
      const source = readFileSync(path.join(tools, folder.name, file), 'utf8');
      const name = /name: "([\w-]+)"/.exec(source)?.[1];
      const op = /apiClient\.(?:get|post)\([`"]\/([\w]+\.[\w]+)/.exec(source)?.[1];
      if (name && op) out.set(name, op);
    }
  }
  return out;
}

const require = createRequire(import.meta.url);
const cliDir = path.dirname(require.resolve('@dokploy/cli/package.json'));
const mcpDir = path.dirname(require.resolve('@ahdev/dokploy-mcp/package.json'));
const docker = new Docker();
/** 200 when the engine call answers, else the engine's status (404: no such object). */
const engineStatus = (call: Promise<unknown>) =>
  call.then(
    () => 200,
    (e: { statusCode?: number }) => e.statusCode ?? 500,
  );

const llm = await startLlmStandIn(TEST_BASE_IMAGE);
t.teardown(() => llm.close());
const smtp = await startSmtp(t, makeCertificate(t), 'none');
// Patches read a workload's checkout: the test's repository is on this host, which the operator grants.
const server = await startTestServer({ proxy: 'none', deploySettleSeconds: 0, aiTimeoutSeconds: 20, hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: true } } as never); // cast: the ai and workloads plugins' own keys
t.teardown(() => server.destroy());
const admin = await signUpAdmin(server);
const c = admin.client;
// Samples every 2 seconds, so that the MCP server's monitoring tool reads some (the CLI cannot set this up: its metricsConfig goes as a string).
const monitoring = {
  refreshRate: 2,
  port: await freePort(),
  token: 'metrics-token',
  urlCallback: 'http://127.0.0.1:9/hook',
  retentionDays: 1,
  cronJob: '0 0 * * *',
  thresholds: { cpu: 0, memory: 0 },
};

const must = async (what: string, reply: Promise<{ status: number; body: any }>) => {
  const r = await reply;
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

// An application running the test base image (busybox's sleep keeps its container up): schedules run in it, docker.* acts on it.
// Restarted by its swarm on failure only: it exits 0 on TERM, so docker.*'s restart and stop of its
// container leave the swarm be (with "any", each starts another task, and the task history the swarm
// keeps — five a slot — removed the stopped container under load before docker.startContainer came:
// a 404, stop 66's CI); its kill (137) brings a new task up for what runs after.
const { project, environment } = await must('project.create', c.post('project.create', { name: 'Clients' }));
const app = await must('application.create', c.post('application.create', { name: 'worker', environmentId: environment.environmentId }));
await must(
  'application.update',
  c.post('application.update', {
    applicationId: app.applicationId,
    command: 'sh',
    args: ['-c', 'trap "exit 0" TERM; while true; do sleep 1; done'],
    stopGracePeriodSwarm: 1_000_000_000,
    restartPolicySwarm: { Condition: 'on-failure' },
  }),
);
await must('application.saveDockerProvider', c.post('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_BASE_IMAGE }));
await must('admin.setupMonitoring', c.post('admin.setupMonitoring', { metricsConfig: { server: monitoring, containers: { refreshRate: 2, services: { include: [], exclude: [] } } } }));
const deployed = await runFinished(c, 'application.deploy', { applicationId: app.applicationId });
if (deployed.state !== 'done') throw new Error(`application.deploy: ${deployed.state} ${deployed.errorMessage}`);
t.teardown(() => c.post('application.delete', { applicationId: app.applicationId }).catch(() => undefined));

t.test('the CLI (@dokploy/cli) runs its commands on these routers', async t => {
  const commands = cliCommands(cliDir);
  t.ok(commands.size > 400, `${commands.size} commands read from the CLI`);
  const ran = new Set<string>();
  const bin = path.join(cliDir, 'dist', 'index.js');
  const cwd = t.testdir({}); // the CLI reads a .env of its working directory: an empty one of the test's
  /** Runs the command that calls `op` with its options; exit code, output and the JSON it printed. */
  const cli = (op: string, options: Record<string, string | true> = {}) => {
    const command = commands.get(op);
    if (!command) throw new Error(`the CLI has no command for ${op}`);
    ran.add(op);
    const args = [command.group, command.action, ...Object.entries(options).flatMap(([k, v]) => (v === true ? [`--${k}`] : [`--${k}`, v])), '--json'];
    return new Promise<{ code: number; stdout: string; stderr: string; json: any }>(resolve =>
      execFile(process.execPath, [bin, ...args], { cwd, env: { PATH: process.env.PATH, DOKPLOY_URL: server.url, DOKPLOY_API_KEY: admin.apiKey } }, (error, stdout, stderr) => {
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          /* not JSON */
        }
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr, json });
      }),
    );
  };
  /** The JSON a command printed, once it exited 0. */
  const ok = async (t: Test, op: string, options: Record<string, string | true> = {}) => {
    const r = await cli(op, options);
    t.equal(r.code, 0, `${op}: exit 0${r.code ? ` (${r.stdout}${r.stderr})` : ''}`);
    return r.json;
  };
  /** A command the peer refuses too: exit 1 and the status the API answered. */
  const refused = async (t: Test, op: string, status: number, options: Record<string, string | true> = {}) => {
    const r = await cli(op, options);
    t.equal(r.code, 1, `${op} exits 1: ${PEER_REFUSES_TOO[op]}`);
    t.match(r.stdout + r.stderr, `status code ${status}`, `${op}: ${status}`);
  };

  t.test('control: older commands', async t => {
    t.match(await ok(t, 'user.get'), { userId: admin.userId }, 'user get');
    t.ok(
      (await ok(t, 'project.all')).some((p: { projectId: string }) => p.projectId === project.projectId),
      'project all lists the project',
    );
    t.match(await ok(t, 'application.one', { applicationId: app.applicationId }), { applicationId: app.applicationId, applicationStatus: 'done' });
  });

  t.test('tag.*', async t => {
    const made = await ok(t, 'tag.create', { name: 'red', color: '#ff0000' });
    t.match(made, { tagId: String, name: 'red', color: '#ff0000' });
    const { tagId } = made;
    t.same(
      (await must('tag.all', c.get('tag.all'))).map((x: { tagId: string }) => x.tagId),
      [tagId],
      'the tag is there in tag.all',
    );
    t.same(
      (await ok(t, 'tag.all')).map((x: { tagId: string }) => x.tagId),
      [tagId],
    );
    t.match(await ok(t, 'tag.one', { tagId }), { tagId, name: 'red' });
    t.match(await ok(t, 'tag.update', { tagId, name: 'blue' }), { tagId, name: 'blue', color: '#ff0000' });
    t.match(await ok(t, 'tag.assignToProject', { projectId: project.projectId, tagId }), { projectId: project.projectId, tagId });
    t.match((await must('project.one', c.get('project.one', { projectId: project.projectId }))).projectTags, [{ tagId, tag: { name: 'blue' } }], 'the project carries the tag');
    await refused(t, 'tag.bulkAssign', 400, { projectId: project.projectId, tagIds: JSON.stringify([tagId]) });
    t.same(await ok(t, 'tag.removeFromProject', { projectId: project.projectId, tagId }), { success: true });
    t.same((await must('project.one', c.get('project.one', { projectId: project.projectId }))).projectTags, [], 'and no longer');
    t.same(await ok(t, 'tag.remove', { tagId }), { success: true });
    t.same(await must('tag.all', c.get('tag.all')), [], 'tag.all is empty again');
  });

  t.test('schedule.*', async t => {
    const made = await ok(t, 'schedule.create', {
      name: 'hello',
      cronExpression: '0 3 * * *',
      command: 'echo "hello from the cli"',
      scheduleType: 'application',
      applicationId: app.applicationId,
      shellType: 'sh',
    });
    t.match(made, { scheduleId: String, scheduleType: 'application', applicationId: app.applicationId, cronExpression: '0 3 * * *', enabled: true });
    const { scheduleId } = made;
    t.same(
      (await ok(t, 'schedule.list', { id: app.applicationId, scheduleType: 'application' })).map((s: { scheduleId: string }) => s.scheduleId),
      [scheduleId],
    );
    t.match(await ok(t, 'schedule.one', { scheduleId }), { scheduleId, application: { applicationId: app.applicationId } });
    const run = await ok(t, 'schedule.runManually', { scheduleId });
    t.match(run, { status: 'done', deploymentId: String }, 'the run ended done');
    t.match(await must('deployment.readLogs', c.get('deployment.readLogs', { deploymentId: run.deploymentId, tail: 50 })), /hello from the cli/, 'the command ran in the container');
    t.match(await ok(t, 'schedule.update', { scheduleId, name: 'hello', cronExpression: '30 4 * * *', command: 'echo bye' }), { cronExpression: '30 4 * * *', command: 'echo bye' });
    t.equal((await must('schedule.one', c.get('schedule.one', { scheduleId }))).cronExpression, '30 4 * * *', 'read back changed');
    t.equal(await ok(t, 'schedule.delete', { scheduleId }), true);
    t.equal((await c.get('schedule.one', { scheduleId })).status, 404, 'gone');
  });

  t.test('network.*', async t => {
    const name = `berth-cli-net-${process.pid}`;
    const made = await ok(t, 'network.create', { name, driver: 'bridge' });
    t.match(made, { networkId: String, name, driver: 'bridge', serverId: null });
    const { networkId } = made;
    t.teardown(() =>
      docker
        .getNetwork(name)
        .remove()
        .catch(() => undefined),
    );
    const engineId = (await docker.getNetwork(name).inspect()).Id as string;
    t.ok(engineId, 'the network exists on the engine');
    t.ok(
      (await ok(t, 'network.all')).some((n: { networkId: string }) => n.networkId === networkId),
      'network all lists it',
    );
    t.match(await ok(t, 'network.one', { networkId }), { networkId, name });
    t.match(await ok(t, 'network.inspect', { networkId }), { Name: name, Id: engineId, Driver: 'bridge' });
    await refused(t, 'network.import', 400, { names: JSON.stringify([name]) });
    await docker.getNetwork(name).remove();
    t.match(await ok(t, 'network.networksToSync'), { missing: [{ networkId }] }, 'networks-to-sync: the record whose network is gone');
    await ok(t, 'network.recreate', { networkId });
    t.not((await docker.getNetwork(name).inspect()).Id, engineId, 'recreate made it again on the engine');
    t.same((await ok(t, 'network.networksToSync')).missing, [], 'and nothing is missing');
    await ok(t, 'network.remove', { networkId });
    t.equal(await engineStatus(docker.getNetwork(name).inspect()), 404, 'remove took it off the engine');
  });

  t.test('patch.*', async t => {
    const repo = await makeGitRepo({ 'index.html': 'original\n', 'src/app.js': 'console.log(1)\n' });
    t.teardown(() => repo.cleanup());
    const linked = await must('application.create', c.post('application.create', { name: 'patched', environmentId: environment.environmentId }));
    t.teardown(() => c.post('application.delete', { applicationId: linked.applicationId }).catch(() => undefined));
    await must('saveGitProvider', c.post('application.saveGitProvider', { applicationId: linked.applicationId, customGitUrl: `file://${repo.dir}`, customGitBranch: 'main', customGitBuildPath: '/' }));
    const entity = { id: linked.applicationId, type: 'application' };

    const made = await ok(t, 'patch.create', { filePath: 'index.html', content: 'patched\n', applicationId: linked.applicationId });
    t.match(made, { patchId: String, filePath: 'index.html', type: 'update', enabled: true, applicationId: linked.applicationId });
    const { patchId } = made;
    t.match(await ok(t, 'patch.one', { patchId }), { patchId, content: 'patched\n' });
    t.same(
      (await ok(t, 'patch.byEntityId', entity)).map((p: { patchId: string }) => p.patchId),
      [patchId],
    );
    t.match(await ok(t, 'patch.update', { patchId, content: 'patched again' }), { content: 'patched again\n' });
    t.match(await ok(t, 'patch.toggleEnabled', { patchId, enabled: true }), { enabled: true }, 'toggle-enabled (the CLI can only send true)');
    const repoPath = await ok(t, 'patch.ensureRepo', entity);
    t.type(repoPath, 'string', 'ensure-repo answers the checkout');
    t.ok(
      (await ok(t, 'patch.readRepoDirectories', { ...entity, repoPath })).some((e: { path: string }) => e.path === 'index.html'),
      "read-repo-directories lists the repository's files",
    );
    t.equal(await ok(t, 'patch.readRepoFile', { ...entity, filePath: 'src/app.js' }), 'console.log(1)\n');
    t.match(await ok(t, 'patch.saveFileAsPatch', { ...entity, filePath: 'src/app.js', content: 'console.log(2)\n' }), { filePath: 'src/app.js' });
    t.match(await ok(t, 'patch.markFileForDeletion', { ...entity, filePath: 'src/app.js' }), { filePath: 'src/app.js', type: 'delete' });
    t.same(
      (await must('patch.byEntityId', c.get('patch.byEntityId', entity))).map((p: { filePath: string; type: string }) => `${p.type} ${p.filePath}`).sort(),
      ['delete src/app.js', 'update index.html'],
      'the patches read back through the API',
    );
    t.match(await ok(t, 'patch.delete', { patchId }), { patchId });
    t.equal((await c.get('patch.one', { patchId })).status, 404, 'gone');
    await ok(t, 'patch.cleanPatchRepos');
  });

  t.test('docker.* and swarm.getContainerStats on the running application', async t => {
    const [listed, mine, byLabel, ofService, ofStack, stats] = await Promise.all([
      ok(t, 'docker.getContainers'),
      ok(t, 'docker.getContainersByAppNameMatch', { appName: app.appName }),
      ok(t, 'docker.getContainersByAppLabel', { appName: app.appName, type: 'swarm' }),
      ok(t, 'docker.getServiceContainersByAppName', { appName: app.appName }),
      ok(t, 'docker.getStackContainersByAppName', { appName: app.appName }),
      ok(t, 'swarm.getContainerStats'),
    ]);
    t.equal(mine.length, 1, 'one container of the application');
    const { containerId } = mine[0];
    t.ok(
      listed.some((x: { containerId: string }) => x.containerId === containerId),
      'get-containers lists it',
    );
    t.match(byLabel, [{ containerId, state: 'running' }]);
    t.match(ofService, [{ state: 'running' }]);
    t.same(ofStack, [], 'an application is no stack');
    const config = await ok(t, 'docker.getConfig', { containerId });
    t.ok(config.Id.startsWith(containerId), "get-config answers the container's inspection");
    t.ok(
      stats.some((s: { ID: string }) => containerId.startsWith(s.ID) || s.ID.startsWith(containerId)),
      'swarm get-container-stats has its figures',
    );
    const engine = docker.getContainer(containerId);
    const started = (await engine.inspect()).State.StartedAt;
    await ok(t, 'docker.restartContainer', { containerId });
    t.not((await engine.inspect()).State.StartedAt, started, 'restarted on the engine');
    await ok(t, 'docker.stopContainer', { containerId });
    t.equal((await engine.inspect()).State.Running, false, 'stopped');
    await ok(t, 'docker.startContainer', { containerId });
    t.equal((await engine.inspect()).State.Running, true, 'started');
    await ok(t, 'docker.killContainer', { containerId });
    t.equal((await engine.inspect()).State.Running, false, 'killed');
    await ok(t, 'docker.removeContainer', { containerId });
    t.equal(await engineStatus(engine.inspect()), 404, 'removed from the engine');
    await refused(t, 'docker.uploadFileToContainer', 400);
  });

  t.test('settings.*', async t => {
    const [health, infrastructure, disk, tag, cloud, ips, subscribed, gpu] = await Promise.all(
      ['health', 'checkInfrastructureHealth', 'getDockerDiskUsage', 'getReleaseTag', 'isCloud', 'getDokployCloudIps', 'isUserSubscribed', 'checkGPUStatus'].map(p => ok(t, `settings.${p}`)),
    );
    t.same(health, { status: 'ok' });
    t.match(infrastructure, { postgres: { status: 'healthy' } });
    t.match(disk, [{ type: 'Images', totalCount: Number }]);
    t.match(tag, /^v\d/);
    t.equal(cloud, false);
    t.same(ips, []);
    t.equal(subscribed, true);
    t.match(gpu, { driverInstalled: false, availableGPUs: 0 });
    t.equal(await ok(t, 'settings.updateBuildsConcurrency', { buildsConcurrency: '3' }), true);
    t.equal(await ok(t, 'settings.updateLogCleanup', { cronExpression: '15 1 * * *' }), true);
    t.same(await ok(t, 'settings.getLogCleanupStatus'), { enabled: true, cronExpression: '15 1 * * *' }, 'read back');
    t.equal(await ok(t, 'settings.cleanAllDeploymentQueue'), true);
    t.equal(await ok(t, 'settings.toggleRequests', { enable: true }), false, 'no Traefik here: the peer answers false too');
    t.equal(await ok(t, 'settings.haveActivateRequests'), false);
    await refused(t, 'settings.setupGPU', 409);
    t.equal(await ok(t, 'settings.updateRemoteServersOnly', { remoteServersOnly: true }), true);
    const { queueSettings, orm } = server.kernel.container.cradle as never as { queueSettings: { current(em: unknown): Promise<object> }; orm: { em: { fork(): unknown } } };
    t.same(await queueSettings.current(orm.em.fork()), { buildsConcurrency: 3, remoteServersOnly: true }, 'both stored');
    t.equal((await c.post('application.deploy', { applicationId: app.applicationId })).status, 409, 'a deployment on this machine is refused now');
    await must('settings.updateRemoteServersOnly', c.post('settings.updateRemoteServersOnly', { remoteServersOnly: false })); // the CLI can only send true
  });

  t.test('user.*', async t => {
    const [session, organizations, backups, metricsToken, serverMetrics, bookmarks, invitations] = await Promise.all([
      ok(t, 'user.session'),
      ok(t, 'user.checkUserOrganizations', { userId: admin.userId }),
      ok(t, 'user.getBackups'),
      ok(t, 'user.getMetricsToken'),
      ok(t, 'user.getServerMetrics'),
      ok(t, 'user.getBookmarkedTemplates'),
      ok(t, 'user.getInvitations'),
    ]);
    t.match(session, { user: { id: admin.userId }, session: { activeOrganizationId: admin.organizationId } });
    t.equal(organizations, 1);
    t.match(backups, { id: admin.userId });
    t.match(metricsToken, { enabledFeatures: Boolean, metricsConfig: { server: { token: monitoring.token } } }, "the peer's {serverIp, enabledFeatures, metricsConfig}");
    t.match(serverMetrics, { id: admin.userId }, "the peer's user row");
    t.same(bookmarks, []);
    t.same(invitations, [], 'none addressed to the admin');
    await ok(t, 'user.toggleTemplateBookmark', { templateId: 'plausible' });
    t.same(await must('user.getBookmarkedTemplates', c.get('user.getBookmarkedTemplates')), ['plausible'], 'the bookmark is there');
    const invitation = await must('organization.inviteMember', c.post('organization.inviteMember', { email: 'dave@example.com', role: 'member' }));
    t.match(await ok(t, 'user.getUserByToken', { token: invitation.token }), { email: 'dave@example.com' });
    const toggles = { appBuildError: false, databaseBackup: false, dokployRestart: false, appDeploy: false, dockerCleanup: false };
    const mail = { smtpServer: '127.0.0.1', smtpPort: smtp.port, username: 'berth', password: 'mail-secret', fromAddress: 'berth@example.com', toAddresses: ['ops@example.com'], tlsMode: 'none' };
    const { notificationId } = await must('notification.createEmail', c.post('notification.createEmail', { name: 'mail', ...toggles, ...mail }));
    t.match(await ok(t, 'user.sendInvitation', { invitationId: invitation.id, notificationId }), /invitation\?token=/, 'send-invitation answers the link');
    t.equal(smtp.mails.length, 1, 'and the mail went');
  });

  t.test('project, application, sshKey, gitProvider', async t => {
    const [forPermissions, stats, figures, keys, providers] = await Promise.all([
      ok(t, 'project.allForPermissions'),
      ok(t, 'project.homeStats'),
      ok(t, 'application.readAppMonitoring', { appName: app.appName }),
      ok(t, 'sshKey.allForApps'),
      ok(t, 'gitProvider.allForPermissions'),
    ]);
    t.ok(
      forPermissions.some((p: { projectId: string }) => p.projectId === project.projectId),
      'all-for-permissions lists the project',
    );
    t.match(stats, { projects: Number, applications: Number });
    t.match(figures, { cpu: [{ value: /%$/ }], memory: Array }, "the application's figures");
    t.type(keys, Array);
    t.type(providers, Array);
  });

  t.test('ai.*', async t => {
    const made = await ok(t, 'ai.create', { name: 'Stand-in', apiUrl: `${llm.url}/v1`, apiKey: GOOD_KEY, model: 'gpt-test', isEnabled: true }); // control
    const aiId = made?.aiId ?? (await must('ai.getAll', c.get('ai.getAll')))[0].aiId;
    t.match(await ok(t, 'ai.getEnabledProviders'), [{ aiId }]);
    t.same(await ok(t, 'ai.getCustomProviders'), []);
    await refused(t, 'ai.saveCustomProviders', 400, { providers: '[]' });
    const logs = ['#1 building', 'npm ERR! error code ECONNREFUSED while fetching left-pad'].join('\n');
    t.match(await ok(t, 'ai.analyzeLogs', { aiId, logs, context: 'build' }), { analysis: /ECONNREFUSED/ }, "the model's analysis");
  });

  t.test('libsql.*', async t => {
    const base = {
      name: 'edge',
      dockerImage: TEST_LIBSQL_IMAGE,
      environmentId: environment.environmentId,
      description: 'edge',
      databaseUser: 'edge',
      databasePassword: 'Edge-pass_1',
      sqldNode: 'primary',
    };
    await refused(t, 'libsql.create', 404, { ...base, appName: 'edge', sqldPrimaryUrl: '', enableNamespaces: true, serverId: '' });
    t.same(await must('libsql.create', c.post('libsql.create', { ...base, appName: 'edge', sqldPrimaryUrl: null, enableNamespaces: false, serverId: null })), true, 'made through the API');
    const libsqlId = (await must('environment.one', c.get('environment.one', { environmentId: environment.environmentId }))).libsql[0].libsqlId as string;
    t.teardown(() => c.post('libsql.remove', { libsqlId }).catch(() => undefined));
    const status = async (want: string) => waitFor(`libsql ${want}`, async () => (await c.get('libsql.one', { libsqlId })).body?.applicationStatus === want, { timeout: 60_000, interval: 500 });
    t.match(await ok(t, 'libsql.one', { libsqlId }), { libsqlId, name: 'edge', sqldNode: 'primary' });
    t.equal(await ok(t, 'libsql.update', { libsqlId, description: 'from the cli' }), true);
    t.equal(await ok(t, 'libsql.saveEnvironment', { libsqlId, env: 'GREETING=hi' }), true);
    t.match(await must('libsql.one', c.get('libsql.one', { libsqlId })), { description: 'from the cli', env: 'GREETING=hi' }, 'both read back');
    const port = String(await freePort());
    await ok(t, 'libsql.saveExternalPorts', { libsqlId, externalPort: port });
    t.equal((await must('libsql.one', c.get('libsql.one', { libsqlId }))).externalPort, Number(port), 'the port read back');
    await ok(t, 'libsql.deploy', { libsqlId });
    await status('done');
    await waitFor('sqld answering on the external port', async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.status === 200, { timeout: 60_000, interval: 500 });
    t.ok(await ok(t, 'libsql.readLogs', { libsqlId, tail: '20' }), 'read-logs answers the logs');
    await ok(t, 'libsql.stop', { libsqlId });
    await status('idle');
    await ok(t, 'libsql.start', { libsqlId });
    await status('done');
    await ok(t, 'libsql.reload', { libsqlId, appName: (await must('libsql.one', c.get('libsql.one', { libsqlId }))).appName });
    await ok(t, 'libsql.rebuild', { libsqlId });
    await status('done');
    await ok(t, 'libsql.changeStatus', { libsqlId, applicationStatus: 'idle' });
    t.equal((await must('libsql.one', c.get('libsql.one', { libsqlId }))).applicationStatus, 'idle');
    const { environmentId: target } = await must('environment.create', c.post('environment.create', { name: 'staging', projectId: project.projectId }));
    await ok(t, 'libsql.move', { libsqlId, targetEnvironmentId: target });
    t.equal((await must('libsql.one', c.get('libsql.one', { libsqlId }))).environmentId, target, 'moved');
    await ok(t, 'libsql.remove', { libsqlId });
    await waitFor('libsql gone', async () => (await c.get('libsql.one', { libsqlId })).status === 404, { timeout: 60_000, interval: 500 });
  });

  t.test('application.dropDeployment', async t => {
    await refused(t, 'application.dropDeployment', 400);
  });

  t.test('stripe.* as a self-hosted instance answers', async t => {
    t.equal((await cli('stripe.getCurrentPlan')).json?.result?.data?.json, null, 'null (the CLI prints the envelope of a null answer)');
    t.same(await ok(t, 'stripe.getInvoices'), []);
    await refused(t, 'stripe.upgradeSubscription', 404, { tier: 'hobby', serverQuantity: '1', isAnnual: true });
    await refused(t, 'stripe.updateInvoiceNotifications', 404, { enabled: true });
  });

  t.test('what the CLI covers', async t => {
    t.equal(ISSUE_49.length, 104, "issue 49's procedures, from the peer's document");
    const covered = ISSUE_49.filter(op => commands.has(op));
    t.same(
      covered.filter(op => !ran.has(op) && !NOT_RUN[op]),
      [],
      'every command on these procedures ran',
    );
    t.same(
      ISSUE_49.filter(op => !commands.has(op)),
      CLI_DOES_NOT_CALL,
      'the CLI has no command for these',
    );
    // Commands of the CLI (made from a later peer's document) on these routers that the peer at v0.30.2 does not serve: Berth answers 404, as it would.
    const later = [...commands.keys()].filter(op => ISSUE_49_ROUTERS.includes(op.split('.')[0]!) && !PEER.has(op)).sort();
    t.same(later, CLI_BEYOND_THE_PEER, "the CLI's commands the peer at v0.30.2 does not serve");
    t.equal((await cli(later[0]!, { containerId: 'x', path: '/' })).stderr.trim() || 'none', 'Request failed with status code 404', `${later[0]} answers 404 as the peer at v0.30.2 would`);
    t.comment(`the CLI calls ${covered.length} of issue 49's ${ISSUE_49.length} procedures`);
  });
});

t.test('the MCP server (@ahdev/dokploy-mcp) over stdio', async t => {
  const tools = mcpTools(mcpDir);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(mcpDir, 'build', 'index.js')],
    env: { PATH: process.env.PATH!, DOKPLOY_URL: `${server.url}/api`, DOKPLOY_API_KEY: admin.apiKey },
    stderr: 'ignore', // its log
  });
  const mcp = new McpClient({ name: 'berth-test', version: '1.0.0' });
  await mcp.connect(transport);
  t.teardown(() => mcp.close());
  const listed = (await mcp.listTools()).tools.map(x => x.name).sort();
  t.same(listed, [...tools.keys()].sort(), 'listTools answers the tools read from its files');
  const calls = [...new Set(tools.values())];
  const covered = ISSUE_49.filter(op => calls.includes(op));
  t.same(covered, ['application.readAppMonitoring'], 'of these procedures it calls one');
  t.equal(ISSUE_49.length - covered.length, 103, 'and none of the others: its tools are project, application, domain, postgres and mysql ones');

  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await mcp.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: any; content: { text: string }[] };
    t.notOk(r.isError, `${name}: no error${r.isError ? ` (${r.content[0]?.text})` : ''}`);
    return r.structuredContent?.data;
  };
  // Control: older tools.
  t.ok(
    (await call('project-all', {})).some((p: { projectId: string }) => p.projectId === project.projectId),
    'project-all lists the project',
  );
  t.match(await call('application-one', { applicationId: app.applicationId }), { applicationId: app.applicationId, appName: app.appName });
  // The monitoring collector's first samples of the application, then the tool reads them.
  await waitFor('a sample of the application', async () => ((await c.get('application.readAppMonitoring', { appName: app.appName })).body?.cpu?.length ?? 0) >= 1, { timeout: 90_000, interval: 1000 });
  const figures = await call('application-readAppMonitoring', { appName: app.appName });
  t.match(figures, { cpu: [{ value: /%$/, time: String }], memory: Array, network: Array, block: Array, disk: [] }, "the application's figures");
});
