// The promise that nothing stays `running` forever: a Berth process killed (SIGKILL) in the
// middle of a deployment, then started again on the same database, ends that deployment in
// `error` with the reason, and the application is not left `running` either. On the default
// database the killed process also held the embedded database: the next start must open it.
import t from 'tap';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { processDatabase, dataDirFor, makeGitRepo, Client, TEST_BASE_IMAGE, waitFor, freePort, deploymentFinished, deploymentIdOf, runFinished } from '@berth/core/testing';
import { cli, nodeFlags, repoRoot } from './helpers.ts';

const run = promisify(execFile);

t.test('a deployment interrupted by a killed process ends in error after the restart', async t => {
  const db = await processDatabase();
  t.teardown(() => db.drop());
  const dataDir = dataDirFor(t);
  const env = { ...process.env, ...db.env, BERTH_DATA_DIR: dataDir, BERTH_CONFIG: '', BERTH_LOG_LEVEL: 'warn', BERTH_HOST_ACCESS: JSON.stringify({ localGit: true }) }; // the test repository is on this host
  const created = await run(process.execPath, [...nodeFlags, cli, 'admin', 'create', '--email', 'ops@example.com', '--password', 'ops-secret-password'], { env, cwd: repoRoot });
  const { apiKey } = JSON.parse(created.stdout.trim().split('\n').pop()!);

  const children: ChildProcess[] = [];
  t.teardown(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });
  const start = async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [...nodeFlags, cli, 'start'], { env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, cwd: repoRoot, stdio: 'ignore' });
    children.push(child);
    const url = `http://127.0.0.1:${port}`;
    await waitFor('Berth to listen', async () => (await fetch(`${url}/health`)).ok, { timeout: 60_000 });
    return { child, client: new Client(url, { apiKey }) };
  };

  const slow = await makeGitRepo({ Dockerfile: `FROM ${TEST_BASE_IMAGE}\nRUN sleep 120\n` });
  t.teardown(() => slow.cleanup());

  const first = await start();
  const {
    body: { environment },
  } = await first.client.post('project.create', { name: 'recovery' });
  const app = (await first.client.post('application.create', { name: 'slow', environmentId: environment.environmentId })).body;
  await first.client.post('application.saveGitProvider', { applicationId: app.applicationId, customGitUrl: `file://${slow.dir}`, customGitBranch: 'main' });
  await first.client.post('application.saveBuildType', { applicationId: app.applicationId, buildType: 'dockerfile' });
  const deployed = await first.client.post('application.deploy', { applicationId: app.applicationId });
  t.equal(deployed.body, true, 'deploy answers true, as the peer does');
  const queued = { deploymentId: deploymentIdOf(deployed) };
  await deploymentFinished(first.client, queued.deploymentId, { statuses: ['running'], timeout: 60_000 });
  // The deployer marks the application running as its first step, a moment after the deployment.
  await waitFor('the application to be running', async () => (await first.client.get('application.one', { applicationId: app.applicationId })).body.applicationStatus === 'running');
  t.pass('the deployment and the application are running when Berth is killed');

  first.child.kill('SIGKILL');
  await new Promise(resolve => first.child.once('exit', resolve));

  const second = await start();
  const ended = (await second.client.get('deployment.one', { deploymentId: queued.deploymentId })).body;
  t.equal(ended.status, 'error', 'not left running');
  t.match(ended.errorMessage, /Berth stopped while this deployment was running/);
  t.ok(ended.finishedAt, 'it has an end');
  t.match((await second.client.get('deployment.readLogs', { deploymentId: queued.deploymentId })).body, /Berth stopped/);
  t.equal((await second.client.get('application.one', { applicationId: app.applicationId })).body.applicationStatus, 'error', 'the application is settled too');

  // The queue still works after the recovery: a new deployment runs (and fails fast: no such branch).
  await second.client.post('application.saveGitProvider', { applicationId: app.applicationId, customGitUrl: `file://${slow.dir}`, customGitBranch: 'no-such-branch' });
  const after = await runFinished(second.client, 'application.deploy', { applicationId: app.applicationId }, { timeout: 60_000 });
  t.equal(after.status, 'error');
  t.match(after.errorMessage, /no-such-branch/);
  second.child.kill('SIGTERM');
});
