// Build secrets against the real engine: served over a BuildKit session through the Engine API,
// mounted by `RUN --mount=type=secret`, and found in no layer, image config or log line.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import Docker from 'dockerode';
import { TEST_BASE_IMAGE, waitFor } from '@berth/core/testing';
import { DockerfileBuilder } from '../src/index.ts';
import { buildRequests, runImage as runImageOn } from './builds.ts';
import { MASK } from '../src/engine.ts';
import { decodeSecretId, encodeSecretResponse } from '../src/buildkit-session.ts';
import protobuf from 'protobufjs/minimal.js';

const builder = new DockerfileBuilder();
const docker = new Docker();
const request = buildRequests(t, docker, 'berth-test/build-secrets');
const runImage = (image: string, cmd: string[]) => runImageOn(docker, image, cmd);

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

t.test('GetSecret messages round-trip through protobufjs as buildkit encodes them', async t => {
  // GetSecretRequest { ID = 1; annotations = 2 (map entry {key = 1, value = 2}) }, annotations first.
  const entry = protobuf.Writer.create().uint32(10).string('k').uint32(18).string('v').finish();
  const req = protobuf.Writer.create().uint32(18).bytes(entry).uint32(10).string('API_TOKEN').finish();
  t.equal(decodeSecretId(req), 'API_TOKEN');
  const res = protobuf.Reader.create(encodeSecretResponse(Buffer.from('v@lue')));
  t.equal(res.uint32(), 10);
  t.equal(Buffer.from(res.bytes()).toString(), 'v@lue');
});

t.test('a build secret reaches the RUN that mounts it, and no layer, config or log line', async t => {
  const secret = `tok-${randomBytes(12).toString('hex')}`;
  const dir = t.testdir();
  // The Dockerfile holds only the secret's hash: the build proves it read the value.
  writeFileSync(
    path.join(dir, 'Dockerfile'),
    [
      `FROM ${TEST_BASE_IMAGE}`,
      'ARG GREETING',
      `RUN --mount=type=secret,id=API_TOKEN sh -c 'test "$(sha256sum < /run/secrets/API_TOKEN | cut -d" " -f1)" = "${sha256(secret)}" && echo ok > /proof && echo "greeting=$GREETING" > /arg'`,
      // The value printed by a step is masked in the deployment log.
      'RUN --mount=type=secret,id=API_TOKEN cat /run/secrets/API_TOKEN; echo',
      'RUN test ! -e /run/secrets/API_TOKEN',
      'CMD ["cat", "/proof"]',
    ].join('\n') + '\n',
  );
  const { req, lines } = request(dir, { buildArgs: { GREETING: 'hello' }, labels: { 'berth.test': 'secrets' }, buildSecrets: { API_TOKEN: secret, OTHER: 'unused-value' }, secrets: [secret] });
  const started = Date.now();
  await builder.build(req);
  t.comment(`BuildKit build with a secret: ${Date.now() - started} ms`);

  t.match((await runImage(req.imageTag, ['cat', '/proof', '/arg'])).output, /^ok\ngreeting=hello\n$/, 'the RUN read the secret (its hash matched) and the build arg');
  const image = docker.getImage(req.imageTag);
  const history = JSON.stringify(await image.history());
  const config = JSON.stringify(await image.inspect());
  t.match(history, /sha256sum < \/run\/secrets\/API_TOKEN/, 'the history holds the steps');
  t.notOk(history.includes(secret), 'no layer of the history holds the secret');
  t.notOk(config.includes(secret), 'the image config holds no secret');
  t.equal(JSON.parse(config).Config.Labels['berth.test'], 'secrets', 'labels are set');
  const log = lines.join('\n');
  t.notOk(log.includes(secret), 'no log line holds the secret');
  t.ok(log.includes(MASK), 'the printed secret is masked');
  t.match(log, /build secrets API_TOKEN, OTHER are mounted by id/);
  t.match(log, /#\d+ \[2\/4\] RUN --mount=type=secret,id=API_TOKEN/, 'BuildKit steps reach the log');
  t.notOk(log.includes('unused-value'));
});

t.test('a build asking for a secret that was not given fails, naming it', async t => {
  const dir = t.testdir();
  writeFileSync(path.join(dir, 'Dockerfile'), `FROM ${TEST_BASE_IMAGE}\nRUN --mount=type=secret,id=NPM_TOKEN cat /run/secrets/NPM_TOKEN\n`);
  const { req, lines } = request(dir, { buildSecrets: { API_TOKEN: 'given-value' } });
  await t.rejects(builder.build(req), /RUN --mount=type=secret,id=NPM_TOKEN .*failed: .*the build asked for the build secret NPM_TOKEN, which is not among the build secrets: API_TOKEN/);
  t.match(lines.join('\n'), /ERROR/);

  // A required mount fails in BuildKit itself, with the session's NOT_FOUND.
  writeFileSync(path.join(dir, 'Dockerfile'), `FROM ${TEST_BASE_IMAGE}\nRUN --mount=type=secret,id=NPM_TOKEN,required=true true\n`);
  const required = request(dir, { buildSecrets: { API_TOKEN: 'given-value' } });
  await t.rejects(builder.build(required.req), /NPM_TOKEN.*not found/i);
});

t.test('without build secrets the classic builder is kept, and a --mount says why it fails', async t => {
  const dir = t.testdir();
  writeFileSync(path.join(dir, 'Dockerfile'), `FROM ${TEST_BASE_IMAGE}\nRUN echo classic > /c\n`);
  const plain = request(dir);
  const started = Date.now();
  await builder.build(plain.req);
  t.comment(`classic build: ${Date.now() - started} ms`);
  t.match(plain.lines.join('\n'), /^Step 1\/2 : FROM/m, 'the classic builder’s output');
  t.notMatch(plain.lines.join('\n'), /BuildKit/);

  writeFileSync(path.join(dir, 'Dockerfile'), `FROM ${TEST_BASE_IMAGE}\nRUN --mount=type=secret,id=API_TOKEN true\n`);
  await t.rejects(builder.build(request(dir).req), /when the application has build secrets/);
});

t.test('cancelling a BuildKit build stops it and ends the session', async t => {
  const dir = t.testdir();
  writeFileSync(path.join(dir, 'Dockerfile'), `FROM ${TEST_BASE_IMAGE}\nRUN --mount=type=secret,id=API_TOKEN sleep 60\n`);
  const ac = new AbortController();
  const { req, lines } = request(dir, { buildSecrets: { API_TOKEN: 'x-value' }, signal: ac.signal });
  const build = builder.build(req);
  t.ok(await waitFor('the RUN --mount step to start', () => lines.some(l => /RUN --mount/.test(l)), { timeout: 20_000 }), 'the build reaches the step that uses the secret');
  const started = Date.now();
  ac.abort();
  await t.rejects(build, /cancelled/);
  t.ok(Date.now() - started < 5_000, 'the build stops at once');
  await t.rejects(docker.getImage(req.imageTag).inspect(), { message: /\(HTTP code 404\)/ }, 'no image was tagged');
});

t.test('invalid secret names are refused before the engine is asked', async t => {
  const dir = t.testdir();
  writeFileSync(path.join(dir, 'Dockerfile'), `FROM ${TEST_BASE_IMAGE}\n`);
  await t.rejects(builder.build(request(dir, { buildSecrets: { 'BAD NAME': 'v' } }).req), /Build secret "BAD NAME" is not a valid name/);
});
