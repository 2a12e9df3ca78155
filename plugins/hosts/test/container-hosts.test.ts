// The local Docker engine, for real: swarm mode and the platform network are ensured on
// first use, idempotently (an existing network only when it is provably Berth's); engine errors
// arrive as domain errors.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { ensurePlatformNetwork } from '../src/platform-network.ts';
import { BerthError } from '@berth/core';
import { startTestServer, waitFor, TEST_BASE_IMAGE } from '@berth/core/testing';

/** The test servers run with the config key platformNetwork at its default. */
const PLATFORM_NETWORK = 'berth-network';

t.test('the local engine is a swarm manager with the attachable platform network', async t => {
  const server = await startTestServer({ plugins: ['hosts'], jobs: false });
  t.teardown(() => server.destroy());
  const hosts = server.kernel.container.cradle.hosts;
  const docker = await hosts.local();
  const info = await docker.info();
  t.equal(info.Swarm.LocalNodeState, 'active');
  t.equal(info.Swarm.ControlAvailable, true);
  const network = await docker.getNetwork(PLATFORM_NETWORK).inspect();
  t.equal(network.Driver, 'overlay');
  t.equal(network.Attachable, true);
  t.equal(await hosts.local(), docker, 'prepared once, then reused');

  // A second kernel finds both in place and changes nothing.
  const other = await startTestServer({ plugins: ['hosts'], jobs: false });
  t.teardown(() => other.destroy());
  await other.kernel.container.cradle.hosts.local();
  const after = await docker.listNetworks({ filters: { name: [PLATFORM_NETWORK] } });
  t.equal(after.filter(n => n.Name === PLATFORM_NETWORK).length, 1, 'one platform network');
});

t.test('engine errors become domain errors', async t => {
  const server = await startTestServer({ plugins: ['hosts'], jobs: false });
  t.teardown(() => server.destroy());
  const hosts = server.kernel.container.cradle.hosts;
  const docker = await hosts.local();
  const missing = await hosts.call('inspect service', () => docker.getService('berth-no-such-service').inspect()).catch(e => e);
  t.ok(missing instanceof BerthError);
  t.equal(missing.code, 'NOT_FOUND');
  t.match(missing.message, /Docker: cannot inspect service/);
  const dup = await hosts.call('create the network again', () => docker.createNetwork({ Name: PLATFORM_NETWORK, Driver: 'overlay', Attachable: true, CheckDuplicate: true })).catch(e => e);
  t.equal(dup.code, 'CONFLICT');
  const bad = await hosts.call('create a network', () => docker.createNetwork({ Name: 'berth-test-bad', Driver: 'overlay', IPAM: { Config: [{ Subnet: 'not-a-subnet' }] } })).catch(e => e);
  t.equal(bad.code, 'INTERNAL_SERVER_ERROR');
  t.match(bad.message, /^Docker: cannot create a network: .*not-a-subnet/, "the engine's reason is in the message, as the peer answers it");
  const secret = await hosts
    .call('pull an image', () =>
      Promise.reject(Object.assign(new Error('x'), { statusCode: 500, json: { message: 'Get "https://pusher:s3cret-pw@registry.test/v2/": dial tcp: refused; join with SWMTKN-1-abc-def' } })),
    )
    .catch(e => e);
  t.equal(
    secret.message,
    'Docker: cannot pull an image: Get "https://pusher:******@registry.test/v2/": dial tcp: refused; join with SWMTKN-<redacted>',
    "a URL's password and a join token never reach the answer",
  );
});

t.test("an existing platform network is used only when it is provably Berth's", async t => {
  const server = await startTestServer({ plugins: ['hosts'], jobs: false });
  t.teardown(() => server.destroy());
  const { hosts, logger } = server.kernel.container.cradle;
  const docker = await hosts.local();
  const call = <T>(what: string, fn: () => Promise<T>) => hosts.call(what, fn);
  const suffix = randomBytes(4).toString('hex');
  const made: string[] = [];
  const services: string[] = [];
  t.teardown(async () => {
    for (const s of services)
      await docker
        .getService(s)
        .remove()
        .catch(() => undefined);
    for (const n of made)
      await docker
        .getNetwork(n)
        .remove()
        .catch(() => undefined);
  });
  const network = async (what: string, options: object) => {
    const name = `berth-test-net-${what}-${suffix}`;
    made.push(name);
    await docker.createNetwork({ Name: name, ...options });
    // The engine has answered an inspect of a just-created overlay with an empty Driver (seen in
    // fresh-clone runs): the checks below start once it reports the network as made.
    await waitFor(`network ${name} inspected with its driver`, async () => Boolean(((await docker.getNetwork(name).inspect()) as { Driver?: string }).Driver), { timeout: 10_000 });
    return name;
  };
  // A service that never runs a task (0 replicas): only its attachment matters.
  const attach = async (network: string, labels: Record<string, string>) => {
    const name = `berth-test-svc-${randomBytes(4).toString('hex')}`;
    services.push(name);
    await docker.createService({
      Name: name,
      Labels: labels,
      TaskTemplate: { ContainerSpec: { Image: TEST_BASE_IMAGE, Args: ['sleep', '60'] }, Networks: [{ Target: network }] },
      Mode: { Replicated: { Replicas: 0 } },
    });
    return name;
  };
  const refused = (name: string) =>
    ensurePlatformNetwork(docker, call, name, logger).then(
      () => null,
      (e: BerthError) => e,
    );

  const fresh = `berth-test-net-fresh-${suffix}`;
  made.push(fresh);
  t.equal(await ensurePlatformNetwork(docker, call, fresh, logger), 'created');
  // Right after creation the engine has once answered an inspect of the new overlay with an empty
  // Driver (seen in a fresh-clone run): read it once the engine reports its driver.
  const created = await waitFor(
    `network ${fresh} inspected with its driver`,
    async () => {
      const n = (await docker.getNetwork(fresh).inspect()) as { Driver?: string };
      return n.Driver ? n : undefined;
    },
    { timeout: 10_000 },
  );
  t.match(created, { Driver: 'overlay', Attachable: true, Labels: { 'berth.kind': 'platform' } }, 'made as an attachable overlay with the platform label');
  t.equal(await ensurePlatformNetwork(docker, call, fresh, logger), 'existing', "then found as Berth's");

  const bridge = await network('bridge', { Driver: 'bridge' });
  const notOverlay = await refused(bridge);
  t.equal(notOverlay?.code, 'CONFLICT', 'an unlabelled bridge network of the name is refused');
  t.match(notOverlay?.message, new RegExp(`a network named ${bridge} exists on this engine and is not Berth's .*not an attachable swarm overlay.*docker network rm ${bridge}`));

  const empty = await network('empty', { Driver: 'overlay', Attachable: true });
  t.match((await refused(empty))?.message, /no service of Berth's is attached to it/, "an unlabelled overlay that nothing proves Berth's is refused");

  const earlier = await network('earlier', { Driver: 'overlay', Attachable: true });
  await attach(earlier, { 'berth.kind': 'application', 'berth.id': 'earlier-record' });
  t.equal(await ensurePlatformNetwork(docker, call, earlier, logger), 'existing', "an unlabelled overlay whose attached services are all Berth's is an earlier Berth's");
  const stranger = await attach(earlier, {});
  const mixed = await refused(earlier);
  t.equal(mixed?.code, 'CONFLICT', "once a service that is not Berth's is attached, it is refused");
  t.match(mixed?.message, stranger, 'naming that service');
});
