// What the git provider connection tests share: `ok` (a 200 or the test stops), and the last step
// of each — an application deployed from the provider's repository on the real Docker engine (its
// Dockerfile built, a port published, the page it serves read back) and a compose stack deployed
// from it — answering what the test then checks (the joined `one`, the deployments, their logs).
import Docker from 'dockerode';
import type { Test } from 'tap';
import { deploymentFinished, deploymentIdOf, freePort, waitFor, type Client } from '@berth/core/testing';

type Reply = { status: number; body: any };

export const ok = async (r: Promise<Reply>, what: string) => {
  const reply = await r;
  if (reply.status !== 200) throw new Error(`${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
};

/** A project for the deploys, and an application in it saved to deploy from the provider (`save` calls application.save<Type>Provider), deployed; its page must answer `serves`. */
export async function deployApplication(t: Test, client: Client, o: { name: string; save: (applicationId: string) => Promise<Reply>; serves: string }) {
  const {
    body: { environment },
  } = await client.post('project.create', { name: `From ${o.name}` });
  const app = await ok(client.post('application.create', { name: o.name.toLowerCase(), environmentId: environment.environmentId }), 'application.create');
  t.teardown(() =>
    new Docker()
      .getService(app.appName)
      .remove()
      .catch(() => undefined),
  );
  const port = await freePort();
  await ok(client.post('port.create', { applicationId: app.applicationId, publishedPort: port, targetPort: 8080, publishMode: 'host', protocol: 'tcp' }), 'port.create');
  // autoDeploy off: these servers have no publicUrl, without which a link with autoDeploy on is refused (its webhook could not be registered).
  await ok(client.post('application.update', { applicationId: app.applicationId, stopGracePeriodSwarm: 1_000_000_000, autoDeploy: false }), 'application.update');
  t.equal((await o.save(app.applicationId)).body, true, 'the source saved');
  await ok(client.post('application.saveBuildType', { applicationId: app.applicationId, buildType: 'dockerfile', dockerfile: 'Dockerfile' }), 'saveBuildType');
  const one = (await client.get('application.one', { applicationId: app.applicationId })).body;
  const deploy = async () => {
    const done = await deploymentFinished(client, deploymentIdOf(await client.post('application.deploy', { applicationId: app.applicationId })));
    t.equal(done.status, 'done', done.errorMessage ?? '');
    const served = await waitFor(
      `port ${port}`,
      async () => {
        const r = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
        return r?.ok ? r.text() : undefined;
      },
      { timeout: 30_000, interval: 200 },
    );
    t.equal(served.trim(), o.serves, 'the deployed application serves the repository');
    return { done, log: (await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body as string };
  };
  return { app, one, environmentId: environment.environmentId as string, deploy };
}

/** A compose stack set to deploy from the provider (`fields` for compose.update), deployed; answers its log and its `one`. */
export async function deployStack(t: Test, client: Client, o: { environmentId: string; name: string; fields: Record<string, unknown> }) {
  const stack = await ok(
    client.post('compose.create', { name: `${o.name} stack`, environmentId: o.environmentId, appName: `${o.name.toLowerCase()}-stack-${Date.now().toString(36)}` }),
    'compose.create',
  );
  t.teardown(() => client.post('compose.delete', { composeId: stack.composeId, deleteVolumes: true }));
  await ok(client.post('compose.update', { composeId: stack.composeId, composePath: './docker-compose.yml', autoDeploy: false, ...o.fields }), 'compose.update');
  const run = await deploymentFinished(client, deploymentIdOf(await client.post('compose.deploy', { composeId: stack.composeId })));
  t.equal(run.status, 'done', run.errorMessage ?? '');
  return { log: (await client.get('deployment.readLogs', { deploymentId: run.deploymentId })).body as string, one: (await client.get('compose.one', { composeId: stack.composeId })).body };
}
