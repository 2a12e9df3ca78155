// Applications deployed for real: a local git repository built with its Dockerfile, a
// prebuilt local image, failures, env changes, stop/start, cancel, delete, env references
// and shell metacharacters — on the real Docker engine in swarm mode, through the API.
import t, { type Test } from 'tap';
import { existsSync, symlinkSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import Docker from 'dockerode';
import {
  startTestServer,
  signUpAdmin,
  makeGitRepo,
  commitFiles,
  deploymentFinished,
  freePort,
  waitFor,
  shellTricks,
  TEST_BASE_IMAGE,
  TEST_STATIC_IMAGE,
  deploymentIdOf,
  runFinished,
} from '@berth/core/testing';
import { runContainerCommand } from '@berth/plugin-workloads/testing';
import { engineApps } from './engine-apps.ts';

const docker = new Docker();

/** [status, body] of GET path on the port, or undefined while nothing answers. */
async function get(port: number, at = '/'): Promise<[number, string] | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${at}`, { signal: AbortSignal.timeout(2000) });
    return [res.status, await res.text()];
  } catch {
    return undefined;
  }
}

/** The body served at `at` once it matches `expect` (a 200 unless anyStatus), polled while the service (re)starts. */
const served = (port: number, expect: RegExp = /(?:)/, at = '/', anyStatus = false) =>
  waitFor(
    `port ${port} serving ${expect} at ${at}`,
    async () => {
      const reply = await get(port, at);
      return reply && (reply[0] === 200 || anyStatus) && expect.test(reply[1]) ? reply[1] : undefined;
    },
    { timeout: 30_000, interval: 200 },
  );

const unreachable = (port: number) => waitFor(`nothing answering on port ${port}`, async () => (await get(port)) === undefined, { timeout: 30_000, interval: 200 });

const serviceOf = (name: string) =>
  docker
    .getService(name)
    .inspect()
    .then(
      (s: any) => s,
      () => null,
    );

const issuePaths = (body: { issues?: { path: (string | number)[] }[] }) => (body.issues ?? []).map(i => i.path.join('.'));

// A site whose index page shows $GREETING, written (and printed to the container log) when the container starts.
const site = (extra = '') => ({
  Dockerfile: `FROM ${TEST_BASE_IMAGE}\n${extra}RUN mkdir -p /www\nCMD ["sh", "-c", "echo \\"hello $GREETING\\" | tee /www/index.html && exec httpd -f -p 8080 -h /www"]\n`,
});

/**
 * KEY=value lines as users write them (dotenv): a value with a newline in double quotes, as \n; a
 * value that starts and ends with one quote character in single quotes, since dotenv would read
 * those outer ones as quoting (`x` means x).
 */
function dotenv(entries: [string, string][]): string {
  return entries
    .map(([k, v]) => {
      if (v.includes('\n')) {
        if (v.includes('"')) throw new Error(`dotenv: ${JSON.stringify(v)} has both a newline and a double quote`);
        return `${k}="${v.replace(/\n/g, '\\n')}"`;
      }
      if (/^(["'`]).*\1$/.test(v)) {
        if (v.includes("'")) throw new Error(`dotenv: ${JSON.stringify(v)} is quoted and has a single quote`);
        return `${k}='${v}'`;
      }
      return `${k}=${v}`;
    })
    .join('\n');
}

// Builds and rollouts on the engine take longer than tap's default per-file limit.
t.setTimeout(600_000);

t.test('applications on the real engine', async t => {
  // The test repositories are on this host: the operator grants that, to the instance owner (the admin below).
  const server = await startTestServer({ hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: true } });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  // What notification channels will subscribe to.
  const events: { name: string; payload: Record<string, any> }[] = [];
  const bus = server.kernel.container.cradle.events;
  bus.on('appDeploy', payload => void events.push({ name: 'appDeploy', payload }));
  bus.on('appBuildError', payload => void events.push({ name: 'appBuildError', payload }));
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Deploys', env: 'DB_HOST=db.internal' });
  await client.post('environment.update', { environmentId: environment.environmentId, env: 'STAGE=prod' });

  const { call, newApp } = engineApps(t, client, environment.environmentId);
  const fromGit = async (applicationId: string, dir: string, more: Record<string, unknown> = {}) => {
    await call('application.saveGitProvider', { applicationId, customGitUrl: `file://${dir}`, customGitBranch: 'main', customGitBuildPath: '/', ...more });
    await call('application.saveBuildType', { applicationId, buildType: 'dockerfile', dockerfile: 'Dockerfile' });
  };
  /** An application built from a new repository of `files`, published on a free port, with its env saved. */
  const gitApp = async (t: Test, name: string, env: string, files = site()) => {
    const repo = await makeGitRepo(files);
    t.teardown(() => repo.cleanup());
    const port = await freePort();
    const app = await newApp(name, port);
    await fromGit(app.applicationId, repo.dir);
    await call('application.saveEnvironment', { applicationId: app.applicationId, env });
    return { ...app, repo, port };
  };
  /** Queues a run; answers its reply's body and the deployment it queued. */
  const deploy = async (applicationId: string, op = 'application.deploy') => {
    const reply = await client.post(op, { applicationId });
    return { body: reply.body, deploymentId: deploymentIdOf(reply) };
  };
  const deployed = (applicationId: string, op = 'application.deploy') => runFinished(client, op, { applicationId });
  const logOf = async (deploymentId: string) => (await client.get('deployment.readLogs', { deploymentId })).body as string;
  const statusOf = async (applicationId: string) => (await client.get('application.one', { applicationId })).body.applicationStatus;

  // One application's life, in order: each step acts on what the previous one left running.
  t.test('an application from git: deploy, redeploy, a failing build, stop/start, reload, logs, delete', async t => {
    const web = await gitApp(t, 'web', 'GREETING=world-1\nAPI_TOKEN=very-secret-token-1');
    const { repo, port } = web;
    const ids: string[] = [];

    // deploy answers true (as the peer does) and names the queued deployment in a header, then the container serves
    const queued = await deploy(web.applicationId);
    ids.push(queued.deploymentId);
    t.equal(queued.body, true);
    t.match((await client.get('deployment.one', { deploymentId: queued.deploymentId })).body, { status: /queued|running|done/, action: 'deploy', applicationId: web.applicationId });
    const done = await deploymentFinished(client, queued.deploymentId);
    t.equal(done.status, 'done', done.errorMessage ?? '');
    t.equal(await statusOf(web.applicationId), 'done');
    t.equal((await served(port, /world-1/)).trim(), 'hello world-1');
    const log = await logOf(queued.deploymentId);
    t.match(log, new RegExp(repo.commit.slice(0, 7)), 'the log names the fetched commit');
    t.notMatch(log, /very-secret-token-1/, 'env values never reach the log');
    const one = await client.get('application.one', { applicationId: web.applicationId });
    t.equal(one.body.deployments[0].deploymentId, queued.deploymentId, 'one lists the deployment');
    t.equal(one.body.ports[0].publishedPort, port);
    const svc = await serviceOf(web.appName);
    t.equal(svc.Spec.Labels['berth.id'], web.applicationId);
    t.match(svc.Spec.TaskTemplate.ContainerSpec.Image, new RegExp(`^berth/${web.appName}:deploy-`), 'the built image is tagged by its deployment (a valid tag whatever the id starts with)');
    t.match(
      events.find(e => e.name === 'appDeploy' && e.payload.applicationId === web.applicationId)?.payload,
      { deploymentId: queued.deploymentId, appName: web.appName, action: 'deploy' },
      'appDeploy was emitted',
    );

    // a redeploy with a changed env serves the new value
    await call('application.saveEnvironment', { applicationId: web.applicationId, env: 'GREETING=world-2' });
    const redeployed = await deployed(web.applicationId, 'application.redeploy');
    ids.push(redeployed.deploymentId);
    t.equal(redeployed.status, 'done', redeployed.errorMessage ?? '');
    t.equal((await served(port, /world-2/)).trim(), 'hello world-2');

    // a failing build ends in error with the build error in the log; the previous version keeps serving
    await commitFiles(repo.dir, site('RUN echo building-step && exit 3\n'));
    const failed = await deployed(web.applicationId);
    ids.push(failed.deploymentId);
    t.equal(failed.status, 'error');
    t.match(failed.errorMessage, /returned a non-zero code: 3/);
    t.match(await logOf(failed.deploymentId), /returned a non-zero code: 3/);
    t.equal(await statusOf(web.applicationId), 'error');
    t.match(
      events.find(e => e.name === 'appBuildError' && e.payload.applicationId === web.applicationId)?.payload,
      { deploymentId: failed.deploymentId, error: /returned a non-zero code: 3/ },
      'appBuildError was emitted',
    );
    t.equal((await served(port)).trim(), 'hello world-2', 'the running version is untouched');
    await commitFiles(repo.dir, site());

    // stop scales to zero (idle); start brings it back (done)
    const stopping = await deploy(web.applicationId, 'application.stop');
    t.match(stopping.body, { applicationId: web.applicationId, appName: web.appName, environment: { environmentId: String }, deployments: Array }, 'stop answers the application, as the peer does');
    const stopped = await deploymentFinished(client, stopping.deploymentId);
    ids.push(stopped.deploymentId);
    t.equal(stopped.status, 'done', stopped.errorMessage ?? '');
    t.equal(await statusOf(web.applicationId), 'idle');
    t.equal((await serviceOf(web.appName)).Spec.Mode.Replicated.Replicas, 0);
    t.ok(await unreachable(port), 'nothing answers once stopped');
    const started = await deployed(web.applicationId, 'application.start');
    ids.push(started.deploymentId);
    t.equal(started.status, 'done', started.errorMessage ?? '');
    t.equal(await statusOf(web.applicationId), 'done');
    t.equal((await served(port)).trim(), 'hello world-2');

    // reload restarts the tasks with the same spec
    const before = (await serviceOf(web.appName)).Spec.TaskTemplate.ForceUpdate ?? 0;
    const reloaded = await runFinished(client, 'application.reload', { applicationId: web.applicationId, appName: web.appName });
    ids.push(reloaded.deploymentId);
    t.equal(reloaded.status, 'done', reloaded.errorMessage ?? '');
    t.ok((await serviceOf(web.appName)).Spec.TaskTemplate.ForceUpdate > before, 'ForceUpdate was raised');
    t.equal((await served(port)).trim(), 'hello world-2');

    // readLogs answers the container output, filtered by search
    const logs = await waitFor('the container output in readLogs', async () => {
      const res = await client.get('application.readLogs', { applicationId: web.applicationId, tail: 50 });
      return res.status === 200 && /hello world-2/.test(res.body) ? (res.body as string) : undefined;
    });
    t.match(logs, /hello world-1/, "earlier tasks' output too");
    const searched = (await client.get('application.readLogs', { applicationId: web.applicationId, tail: 50, search: 'WORLD-1' })).body as string;
    t.ok(
      searched.split('\n').filter(Boolean).length > 0 &&
        searched
          .split('\n')
          .filter(Boolean)
          .every(l => l.includes('world-1')),
      'search keeps only the matching lines, ignoring case',
    );

    // delete removes the service, the work dir and the records
    const listed = (await client.get('deployment.all', { applicationId: web.applicationId })).body as { deploymentId: string }[];
    t.same(listed.map(d => d.deploymentId).sort(), [...ids].sort(), 'deployment.all lists every run of the application');
    t.equal((await client.post('application.delete', { applicationId: web.applicationId })).status, 200);
    t.equal(await serviceOf(web.appName), null, 'the service is gone');
    t.notOk(existsSync(path.join(server.dataDir, 'applications', web.appName)), 'its directory is gone');
    t.equal((await client.get('deployment.one', { deploymentId: ids[0]! })).status, 404, 'its deployments are gone');
    const builds = path.join(server.dataDir, 'builds');
    t.same(existsSync(builds) ? await readdir(builds) : [], [], 'no build work dir is left behind');
    t.equal((await client.get('application.one', { applicationId: web.applicationId })).status, 404);
    t.ok(await unreachable(port), 'nothing answers once deleted');
  });

  t.test('a prebuilt local image deploys; the log says it was not pulled', async t => {
    const port = await freePort();
    const app = await newApp('prebuilt', port, 80);
    await call('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_STATIC_IMAGE, username: 'robot', password: 'registry-password-77' });
    const done = await deployed(app.applicationId);
    t.equal(done.status, 'done', done.errorMessage ?? '');
    const log = await logOf(done.deploymentId);
    t.match(log, /Could not pull .*copy this host already has/);
    t.notMatch(log, /registry-password-77/);
    // The image's web server answers (its root is empty here, so with a 404 page of its own).
    t.match(await served(port, /Not Found/, '/', true), /404 Not Found/);
  });

  t.test('env references are resolved; a missing one fails the deploy naming it', async t => {
    const app = await gitApp(t, 'refs', 'HOST=${{project.DB_HOST}}\nGREETING=${{HOST}}-${{environment.STAGE}}');
    const { port } = app;
    const done = await deployed(app.applicationId);
    t.equal(done.status, 'done', done.errorMessage ?? '');
    t.equal((await served(port, /db\.internal/)).trim(), 'hello db.internal-prod');
    await call('application.saveEnvironment', { applicationId: app.applicationId, env: 'GREETING=${{project.MISSING_KEY}}' });
    const failed = await deployed(app.applicationId);
    t.equal(failed.status, 'error');
    t.match(failed.errorMessage, /Invalid project environment variable: project\.MISSING_KEY/, "the peer's wording, so tools matching it keep working");
    t.equal((await served(port)).trim(), 'hello db.internal-prod', 'the previous version keeps serving');
  });

  t.test('build secrets reach a Dockerfile build as secret mounts, and no layer, config or log line', async t => {
    const token = `tok-${randomBytes(12).toString('hex')}`;
    const hash = createHash('sha256').update(token).digest('hex');
    // The image keeps the hash of what the RUN read; the Dockerfile never holds the value. BuildKit's
    // cache key of a step leaves its secrets out: the nonce keeps an earlier run's layer from being reused.
    const mount = () =>
      `RUN --mount=type=secret,id=API_TOKEN,required=true sh -c 'mkdir -p /www && sha256sum < /run/secrets/API_TOKEN | cut -c1-64 > /www/token' # ${randomBytes(6).toString('hex')}\n`;
    const app = await gitApp(t, 'vault', 'GREETING=vault', site(mount()));
    await call('application.saveEnvironment', { applicationId: app.applicationId, env: 'GREETING=vault', buildSecrets: `API_TOKEN=${token}\nUNUSED=other-${token}` });
    const done = await deployed(app.applicationId);
    t.equal(done.status, 'done', done.errorMessage ?? '');
    t.equal((await served(app.port, /[0-9a-f]{64}/, '/token')).trim(), hash, 'the build read the secret');
    const image = ((await docker.getService(app.appName).inspect()) as { Spec: { TaskTemplate: { ContainerSpec: { Image: string } } } }).Spec.TaskTemplate.ContainerSpec.Image.split('@')[0]!;
    const history = JSON.stringify(await docker.getImage(image).history());
    t.match(history, /sha256sum < \/run\/secrets\/API_TOKEN/, "the image's history has the step");
    t.notOk(history.includes(token), 'in no layer of the history');
    t.notOk(JSON.stringify(await docker.getImage(image).inspect()).includes(token), 'nor in the image config');
    const log = await logOf(done.deploymentId);
    t.notOk(log.includes(token), 'nor in the deployment log');
    t.match(log, /build secrets API_TOKEN, UNUSED are mounted by id/);

    // Without the secret the required mount fails the build, naming it (a new step: a cached one asks for nothing).
    await commitFiles(app.repo.dir, site(mount()), 'a new step');
    await call('application.saveEnvironment', { applicationId: app.applicationId, env: 'GREETING=vault', buildSecrets: 'OTHER=x-value' });
    const failed = await deployed(app.applicationId);
    t.equal(failed.status, 'error');
    t.match(failed.errorMessage, /API_TOKEN.*not found.*the build asked for the build secret API_TOKEN, which is not among the build secrets: OTHER/);
  });

  t.test('cancelDeployment stops a long build: cancelled, and the app is not left running', async t => {
    const slow = await makeGitRepo(site('RUN echo slow-step-started && sleep 120\n'));
    t.teardown(() => slow.cleanup());
    const app = await newApp('slow');
    await fromGit(app.applicationId, slow.dir);
    const queued = await deploy(app.applicationId);
    // The build is inside its long step: the cancel has a running build to stop.
    await waitFor('the slow build step running', async () => /^slow-step-started$/m.test(await logOf(queued.deploymentId)), { timeout: 120_000 });
    const started = Date.now();
    t.equal((await client.post('application.cancelDeployment', { applicationId: app.applicationId })).status, 200);
    const ended = await deploymentFinished(client, queued.deploymentId, { timeout: 30_000 });
    t.equal(ended.state, 'cancelled');
    t.ok(Date.now() - started < 20_000, 'stopped promptly');
    t.equal(await statusOf(app.applicationId), 'idle', 'never deployed, so nothing runs');
    t.equal(await serviceOf(app.appName), null, 'no service was created');
  });

  t.test('values with shell metacharacters reach the build and the service literally', async t => {
    const marker = `/tmp/berth-pwned-${randomBytes(6).toString('hex')}`;
    t.teardown(() => rm(marker, { force: true }));
    const tricks = shellTricks(marker);
    // Names that may hold such text: a directory, a Dockerfile and the repository's path (no whitespace
    // in a URL). The clone and the build find them only if git and the engine get them unchanged.
    const buildDir = `-app; $(id) | 'q' "d" \`id\` & > y`;
    const dockerfile = `Dockerfile; $(id) 'q' "d" | & > y`;
    // A command is split on whitespace into its arguments, so its tricks have none.
    const commandTricks = [`;touch\${IFS}${marker}`, `$(touch\${IFS}${marker})`, `\`touch\${IFS}${marker}\``, '|', '&&', `>${marker}`, '--help', '*', `'q'"d"`];
    const buildArgNames = tricks.map((_, i) => `TRICK_${i}`);
    const repo = await makeGitRepo({
      [`${buildDir}/${dockerfile}`]: [
        `FROM ${TEST_BASE_IMAGE}`,
        ...buildArgNames.map(name => `ARG ${name}`),
        'COPY record.sh /record.sh',
        `RUN mkdir -p /www && printf '%s\\0' ${buildArgNames.map(n => `"$${n}"`).join(' ')} > /www/build-args`,
        '',
      ].join('\n'),
      // Records the arguments it got and its environment (NUL-separated, as the kernel holds them), then serves them.
      [`${buildDir}/record.sh`]: ['for a in "$@"; do printf \'%s\\0\' "$a"; done > /www/argv', 'cat /proc/self/environ > /www/environ', 'exec httpd -f -p 8080 -h /www', ''].join('\n'),
    });
    t.teardown(() => repo.cleanup());
    const linkDir = t.testdir();
    const repoPath = path.join(linkDir, `repo;$(id)|&'q'"d"\`id\`>y`);
    symlinkSync(repo.dir, repoPath);

    const port = await freePort();
    const app = await newApp('literal', port);
    await call('application.update', { applicationId: app.applicationId, name: tricks[0], description: tricks.join('\n') });
    await fromGit(app.applicationId, repoPath, { customGitBuildPath: `/${buildDir}` });
    await call('application.saveBuildType', { applicationId: app.applicationId, buildType: 'dockerfile', dockerfile });
    await call('application.saveEnvironment', {
      applicationId: app.applicationId,
      env: dotenv(tricks.map((v, i) => [`ENV_${i}`, v])),
      buildArgs: dotenv(tricks.map((v, i) => [buildArgNames[i]!, v])),
    });
    const labels = Object.fromEntries(tricks.map((v, i) => [`test.trick.${i}`, v]));
    await call('application.update', { applicationId: app.applicationId, command: ['/bin/sh', '/record.sh', ...commandTricks].join(' '), args: tricks, labelsSwarm: labels });
    const content = tricks.join('\n');
    await call('mounts.create', { serviceId: app.applicationId, type: 'file', content, filePath: 'tricks.txt', mountPath: '/www/tricks.txt' });

    const done = await deployed(app.applicationId);
    t.equal(done.status, 'done', done.errorMessage ?? '');

    // What the engine was given: argument arrays and lists, never a command line.
    const spec = (await serviceOf(app.appName)).Spec;
    const container = spec.TaskTemplate.ContainerSpec;
    t.same(container.Command, ['/bin/sh', '/record.sh', ...commandTricks], 'the command, split on whitespace only');
    t.same(container.Args, tricks, 'each argument unchanged');
    t.same(
      container.Env,
      tricks.map((v, i) => `ENV_${i}=${v}`),
      'each env value unchanged',
    );
    t.same(Object.fromEntries(Object.entries(spec.Labels).filter(([k]) => k.startsWith('test.'))), labels, 'each label value unchanged');

    // What the container's process got, and what the build and the mount produced.
    const nulList = (text: string) => text.split('\0').slice(0, -1);
    t.same(nulList(await served(port, /./, '/argv')), [...commandTricks, ...tricks], 'the process received each argument as one, unchanged');
    const environ = nulList(await served(port, /./, '/environ'));
    t.same(
      tricks.map((_, i) => environ.find(e => e.startsWith(`ENV_${i}=`))),
      tricks.map((v, i) => `ENV_${i}=${v}`),
      'the process environment holds each value unchanged',
    );
    t.same(nulList(await served(port, /./, '/build-args')), tricks, "each build argument reached the Dockerfile's RUN unchanged");
    t.equal(await served(port, /./, '/tricks.txt'), content, 'the file mount holds the content unchanged');

    // No shell acted on any of it: not on this host, not in the build, not in the container.
    t.notOk(existsSync(marker), 'no marker on the host');
    const [task] = await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${app.appName}`] } });
    t.ok(task, 'a running task');
    t.equal((await runContainerCommand(docker, task!.Id, { cmd: ['test', '-e', '/www/argv'] })).exitCode, 0, 'test -e finds a file that exists');
    t.equal((await runContainerCommand(docker, task!.Id, { cmd: ['test', '-e', marker] })).exitCode, 1, 'no marker in the image or the container');
  });

  t.test('input that cannot be passed safely is refused, naming the field or the reason', async t => {
    const marker = `/tmp/berth-pwned-${randomBytes(6).toString('hex')}`;
    t.teardown(() => rm(marker, { force: true }));
    const app = await newApp('refused');

    // Refused when saved: 400 with the field in issues.
    const appName = await client.post('application.update', { applicationId: app.applicationId, appName: `x;touch ${marker}` });
    t.equal(appName.status, 400);
    t.same(issuePaths(appName.body), ['appName']);
    const branch = await client.post('application.saveGitProvider', { applicationId: app.applicationId, customGitUrl: 'file:///nonexistent', customGitBranch: `main;touch ${marker}` });
    t.equal(branch.status, 400);
    t.same(issuePaths(branch.body), ['customGitBranch']);

    // Refused when deployed, before any program or engine call gets them: the deployment's error says why.
    const failsWith = async (fields: Record<string, unknown>, message: RegExp, what: string) => {
      await call('application.update', { applicationId: app.applicationId, ...fields });
      const run = await deployed(app.applicationId);
      t.match(run, { status: 'error', errorMessage: message }, what);
    };
    const git = { sourceType: 'git', buildType: 'dockerfile', customGitBranch: 'main', customGitUrl: 'file:///nonexistent' };
    await failsWith({ ...git, customGitUrl: `--upload-pack=touch ${marker}` }, /^The repository URL "--upload-pack=touch \S+" must not start with "-"$/, 'a URL git would read as an option');
    await failsWith({ ...git, customGitUrl: `file:///x $(touch ${marker})` }, /must not contain spaces$/, 'a URL with spaces');
    await failsWith({ ...git, customGitBranch: `-b;touch${marker}` }, /^The branch "-b;touch\S+" is not a valid branch name: it must not start with "-"$/, 'a branch git would read as an option');
    await failsWith(
      { sourceType: 'docker', dockerImage: `busybox;touch ${marker}` },
      /^Could not pull busybox;touch \S+ \(.*invalid reference format.*\), and this host has no copy of it$/,
      'an image that is not a reference',
    );
    await failsWith({ env: `BAD-NAME=$(touch ${marker})` }, /Invalid environment variable name "BAD-NAME"/, 'an env name the kernel cannot hold');
    t.notOk(existsSync(marker), 'no shell ran anything');
  });
});
