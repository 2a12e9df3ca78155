// The dockerfile builder against the real engine: built content, build args and stages,
// .dockerignore, masked secrets, engine errors, cancellation and path escapes.
import { randomBytes } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import Docker from 'dockerode';
import type { BuildRequest } from '@berth/core';
import { TEST_BASE_IMAGE, waitFor } from '@berth/core/testing';
import { DockerfileBuilder } from '../src/index.ts';
import { buildRequests, runImage as runImageOn } from './builds.ts';

const dockerfileBuilder = new DockerfileBuilder();

const docker = new Docker();
const request = buildRequests(t, docker, 'berth-test/dockerfile-builder');
const runImage = (image: string, cmd: string[]) => runImageOn(docker, image, cmd);

function tree(root: string, files: Record<string, string>) {
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), content);
  }
}

t.test('builds the Dockerfile of the build path with args, labels and the target stage', async t => {
  const dir = t.testdir();
  // A shell that read the build argument as a command would create this file in the image.
  const marker = `/tmp/berth-pwned-${randomBytes(6).toString('hex')}`;
  const greeting = `hi $(touch ${marker}) \`touch ${marker}\`; touch ${marker} | touch ${marker} && touch ${marker} > ${marker} 'q' "d" *`;
  tree(dir, {
    'README.md': 'not in the context',
    'apps/web/docker/app.Dockerfile': [
      `FROM ${TEST_BASE_IMAGE} AS base`,
      'ARG GREETING',
      'COPY site/ /www/',
      'RUN echo "greeting=$GREETING" > /www/arg.txt',
      'CMD ["httpd", "-f", "-p", "3000", "-h", "/www"]',
      `FROM ${TEST_BASE_IMAGE} AS other`,
      'RUN echo other > /other.txt',
    ].join('\n'),
    'apps/web/site/index.html': '<h1>hello</h1>',
    'apps/web/site/secret.key': 'ignored',
    'apps/web/.dockerignore': '*/*.key\n',
  });
  const { req, lines } = request(dir, {
    buildPath: '/apps/web',
    dockerfile: 'docker/app.Dockerfile',
    dockerBuildStage: 'base',
    buildArgs: { GREETING: greeting },
    labels: { 'berth.deployment': 'd1' },
  });
  await dockerfileBuilder.build(req);
  t.ok(
    lines.some(l => /Step \d+\/\d+ : COPY site\/ \/www\//.test(l)),
    'the engine output reaches the log line by line',
  );
  t.notOk(
    lines.some(l => l.includes('other > /other.txt')),
    'stages after the target are not built',
  );
  const image = await docker.getImage(req.imageTag).inspect();
  t.equal(image.Config.Labels?.['berth.deployment'], 'd1');
  t.same(image.Config.Cmd, ['httpd', '-f', '-p', '3000', '-h', '/www']);
  t.same(await runImage(req.imageTag, ['cat', '/www/index.html']), { code: 0, output: '<h1>hello</h1>' });
  t.same(await runImage(req.imageTag, ['cat', '/www/arg.txt']), { code: 0, output: `greeting=${greeting}\n` }, 'the build argument arrives literally');
  t.same(await runImage(req.imageTag, ['test', '-e', marker]), { code: 1, output: '' }, 'no shell ran it: no marker in the image');
  t.same(await runImage(req.imageTag, ['ls', '-1', '/www']), { code: 0, output: 'arg.txt\nindex.html\n' }, '.dockerignore is honoured');
});

t.test('secrets never reach the log', async t => {
  const dir = t.testdir({ Dockerfile: `FROM ${TEST_BASE_IMAGE}\nARG TOKEN\nRUN echo "token is $TOKEN"\n` });
  const { req, lines } = request(dir, { buildArgs: { TOKEN: 's3cr3t-value' }, secrets: ['s3cr3t-value'] });
  await dockerfileBuilder.build(req);
  const log = lines.join('\n');
  t.match(log, 'token is ******');
  t.notMatch(log, 's3cr3t-value');
});

t.test('a failing RUN fails the build with the engine message', async t => {
  const dir = t.testdir({ Dockerfile: `FROM ${TEST_BASE_IMAGE}\nRUN echo before && exit 3\n` });
  const { req, lines } = request(dir);
  await t.rejects(dockerfileBuilder.build(req), { message: "Step 2/2 : RUN echo before && exit 3 failed: The command '/bin/sh -c echo before && exit 3' returned a non-zero code: 3" });
  t.ok(lines.includes('before'), 'the output before the failure is logged');
  t.ok(lines.includes("The command '/bin/sh -c echo before && exit 3' returned a non-zero code: 3"), 'the failure is logged');
  await t.rejects(docker.getImage(req.imageTag).inspect(), { statusCode: 404, message: `No such image: ${req.imageTag}` }, 'no image is tagged');
});

t.test('an unknown base image or a bad Dockerfile fails with the engine message', async t => {
  const dir = t.testdir({ Dockerfile: 'FROM berth-test/no-such-image:1\n', 'bad.Dockerfile': 'NOPE x\n' });
  // Nothing can be pulled here: the engine's registry error, named by the FROM step.
  await t.rejects(dockerfileBuilder.build(request(dir).req), { message: /^Step 1\/1 : FROM berth-test\/no-such-image:1 failed: \S/ });
  await t.rejects(dockerfileBuilder.build(request(dir, { dockerfile: 'bad.Dockerfile' }).req), { message: /unknown instruction: NOPE/i });
});

t.test('an abort stops the build promptly', async t => {
  const marker = `berth-abort-${process.pid}`;
  const dir = t.testdir({ Dockerfile: `FROM ${TEST_BASE_IMAGE}\nRUN echo ${marker} && sleep 30\n` });
  const controller = new AbortController();
  const { req } = request(dir, {
    signal: controller.signal,
    log: line => {
      if (line === marker) controller.abort();
    },
  });
  const started = Date.now();
  await t.rejects(dockerfileBuilder.build(req), { message: 'The build was cancelled' });
  t.ok(Date.now() - started < 10_000, 'rejects well before the RUN would end');
  // The engine drops the build when its client goes: the RUN container goes away.
  const left = await waitFor('the build container removed', async () => (await docker.listContainers({ all: true })).every(c => !c.Command.includes(marker)), { timeout: 10_000, interval: 250 }).catch(
    () => false,
  );
  t.ok(left, 'no build container is left behind');
  await t.rejects(docker.getImage(req.imageTag).inspect(), { statusCode: 404, message: `No such image: ${req.imageTag}` }, 'no image is tagged');

  const already = AbortSignal.abort();
  await t.rejects(dockerfileBuilder.build(request(dir, { signal: already }).req), { message: 'The build was cancelled' });
});

t.test('paths stay inside the source', async t => {
  const dir = t.testdir({ src: { Dockerfile: `FROM ${TEST_BASE_IMAGE}\n`, app: {} }, 'Outside.Dockerfile': `FROM ${TEST_BASE_IMAGE}\n` });
  const source = path.join(dir, 'src');
  symlinkSync('/etc', path.join(source, 'etc-link'));
  symlinkSync('../Outside.Dockerfile', path.join(source, 'Linked.Dockerfile'));
  const cases: [Partial<BuildRequest>, RegExp][] = [
    [{ buildPath: '../' }, /build path "\.\.\/" points outside the source/],
    [{ buildPath: 'app/../..' }, /points outside the source/],
    [{ dockerContextPath: '../..' }, /Docker context path "\.\.\/\.\." points outside the source/],
    [{ dockerfile: '../Outside.Dockerfile' }, /Dockerfile path "\.\.\/Outside\.Dockerfile" points outside the source/],
    [{ buildPath: 'etc-link' }, /build path "etc-link" leads outside the source through a symbolic link/],
    [{ dockerfile: 'Linked.Dockerfile' }, /leads outside the source through a symbolic link/],
    [{ dockerContextPath: '/etc' }, /Docker context path "\/etc" does not exist in the source/],
    [{ buildPath: 'missing' }, /build path "missing" does not exist in the source/],
    [{ buildPath: 'app' }, /Dockerfile path "Dockerfile" does not exist in the source/],
  ];
  for (const [more, message] of cases) {
    await t.rejects(dockerfileBuilder.build(request(source, more).req), { message }, JSON.stringify(more));
  }
  // A context above the build path is fine while it stays inside the source.
  const { req } = request(source, { buildPath: 'app', dockerContextPath: '..' });
  await dockerfileBuilder.build(req);
  t.ok(await docker.getImage(req.imageTag).inspect());
});

t.test('names that reach the engine are checked', async t => {
  const dir = t.testdir({ Dockerfile: `FROM ${TEST_BASE_IMAGE}\n` });
  await t.rejects(dockerfileBuilder.build(request(dir, { imageTag: 'Bad Tag;rm' }).req), { message: '"Bad Tag;rm" is not a valid image tag' });
  await t.rejects(dockerfileBuilder.build(request(dir, { buildArgs: { 'A B': 'x' } }).req), { message: /Build argument "A B" is not a valid name/ });
  await t.rejects(dockerfileBuilder.build(request(dir, { dockerBuildStage: '--x' }).req), { message: /Build stage "--x" is not a valid stage name/ });
});
