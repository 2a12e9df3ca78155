// The docker source: the source contract's shared suite, and the registry credentials it hands
// the deployer (the pull itself is the kit's, tested with the application's deploys).
import t from 'tap';
import { sourceConformance } from '@berth/core/testing';
import provider, { DockerSource } from '../src/index.ts';

sourceConformance(t, provider, {
  valid: [
    { name: 'an image', fields: { dockerImage: 'berth-test/busybox:1' }, image: 'berth-test/busybox:1' },
    { name: 'an image with credentials', fields: { dockerImage: 'registry.example.com:5000/team/app:2', username: 'me' }, secrets: { password: 'pw' }, image: 'registry.example.com:5000/team/app:2' },
  ],
  invalid: [{ name: 'no image saved', fields: { dockerImage: null }, message: /^No docker image is set: save one with saveDockerProvider$/ }],
});

t.test("registry credentials: the saved registry, else the image's own host, else docker.io", async t => {
  const source = new DockerSource();
  const resolve = (fields: Record<string, unknown>, password: string | null) =>
    source.resolve({ fields, secrets: { password }, workDir: t.testdir(), signal: new AbortController().signal, log: () => {}, redact: () => {}, sshKey: async () => null, checkLocal: () => {} });
  t.same((await resolve({ dockerImage: 'app:1', username: 'me' }, 'pw')).registryAuth, { username: 'me', password: 'pw', serveraddress: 'docker.io' });
  t.same((await resolve({ dockerImage: 'ghcr.io/me/app:1', username: 'me' }, 'pw')).registryAuth, { username: 'me', password: 'pw', serveraddress: 'ghcr.io' });
  t.same((await resolve({ dockerImage: 'ghcr.io/me/app:1', username: 'me', registryUrl: 'mirror.example.com' }, 'pw')).registryAuth?.serveraddress, 'mirror.example.com');
  t.equal((await resolve({ dockerImage: 'app:1', username: 'me' }, null)).registryAuth, null, 'no password, no credentials');
  t.equal((await resolve({ dockerImage: 'app:1' }, 'pw')).registryAuth, null, 'no username, no credentials');
});
