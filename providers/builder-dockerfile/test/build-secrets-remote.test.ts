// Build secrets on a server's engine: the BuildKit session goes over the same SSH connection as
// the build (the SSH host provider's engine), against a kit host with its own sshd and dockerd.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import t from 'tap';
import { canRun, TEST_BASE_IMAGE } from '@berth/core/testing';
import { loadImage, remoteHostsMissing, sharedRemoteHosts } from '@berth/test/remote-hosts';
import ssh from '@berth/provider-host-ssh';
import { DockerfileBuilder } from '../src/index.ts';

if (canRun(t, 'remote-hosts', remoteHostsMissing())) {
  const {
    hosts: [h],
  } = await sharedRemoteHosts(1);
  await loadImage(h!, TEST_BASE_IMAGE);
  const provider = await Promise.resolve(
    ssh.create({ maxChannels: 4, keepaliveInterval: 15_000, readyTimeout: 20_000, engineTransport: 'stream-local', engineSocket: '/var/run/docker.sock' }, { config: {} as never }),
  );
  const host = await provider.connect({ serverId: 'build-secrets', ipAddress: h!.address, port: 22, username: h!.user, privateKey: h!.privateKey, hostKeyFingerprint: h!.hostKeyFingerprint });
  t.teardown(() => host.close());
  // The host's engine seen directly, to check what the build left there.
  const direct = new Docker({ socketPath: h!.socket });

  t.test("a build secret reaches a build on the server's engine over its SSH connection", async t => {
    const secret = `remote-${randomBytes(12).toString('hex')}`;
    const hash = createHash('sha256').update(secret).digest('hex');
    const dir = t.testdir();
    writeFileSync(
      path.join(dir, 'Dockerfile'),
      `FROM ${TEST_BASE_IMAGE}\nRUN --mount=type=secret,id=API_TOKEN,required=true sh -c 'test "$(sha256sum < /run/secrets/API_TOKEN | cut -d" " -f1)" = "${hash}" && echo ok > /proof'\n`,
    );
    const imageTag = `berth-test/build-secrets-remote:${process.pid}`;
    t.teardown(() =>
      direct
        .getImage(imageTag)
        .remove({ force: true })
        .catch(() => {}),
    );
    const lines: string[] = [];
    const started = Date.now();
    await new DockerfileBuilder().build({
      engine: await host.engine(),
      sourceDir: dir,
      buildPath: '',
      dockerfile: null,
      dockerContextPath: null,
      dockerBuildStage: null,
      publishDirectory: null,
      buildArgs: {},
      secrets: [secret],
      buildSecrets: { API_TOKEN: secret },
      imageTag,
      labels: {},
      signal: new AbortController().signal,
      log: line => lines.push(line),
    });
    t.comment(`BuildKit build with a secret on the kit host over SSH: ${Date.now() - started} ms`);
    const history = JSON.stringify(await direct.getImage(imageTag).history());
    t.match(history, /sha256sum < \/run\/secrets\/API_TOKEN/, "the step is in the server's image");
    t.notOk(history.includes(secret), 'the secret is in no layer');
    t.notOk(JSON.stringify(await direct.getImage(imageTag).inspect()).includes(secret), 'nor in the image config');
    t.notOk(lines.join('\n').includes(secret), 'nor in the log');
    const container = await direct.createContainer({ Image: imageTag, Cmd: ['cat', '/proof'], Tty: true });
    try {
      await container.start();
      await container.wait();
      t.equal((await container.logs({ stdout: true })).toString().trim(), 'ok', 'the RUN read the secret (its hash matched)');
    } finally {
      await container.remove({ force: true });
    }
  });
}
