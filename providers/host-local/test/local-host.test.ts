// The local host provider through the host contract's shared suite, on this machine's engine.
import Docker from 'dockerode';
import t from 'tap';
import { hostConformance } from '@berth/core/testing';
import descriptor from '../src/index.ts';

const engineId = ((await new Docker().info()) as { ID: string }).ID;

hostConformance(t, descriptor, {
  server: null,
  engineId,
  image: 'berth-test/busybox:1',
  refuses: [{ serverId: 'srv1', ipAddress: '10.0.0.1', port: 22, username: 'root', privateKey: null, hostKeyFingerprint: null }],
});

t.test('an engine that does not answer is named, and reached once it answers', async t => {
  const saved = process.env.DOCKER_HOST;
  t.teardown(() => {
    if (saved === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = saved;
  });
  process.env.DOCKER_HOST = 'unix:///nonexistent/docker.sock';
  const host = await (await descriptor.create({}, { config: {} as never })).connect(null);
  t.teardown(() => host.close());
  await t.rejects(host.engine(), { code: 'SERVICE_UNAVAILABLE', message: /host\.local: the Docker engine at unix:\/\/\/nonexistent\/docker\.sock does not answer/ });
  if (saved === undefined) delete process.env.DOCKER_HOST;
  else process.env.DOCKER_HOST = saved;
  t.equal(String(await (await host.engine()).ping()), 'OK', 'the next call tries again');
});
