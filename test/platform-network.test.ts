// The platform network is configuration (platformNetwork, BERTH_PLATFORM_NETWORK): workloads join
// the configured network, and a change of the key is checked at boot — refused with CONFLICT while
// this instance's workloads are attached to the former network (naming both and how many), and
// refused when the new name is a network that is not Berth's (the peer's own dokploy-network on
// the same host), with how to migrate. Real engine, real deploys; networks of their own names.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, runFinished, engineGone, Client, TEST_STATIC_IMAGE } from '@berth/core/testing';

t.setTimeout(600_000);
const docker = new Docker();
const hex = randomBytes(3).toString('hex');
const exists = async (network: string) => (await docker.listNetworks({ filters: { name: [network] } })).some(n => n.Name === network);

t.test('a changed platformNetwork is refused at boot while workloads are attached to the former one', async t => {
  const first = `berth-t-first-${hex}`;
  const second = `berth-t-second-${hex}`;
  let server = await startTestServer({ platformNetwork: first, proxy: 'none', deploySettleSeconds: 0 });
  const services: string[] = [];
  t.teardown(async () => {
    await server.destroy();
    for (const s of services)
      await docker
        .getService(s)
        .remove()
        .catch(() => undefined);
    for (const n of [first, second])
      await docker
        .getNetwork(n)
        .remove()
        .catch(() => undefined);
  });
  t.ok(await exists(first), 'a platformNetwork other than the recorded one is made at boot');
  t.equal(readFileSync(path.join(server.dataDir, 'platform-network'), 'utf8').trim(), first, 'and recorded in the data directory');

  const { client, apiKey } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'net' });
  const { body: app } = await client.post('application.create', { name: 'web', environmentId: environment.environmentId });
  services.push(app.appName);
  await client.post('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_STATIC_IMAGE });
  const done = await runFinished(client, 'application.deploy', { applicationId: app.applicationId });
  t.equal(done.status, 'done', done.errorMessage ?? 'deployed');
  const network = await docker.getNetwork(first).inspect();
  const spec = (await docker.getService(app.appName).inspect()).Spec;
  t.ok(
    spec.TaskTemplate.Networks.some((n: { Target: string }) => n.Target === network.Id || n.Target === first),
    'the workload joined the configured network',
  );

  const refused = await server.restart({ platformNetwork: second }).catch(e => e);
  t.equal(refused?.code, 'CONFLICT', 'the boot is refused');
  t.match(refused?.message, `changed from ${first} to ${second}, and 1 workload is attached to ${first}`, 'naming the old and the new network and how many workloads are on the old one');
  t.notOk(await exists(second), 'nothing was made for the new name');

  server = await server.restart({ platformNetwork: first });
  t.pass('the former value boots');
  const c = new Client(server.url, { apiKey });
  t.equal((await c.post('application.delete', { applicationId: app.applicationId })).status, 200, 'the workload removed');
  t.equal(await engineGone(docker.getService(app.appName).inspect()), 'gone');

  server = await server.restart({ platformNetwork: second });
  t.ok(await exists(second), 'with no workload on the former network the change boots, the new network made');
  t.equal(readFileSync(path.join(server.dataDir, 'platform-network'), 'utf8').trim(), second);
});

t.test("a platformNetwork naming a network that is not Berth's is refused at boot, saying how to migrate", async t => {
  const foreign = `peer-net-${hex}`;
  await docker.createNetwork({ Name: foreign, Driver: 'overlay', Attachable: true }); // as the peer makes dokploy-network: no label of Berth's
  const server = await startTestServer({ proxy: 'none' });
  t.teardown(async () => {
    await server.destroy();
    await docker
      .getNetwork(foreign)
      .remove()
      .catch(() => undefined);
  });
  const refused = await server.restart({ platformNetwork: foreign }).catch(e => e);
  t.equal(refused?.code, 'CONFLICT', 'the boot is refused');
  t.match(refused?.message, `a network named ${foreign} exists on this engine and is not Berth's`);
  t.match(refused?.message, `docker network rm ${foreign}`, 'says how to move from the platform that made it');
  t.match(refused?.message, 'platformNetwork (BERTH_PLATFORM_NETWORK)', 'or how to choose another name');
  t.same((await docker.getNetwork(foreign).inspect()).Labels ?? {}, {}, 'the foreign network is left as it was');
});
