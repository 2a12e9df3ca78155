// The static builder against the real engine: the published directory is served by the
// configured web-server image; paths and configuration are checked before anything is built.
import { symlinkSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import Docker from 'dockerode';
import type { BuildRequest } from '@berth/core';
import { TEST_STATIC_IMAGE, TEST_STATIC_ROOT, waitFor } from '@berth/core/testing';
import { StaticBuilder } from '../src/index.ts';

const docker = new Docker();
const tags: string[] = [];
t.teardown(async () => {
  for (const tag of tags)
    await docker
      .getImage(tag)
      .remove({ force: true })
      .catch(() => {});
});

const builder = new StaticBuilder({ image: TEST_STATIC_IMAGE, root: TEST_STATIC_ROOT });

let n = 0;
function request(sourceDir: string, more: Partial<BuildRequest> = {}) {
  const lines: string[] = [];
  const imageTag = `berth-test/static-builder:${process.pid}-${++n}`;
  tags.push(imageTag);
  const req: BuildRequest = {
    engine: docker,
    sourceDir,
    buildPath: '',
    dockerfile: null,
    dockerContextPath: null,
    dockerBuildStage: null,
    publishDirectory: null,
    buildArgs: {},
    secrets: [],
    imageTag,
    labels: {},
    signal: new AbortController().signal,
    log: line => lines.push(line),
    ...more,
  };
  return { req, lines };
}

/** Starts the image, answers fetch(path) → [status, body] against it, and removes it in teardown. */
async function serve(t: Test, image: string) {
  const container = await docker.createContainer({ Image: image });
  t.teardown(() => container.remove({ force: true }).catch(() => {}));
  await container.start();
  const ip = (await container.inspect()).NetworkSettings.Networks.bridge?.IPAddress;
  // The first request waits for the web server to listen; a refused connection counts as "not yet".
  return (file: string): Promise<[number, string]> =>
    waitFor(
      `${image} answering ${file}`,
      async () => {
        const res = await fetch(`http://${ip}${file}`, { signal: AbortSignal.timeout(2000) });
        return [res.status, await res.text()] as [number, string];
      },
      { timeout: 10_000 },
    );
}

t.test('serves the publish directory of the build path', async t => {
  const dir = t.testdir({ 'secret.txt': 'outside the app', site: { 'package.json': '{}', dist: { 'index.html': '<h1>static</h1>', assets: { 'app.js': 'console.log(1)' } } } });
  const { req, lines } = request(dir, { buildPath: 'site', publishDirectory: 'dist', labels: { 'berth.deployment': 's1' } });
  await builder.build(req);
  t.ok(
    lines.some(l => l.includes(`COPY site/ ${TEST_STATIC_ROOT}/`)),
    'the build output reaches the log',
  );
  t.equal((await docker.getImage(req.imageTag).inspect()).Config.Labels?.['berth.deployment'], 's1');
  const get = await serve(t, req.imageTag);
  t.same(await get('/index.html'), [200, '<h1>static</h1>']);
  t.same(await get('/assets/app.js'), [200, 'console.log(1)']);
  t.equal((await get('/package.json'))[0], 404, 'only the publish directory is served');
  t.equal((await get('/secret.txt'))[0], 404);
});

t.test('without a publish directory the whole build path is served', async t => {
  const dir = t.testdir({ 'index.html': 'root page', sub: { 'a.txt': 'a' } });
  const { req } = request(dir, { buildPath: '/' });
  await builder.build(req);
  const get = await serve(t, req.imageTag);
  t.same(await get('/index.html'), [200, 'root page']);
  t.same(await get('/sub/a.txt'), [200, 'a']);
});

t.test('build secrets are not given to the static builder: one line says so, and the classic build runs', async t => {
  const dir = t.testdir({ 'index.html': 'page' });
  const { req, lines } = request(dir, { buildSecrets: { API_TOKEN: 'static-secret-value' }, secrets: ['static-secret-value'] });
  await builder.build(req);
  t.equal(lines.filter(l => /Build secrets API_TOKEN are not given to the static builder/.test(l)).length, 1);
  t.notOk(
    lines.some(l => /BuildKit|static-secret-value/.test(l)),
    'no BuildKit session, the value nowhere',
  );
  t.notOk(JSON.stringify(await docker.getImage(req.imageTag).history()).includes('static-secret-value'));
});

t.test('the publish directory must exist inside the source', async t => {
  const dir = t.testdir({ app: { 'file.txt': 'x' }, 'outside.txt': 'x' });
  symlinkSync('/etc', path.join(dir, 'app', 'etc-link'));
  const cases: [Partial<BuildRequest>, RegExp][] = [
    [{ publishDirectory: 'dist' }, /^The publish directory "dist" does not exist in the source$/],
    [{ publishDirectory: 'file.txt' }, /^The publish directory "file.txt" is not a directory$/],
    [{ publishDirectory: '../..' }, /^The publish directory "\.\.\/\.\." points outside the source/],
    [{ publishDirectory: 'etc-link' }, /leads outside the source through a symbolic link/],
    [{ buildPath: 'nope', publishDirectory: '.' }, /^The build path "nope" does not exist in the source$/],
  ];
  for (const [more, message] of cases) {
    await t.rejects(builder.build(request(dir, { buildPath: 'app', ...more }).req), { message }, JSON.stringify(more));
  }
});

t.test('a web-server image that is not on the host fails the build with its step', async t => {
  const dir = t.testdir({ 'index.html': 'x' });
  const missing = new StaticBuilder({ image: 'berth-test/no-such-httpd:1', root: '/www' });
  await t.rejects(missing.build(request(dir).req), { message: /^Step 1\/2 : FROM berth-test\/no-such-httpd:1 failed: / });
});

t.test('the image and root are checked before they reach the Dockerfile', async t => {
  for (const image of ['nginx:alpine\nRUN touch /pwned', 'Nginx', 'nginx latest', '-x']) {
    t.throws(() => new StaticBuilder({ image, root: '/www' }), { message: /is not a valid image reference/ }, JSON.stringify(image));
  }
  for (const root of ['www', '/www/../etc', '/w w', '/www\nRUN id', '/$HOME', '/./x']) {
    t.throws(() => new StaticBuilder({ image: 'nginx', root }), { message: /is not a valid absolute directory/ }, JSON.stringify(root));
  }
  t.equal(new StaticBuilder({ image: 'registry.local:5000/team/web:1.2', root: '/srv/www/' }).dockerfile(), 'FROM registry.local:5000/team/web:1.2\nCOPY site/ /srv/www/\n');
  t.equal(new StaticBuilder({ image: 'nginx', root: '/' }).dockerfile(), 'FROM nginx\nCOPY site/ /\n');
  // Without options: nginx, serving its own document root.
  t.equal(new StaticBuilder().dockerfile(), 'FROM nginx:alpine\nCOPY site/ /usr/share/nginx/html/\n', 'the documented default image and root');
});
