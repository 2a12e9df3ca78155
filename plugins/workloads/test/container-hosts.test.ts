// The local Docker engine, for real: swarm mode and the platform network are ensured on
// first use, idempotently; engine errors arrive as domain errors.
import t from 'tap';
import { PLATFORM_NETWORK } from '../src/container-hosts.ts';
import { BerthError } from '@berth/core';
import { startTestServer } from '@berth/core/testing';

t.test('the local engine is a swarm manager with the attachable platform network', async t => {
  const server = await startTestServer({ plugins: ['workloads'], jobs: false });
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
  const other = await startTestServer({ plugins: ['workloads'], jobs: false });
  t.teardown(() => other.destroy());
  await other.kernel.container.cradle.hosts.local();
  const after = await docker.listNetworks({ filters: { name: [PLATFORM_NETWORK] } });
  t.equal(after.filter(n => n.Name === PLATFORM_NETWORK).length, 1, 'one platform network');
});

t.test('engine errors become domain errors', async t => {
  const server = await startTestServer({ plugins: ['workloads'], jobs: false });
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
  t.equal(bad.message, 'Docker: cannot create a network', 'no engine detail reaches the caller');
});
