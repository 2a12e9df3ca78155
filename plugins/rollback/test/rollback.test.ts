// Releases kept and rolled back to, on the real engine through the API: each successful deploy keeps
// its release (deployment.allByType answers it as the peer's rollback entry, without secrets),
// rollback.rollback rolls an older one out again as a deployment without a build (the old env
// served again), releases beyond rollbacksKept go with their tags, rollback.delete refuses the
// release that runs now, a mutable image tag moving on does not change what a release rolls back
// to, and a cleanup leaves a kept release's image — until it is deleted.
import t from 'tap';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, makeGitRepo, freePort, waitFor, deploymentIdOf, deploymentFinished, runFinished, TEST_BASE_IMAGE, TEST_STATIC_IMAGE, type Client } from '@berth/core/testing';
import { engineApps, served } from '../../application/test/engine-apps.ts';

const docker = new Docker();
t.setTimeout(300_000);

/** The image id the service's running task runs. */
const runningImage = (appName: string) =>
  waitFor(`${appName}'s running task`, async () => {
    const [task] = (await docker.listTasks({ filters: JSON.stringify({ service: [appName], 'desired-state': ['running'] }) })) as any[];
    if (task?.Status?.State !== 'running') return undefined;
    const container = await docker.getContainer(task.Status.ContainerStatus.ContainerID).inspect();
    return container.Image as string;
  });

/** Whether the engine has no image of that reference (404). */
const absent = (ref: string) =>
  docker
    .getImage(ref)
    .inspect()
    .then(
      () => false,
      (e: { statusCode?: number }) => e.statusCode === 404,
    );

const releases = async (client: Client, applicationId: string) => {
  const res = await client.get('deployment.allByType', { id: applicationId, type: 'application' });
  t.equal(res.status, 200, 'deployment.allByType answers');
  return res.body as { deploymentId: string; action: string; rollbackId: string | null; rollback: Record<string, any> | null }[];
};

/** A fresh local image FROM the static site image, serving `text`, under `repo:tag` (a tag that can move on to another image). */
async function siteImage(repo: string, tag: string, text: string): Promise<string> {
  const c = await docker.createContainer({ Image: TEST_STATIC_IMAGE, Cmd: ['sh', '-c', `echo ${text} > /www/index.html`] });
  await c.start();
  await c.wait();
  const base = await docker.getImage(TEST_STATIC_IMAGE).inspect();
  const { Id } = (await c.commit({ repo, tag, changes: [`CMD ${JSON.stringify(base.Config.Cmd)}`] } as never)) as unknown as { Id: string };
  await c.remove();
  return Id;
}

t.test('releases kept and rolled back to', async t => {
  // Two releases kept: a third deploy lets the first go.
  const server = await startTestServer({ hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: true }, rollbacksKept: 2 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Rollbacks' });
  const { call, newApp } = engineApps(t, client, environment.environmentId);

  t.test('an application built from git: three releases, a rollback to the first kept one, deletes', async t => {
    const repo = await makeGitRepo({ Dockerfile: `FROM ${TEST_BASE_IMAGE}\nRUN mkdir -p /www\nCMD ["sh", "-c", "echo \\"hello $GREETING\\" > /www/index.html && exec httpd -f -p 8080 -h /www"]\n` });
    t.teardown(() => repo.cleanup());
    const port = await freePort();
    const app = await newApp('web', port);
    await call('application.saveGitProvider', { applicationId: app.applicationId, customGitUrl: `file://${repo.dir}`, customGitBranch: 'main', customGitBuildPath: '/' });
    await call('application.saveBuildType', { applicationId: app.applicationId, buildType: 'dockerfile', dockerfile: 'Dockerfile' });
    const release = async (greeting: string) => {
      await call('application.saveEnvironment', { applicationId: app.applicationId, env: `GREETING=${greeting}\nAPI_TOKEN=token-of-${greeting}` });
      const done = await runFinished(client, 'application.deploy', { applicationId: app.applicationId });
      t.equal(done.state, 'done', done.errorMessage ?? `release ${greeting} deployed`);
      await served(port, new RegExp(`hello ${greeting}`));
      return done.deploymentId as string;
    };

    const first = await release('one');
    let list = await releases(client, app.applicationId);
    const v1 = list[0]!.rollback!.version;
    t.match(list[0], { deploymentId: first, rollback: { deploymentId: first, image: `berth/${app.appName}:rollback-v${v1}` } }, 'the first deploy kept its release');
    t.equal(list[0]!.rollbackId, list[0]!.rollback!.rollbackId, 'the deployment names its release');
    t.same(list[0]!.rollback!.fullContext.envKeys, ['API_TOKEN', 'GREETING'], 'the release says which env it ran');
    t.notMatch(JSON.stringify(list), /token-of-one/, 'never its values');
    t.same((await client.get('rollback.one', { rollbackId: list[0]!.rollbackId })).body, list[0]!.rollback, 'rollback.one answers the same release');
    await docker.getImage(`berth/${app.appName}:rollback-v${v1}`).inspect();

    const second = await release('two');
    await release('three');
    list = await releases(client, app.applicationId);
    const kept = list.filter(d => d.rollback).map(d => d.rollback!.version);
    t.same(kept, [v1 + 2, v1 + 1], 'two releases kept: the newest, numbered in order');
    t.equal(list.find(d => d.deploymentId === first)!.rollback, null, 'the first release went');
    t.ok(await absent(`berth/${app.appName}:rollback-v${v1}`), 'and its tag with it');
    const v2 = list.find(d => d.deploymentId === second)!.rollback!;

    // Back to v2: a deployment of its own, no build, the old env served again.
    const started = Date.now();
    const reply = await client.post('rollback.rollback', { rollbackId: v2.rollbackId });
    t.equal(reply.status, 200, JSON.stringify(reply.body));
    t.match(reply.body, { rollbackId: v2.rollbackId, version: v2.version });
    const back = await deploymentFinished(client, deploymentIdOf(reply));
    await served(port, /hello two/);
    t.comment(`rollback.rollback to serving the old release: ${Date.now() - started} ms (bench/deploy-load.ts measures it)`);
    t.match(back, { state: 'done', action: 'rollback', title: `Rollback to v${v2.version}`, applicationId: app.applicationId });
    const log = (await client.get('deployment.readLogs', { deploymentId: back.deploymentId })).body as string;
    t.match(log, `back to release v${v2.version}`);
    t.notMatch(log, /Building|Fetched/, 'nothing fetched or built');
    t.notMatch(log, /token-of-two/, 'env values never reach the log');
    t.equal((await client.get('application.one', { applicationId: app.applicationId })).body.applicationStatus, 'done');
    list = await releases(client, app.applicationId);
    t.equal(list[0]!.action, 'rollback');
    t.equal(list[0]!.rollback, null, 'a rollback keeps no release of its own');

    // The release that runs now stays; another goes, with its tag, and is no more to roll back to.
    const refused = await client.post('rollback.delete', { rollbackId: v2.rollbackId });
    t.equal(refused.status, 409, 'the running release is not deleted');
    t.match(refused.body.message, /runs now/);
    const v3 = list.find(d => d.rollback?.version === v1 + 2)!.rollback!;
    const removed = await client.post('rollback.delete', { rollbackId: v3.rollbackId });
    t.equal(removed.status, 200, JSON.stringify(removed.body));
    t.match(removed.body, { rollbackId: v3.rollbackId, version: v3.version });
    t.ok(await absent(`berth/${app.appName}:rollback-v${v3.version}`), 'its tag is gone');
    t.equal((await client.post('rollback.rollback', { rollbackId: v3.rollbackId })).status, 404, 'a deleted release is no more');
    t.equal((await client.post('rollback.delete', { rollbackId: v3.rollbackId })).status, 404);

    // A new deploy rolls forward from there, and keeps its release.
    await release('four');
    t.same(
      (await releases(client, app.applicationId)).filter(d => d.rollback).map(d => d.rollback!.version),
      [v1 + 3, v1 + 1],
      'the new release kept, numbered after every one before (a deleted number is not given again)',
    );

    // Deleting the application drops its releases and their tags.
    await call('application.delete', { applicationId: app.applicationId });
    t.ok(await absent(`berth/${app.appName}:rollback-v${v2.version}`), 'the releases went with the application');
  });

  t.test('an image tag that moves on: the release keeps the image it ran, and a cleanup leaves it', async t => {
    const repo = `berth-test/rollback-probe-${Date.now()}`;
    const one = await siteImage(repo, 'latest', 'release-one');
    const port = await freePort();
    const app = await newApp('image', port, 80);
    t.teardown(async () => {
      for (const ref of [`${repo}:latest`, one])
        await docker
          .getImage(ref)
          .remove({ force: true })
          .catch(() => undefined);
    });
    await call('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: `${repo}:latest` });
    t.equal((await runFinished(client, 'application.deploy', { applicationId: app.applicationId })).state, 'done');
    await served(port, /release-one/);
    // The tag moves on to another image; the next deploy runs it.
    const two = await siteImage(repo, 'latest', 'release-two');
    t.teardown(() =>
      docker
        .getImage(two)
        .remove({ force: true })
        .catch(() => undefined),
    );
    t.equal((await runFinished(client, 'application.deploy', { applicationId: app.applicationId })).state, 'done');
    await served(port, /release-two/);
    t.equal(await runningImage(app.appName), two);

    // The first image now has no tag but its rollback tag, and no service runs it: a cleanup leaves it.
    const plan = async () => {
      const res = await client.post('settings.cleanUnusedImages', { dryRun: true });
      t.equal(res.status, 200, JSON.stringify(res.body));
      return (res.body.steps as { step: string; objects: { id: string }[] }[]).flatMap(s => s.objects.map(o => o.id));
    };
    t.notOk((await plan()).includes(one), 'a cleanup leaves the kept release');

    const [first, second] = (await releases(client, app.applicationId))
      .filter(d => d.rollback)
      .map(d => d.rollback!)
      .reverse();
    t.ok(first && second && first.version < second.version, 'two releases kept');
    const reply = await client.post('rollback.rollback', { rollbackId: first!.rollbackId });
    t.equal((await deploymentFinished(client, deploymentIdOf(reply))).state, 'done');
    await served(port, /release-one/);
    t.equal(await runningImage(app.appName), one, 'the rollback ran the image the release ran, not what its tag names now');

    // Rolled forward again: releases v3 and v2 kept, v1 gone — its image is no more kept from a cleanup.
    t.equal((await runFinished(client, 'application.deploy', { applicationId: app.applicationId })).state, 'done');
    await served(port, /release-two/);
    const now = (await releases(client, app.applicationId)).filter(d => d.rollback).map(d => d.rollback!.rollbackId);
    t.equal(now.length, 2);
    t.notOk(now.includes(first!.rollbackId), 'the first release went: two kept, the newest');
    t.ok((await absent(one)) || (await plan()).includes(one), 'once the release went, its image went with its tag, or a cleanup takes it');
  });
});
