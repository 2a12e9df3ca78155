// The drop source: the source contract's shared suite on an uploaded archive, then every way an
// archive is refused (each a 400 naming the field, the archive kept before left as it was), the
// peer's unwrapping of a zipped folder, what a redeploy and a removal find, and what a process that
// died mid-swap leaves for the next one.
import t, { type Test } from 'tap';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { sourceConformance } from '@berth/core/testing';
import type { SourceRequest } from '@berth/core';
import provider, { DropSource } from '../src/index.ts';
import { lyingSize, renamed, zipOf } from '../src/testing.ts';

// yauzl is CommonJS: once loaded it is in require.cache, whichever way it was imported.
const yauzlLoaded = () => Object.keys(createRequire(import.meta.url).cache).some(k => k.includes(`${path.sep}yauzl${path.sep}`));
t.notOk(yauzlLoaded(), 'the provider loads no zip reader when it is loaded (nor at boot): the first archive does');

const dir = t.testdir({});
const file = (name: string, bytes: Buffer) => {
  const at = path.join(dir, name);
  writeFileSync(at, bytes);
  return at;
};
const site = file('site.zip', await zipOf({ Dockerfile: 'FROM scratch\n', 'public/': '', 'public/index.html': '<h1>hi</h1>' }));

sourceConformance(t, provider, {
  valid: [{ name: 'an uploaded archive', fields: { dropBuildPath: '' }, upload: site, files: ['Dockerfile', 'public/index.html'] }],
  invalid: [{ name: 'nothing uploaded yet', fields: {}, message: /^No archive has been uploaded for it: upload a zip with application\.dropDeployment$/ }],
});

const limits = { maxEntries: 20, maxUnpackedBytes: 64 * 1024 };
let roots = 0;
const newSource = () => new DropSource({ root: path.join(dir, `root${++roots}`), limits });
const owner = { kind: 'application', id: 'app1' };
/** What a deploy of the owner's source copies into a fresh work dir: its files by path, with their text. */
async function deployed(t: Test, source: DropSource, fields: Record<string, unknown> = {}) {
  const workDir = t.testdir({});
  const request: SourceRequest = { owner, fields, secrets: {}, workDir, signal: new AbortController().signal, log: () => {}, redact: () => {}, sshKey: async () => null, checkLocal: () => {} };
  const result = await source.resolve(request);
  const files: Record<string, string> = {};
  const walk = (at: string, prefix: string) => {
    for (const e of readdirSync(at, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(at, e.name), `${prefix}${e.name}/`);
      else files[`${prefix}${e.name}`] = readFileSync(path.join(at, e.name), 'utf8');
    }
  };
  walk(workDir, '');
  return { result, files, workDir };
}

t.test('a deploy builds what was uploaded last; the build path is dropBuildPath', async t => {
  const source = newSource();
  const { revision } = await source.receive({ owner, file: site, field: 'zip' });
  t.ok(yauzlLoaded(), 'the zip reader is loaded once an archive came');
  t.match(revision, /^the archive sha256:[0-9a-f]{12} \(3 entries, 24 bytes\) uploaded \d{4}-/);
  const first = await deployed(t, source, { dropBuildPath: 'public' });
  t.same(first.files, { Dockerfile: 'FROM scratch\n', 'public/index.html': '<h1>hi</h1>' });
  t.same(first.result, { revision, buildPath: 'public' });
  // A redeploy later builds the same archive again.
  t.same((await deployed(t, source)).files, first.files, 'a second deploy copies the same files');
  await source.receive({ owner, file: file('v2.zip', await zipOf({ 'index.html': 'v2' })), field: 'zip' });
  t.same((await deployed(t, source)).files, { 'index.html': 'v2' }, 'a new upload replaces the files before, none of them left');
  t.same((await deployed(t, source)).result.buildPath, null, 'no dropBuildPath: the root');
});

t.test("a zipped folder is unwrapped (as the peer's), and the Finder's __MACOSX is left out", async t => {
  const source = newSource();
  await source.receive({
    owner,
    file: file('folder.zip', await zipOf({ 'my-site/': '', 'my-site/index.html': 'a', 'my-site/css/x.css': 'b', '__MACOSX/my-site/._index.html': 'junk' })),
    field: 'zip',
  });
  t.same((await deployed(t, source)).files, { 'index.html': 'a', 'css/x.css': 'b' });
  // Two top-level entries: nothing is unwrapped.
  await source.receive({ owner, file: file('two.zip', await zipOf({ 'a/': '', 'a/x': '1', b: '2' })), field: 'zip' });
  t.same((await deployed(t, source)).files, { 'a/x': '1', b: '2' });
});

t.test('executable bits are kept, other modes are not', async t => {
  const source = newSource();
  await source.receive({ owner, file: file('modes.zip', await zipOf({ 'run.sh': { content: '#!/bin/sh\n', mode: 0o100755 }, 'data.txt': { content: 'x', mode: 0o100666 } })), field: 'zip' });
  const { workDir } = await deployed(t, source);
  t.equal(statSync(path.join(workDir, 'run.sh')).mode & 0o777, 0o755);
  t.equal(statSync(path.join(workDir, 'data.txt')).mode & 0o777, 0o644);
});

t.test('a refused archive is a 400 naming the field, and the archive kept before stays', async t => {
  const source = newSource();
  await source.receive({ owner, file: site, field: 'zip' });
  const before = await deployed(t, source);
  const big = 'x'.repeat(40 * 1024);
  const cases: [string, Buffer, RegExp][] = [
    ['a name climbing out (../x)', renamed(await zipOf({ 'zz/evil': 'x' }), 'zz/evil', '../evil'), /invalid relative path|not a plain relative path|leads outside/],
    ['a name climbing out in the middle (a/../../x)', renamed(await zipOf({ 'a/qq/qq/evil': 'x' }), 'a/qq/qq/evil', 'a/../../evil'), /invalid relative path|not a plain relative path|leads outside/],
    ['an absolute name', renamed(await zipOf({ 'zetc/evil': 'x' }), 'zetc/evil', '/etc/evil'), /absolute path/],
    ['a backslash name (Windows separators climbing out)', renamed(await zipOf({ 'qq/evil': 'x' }), 'qq/evil', '..\\evil'), /invalid characters|backslash|not a plain relative path/],
    ['a symbolic link out', await zipOf({ 'index.html': 'x', link: { content: '/etc/passwd', mode: 0o120777 } }), /"link" is a symbolic link: an archive may hold files and directories only/],
    ['a symbolic link inside', await zipOf({ 'index.html': 'x', link: { content: 'index.html', mode: 0o120777 } }), /is a symbolic link/],
    ['a FIFO', await zipOf({ pipe: { content: '', mode: 0o010644 } }), /"pipe" is a special file/],
    ['too many entries', await zipOf(Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}.txt`, 'x']))), /holds 21 entries, more than the 20 an archive may have/],
    ['too many bytes once inflated (declared)', await zipOf({ a: big, b: big }), /declares more than 65536 bytes once inflated/],
    ['a size that lies (declared smaller than inflated)', lyingSize(await zipOf({ a: big }), 'a', 10), /the entry "a" cannot be read: too many bytes in the stream/],
    ['a name too long for the file system (a 300-character component)', await zipOf({ [`${'n'.repeat(300)}.txt`]: 'x' }), /the entry "n{300}\.txt" has a name or path too long for the file system/],
    ['a name held twice', renamed(await zipOf({ aa: '1', ab: '2' }), 'ab', 'aa'), /holds "aa" twice/],
    ['a file and a directory of one name', await zipOf({ a: '1', 'a/b': '2' }), /clashes with another entry/],
    ['not a zip', Buffer.from('<h1>just html</h1>'), /not a zip archive/],
    ['an empty archive', await zipOf({}), /holds no file/],
  ];
  for (const [name, bytes, message] of cases) {
    const error = await source.receive({ owner, file: file('bad.zip', bytes), field: 'zip' }).then(
      () => null,
      (e: { code?: string; message: string; issues?: { path: string[]; message: string }[] }) => e,
    );
    t.equal(error?.code, 'BAD_REQUEST', `${name}: refused`);
    t.match(error?.message, /^zip: /, `${name}: the message names the field`);
    t.match(error?.message, message, `${name}: says why (${error?.message})`);
    t.same(
      error?.issues?.map(i => i.path),
      [['zip']],
      `${name}: the issue's path is the field`,
    );
  }
  t.same((await deployed(t, source)).files, before.files, 'the archive kept before is deployed still');
  t.same(readdirSync(path.join(dir, `root${roots}`, 'application')), ['app1'], 'no unpacked upload left behind');
  // Wherever an escaping name would have landed (beside the staging directory, the workload's, the
  // root, this test's directory or the one holding it), no file of that name exists.
  const evil: string[] = [];
  const walk = (at: string) => {
    for (const e of readdirSync(at, { withFileTypes: true })) {
      if (e.name === 'evil') evil.push(path.join(at, e.name));
      if (e.isDirectory()) walk(path.join(at, e.name));
    }
  };
  walk(path.dirname(dir));
  if (existsSync('/etc/evil')) evil.push('/etc/evil');
  t.same(evil, [], "nothing written outside the archive's directory");
});

t.test('a file past 1 MiB is streamed to disk, its size checked as a small one is', async t => {
  const source = new DropSource({ root: path.join(dir, `root${++roots}`), limits: { maxEntries: 20, maxUnpackedBytes: 8 * 1024 * 1024 } });
  const large = randomBytes(1536 * 1024);
  await source.receive({ owner, file: file('large.zip', await zipOf({ 'asset.bin': large })), field: 'zip' });
  const { workDir } = await deployed(t, source);
  t.ok(readFileSync(path.join(workDir, 'asset.bin')).equals(large), 'the bytes as uploaded');
  await t.rejects(source.receive({ owner, file: file('lying.zip', lyingSize(await zipOf({ 'asset.bin': large }), 'asset.bin', 1024)), field: 'zip' }), {
    message: /^zip: the entry "asset\.bin" cannot be read: too many bytes in the stream/,
  });
});

t.test('a process that died mid-swap: the kept archive set aside is put back, and what it left is swept', async t => {
  const root = path.join(dir, `root${++roots}`);
  await new DropSource({ root, limits }).receive({ owner, file: site, field: 'zip' });
  const kind = path.join(root, 'application');
  // The state between the swap's two renames: the kept archive aside, the upload staged beside it.
  renameSync(path.join(kind, 'app1'), path.join(kind, 'app1.old-1b4e28ba-2fa1-11d2-883f-0016d3cca427'));
  mkdirSync(path.join(kind, 'app1.upload-6fa459ea-ee8a-3ca4-894e-db77e160355e', 'code'), { recursive: true });
  writeFileSync(path.join(kind, 'app1.upload-6fa459ea-ee8a-3ca4-894e-db77e160355e', 'code', 'half.html'), 'half');
  t.same(readdirSync(kind).sort(), ['app1.old-1b4e28ba-2fa1-11d2-883f-0016d3cca427', 'app1.upload-6fa459ea-ee8a-3ca4-894e-db77e160355e'], 'no archive where the workload keeps it');
  // A new process (a new source on the same root) deploys the archive kept before.
  const restarted = new DropSource({ root, limits });
  t.same((await deployed(t, restarted)).files, { Dockerfile: 'FROM scratch\n', 'public/index.html': '<h1>hi</h1>' }, 'the archive set aside is deployed');
  t.same(readdirSync(kind), ['app1'], 'the half-staged upload is gone');

  // Leftovers beside a kept archive (a crash after the swap, before the old one was removed) go at the next upload; another workload's are not touched.
  mkdirSync(path.join(kind, 'app1.old-00000000-0000-0000-0000-000000000001'));
  mkdirSync(path.join(kind, 'app1.upload-00000000-0000-0000-0000-000000000002'));
  mkdirSync(path.join(kind, 'app2.old-00000000-0000-0000-0000-000000000003'));
  await restarted.receive({ owner, file: file('v3.zip', await zipOf({ 'index.html': 'v3' })), field: 'zip' });
  t.same((await deployed(t, restarted)).files, { 'index.html': 'v3' });
  t.same(readdirSync(kind).sort(), ['app1', 'app2.old-00000000-0000-0000-0000-000000000003'], "the workload's leftovers are swept, another's kept");
  // Removing the workload takes its leftovers too.
  mkdirSync(path.join(kind, 'app1.old-00000000-0000-0000-0000-000000000004'));
  await restarted.forget(owner);
  t.same(readdirSync(kind), ['app2.old-00000000-0000-0000-0000-000000000003'], 'nothing of app1 is left');
});

t.test('removing the workload forgets its archive', async t => {
  const source = newSource();
  await source.receive({ owner, file: site, field: 'zip' });
  await source.forget(owner);
  await t.rejects(deployed(t, source), /No archive has been uploaded for it/);
  await source.forget(owner);
  t.pass('forgetting twice is fine');
});
