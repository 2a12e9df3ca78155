// The program builders with stand-in programs on a private PATH: the exact argument arrays,
// literal values (no shell), the missing-program message, output, failures and aborts.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import Docker from 'dockerode';
import type { BuildRequest } from '@berth/core';
import { TEST_BASE_IMAGE, waitFor, shellTricks } from '@berth/core/testing';
import { ProgramBuilder, programBuildTypes, type ProgramBuildType } from '../src/index.ts';

const docker = new Docker();
const tags: string[] = [];
t.teardown(async () => {
  for (const tag of tags)
    await docker
      .getImage(tag)
      .remove({ force: true })
      .catch(() => {});
});

let n = 0;
/** A request for an app dir; `tagged` makes the image exist as if the program had built it. */
async function request(sourceDir: string, more: Partial<BuildRequest> = {}, tagged = true) {
  const lines: string[] = [];
  const tag = `${process.pid}-${++n}`;
  const imageTag = `berth-test/program-builder:${tag}`;
  tags.push(imageTag);
  if (tagged) await docker.getImage(TEST_BASE_IMAGE).tag({ repo: 'berth-test/program-builder', tag });
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

/**
 * Writes a stand-in for `program` into bin: it records its arguments (NUL-separated), its working
 * directory and its environment into out, then runs `body`.
 */
function fake(bin: string, program: string, out: string, body = 'echo "building the image"\necho "a warning" >&2') {
  const file = path.join(bin, program);
  writeFileSync(file, ['#!/bin/sh', `for a in "$@"; do printf '%s\\0' "$a"; done > '${out}/argv'`, `pwd > '${out}/cwd'`, `env > '${out}/env'`, body, ''].join('\n'));
  chmodSync(file, 0o755);
}
/** One fixture directory per test (tap gives one per test): bin for programs, out for their records, src the source. */
function fixture(t: Test, src: Record<string, unknown> = { 'index.js': '' }) {
  const root = t.testdir({ bin: {}, out: {}, src } as never);
  return { bin: path.join(root, 'bin'), out: path.join(root, 'out'), dir: path.join(root, 'src'), root };
}
const argvOf = (out: string) => readFileSync(path.join(out, 'argv'), 'utf8').split('\0').slice(0, -1);

type Pairs = [string, string][];
/** `--flag key=value` per pair: each pair is two arguments, the value never split. */
const flags = (flag: string, pairs: Pairs) => pairs.flatMap(([k, v]) => [flag, `${k}=${v}`]);
const expected: Record<ProgramBuildType, (app: string, tag: string, env: Pairs, labels: Pairs) => string[]> = {
  nixpacks: (app, tag, env, labels) => ['build', app, '--name', tag, ...flags('--env', env), ...flags('--label', labels)],
  // pack and railpack have no label flag.
  heroku_buildpacks: (app, tag, env) => ['build', tag, '--path', app, '--builder', 'heroku/builder:24', ...flags('--env', env)],
  paketo_buildpacks: (app, tag, env) => ['build', tag, '--path', app, '--builder', 'paketobuildpacks/builder-jammy-full', ...flags('--env', env)],
  railpack: (app, tag, env) => ['build', app, '--name', tag, '--progress', 'plain', ...flags('--env', env)],
};
const plainEnv: Pairs = [
  ['NODE_ENV', 'production'],
  ['GREETING', 'hi'],
];
const plainLabels: Pairs = [['berth.deployment', 'd1']];

t.test('a missing program is named in the error', async t => {
  const { bin: empty, dir } = fixture(t);
  writeFileSync(path.join(empty, 'pack.txt'), 'not a program');
  const programs: Record<ProgramBuildType, string> = { nixpacks: 'nixpacks', heroku_buildpacks: 'pack', paketo_buildpacks: 'pack', railpack: 'railpack' };
  t.same([...programBuildTypes].sort(), Object.keys(programs).sort(), 'every program build type is covered');
  for (const type of programBuildTypes) {
    const builder = new ProgramBuilder(type, { searchPath: `${empty}${path.delimiter}/nonexistent` });
    t.equal(builder.program, programs[type]);
    await t.rejects(builder.build((await request(dir, {}, false)).req), { message: `The ${type} build type needs the "${programs[type]}" program on the host, and it is not installed` }, type);
  }
});

t.test('a program in a relative PATH entry or without the execute bit is not used', async t => {
  const { bin, out, dir } = fixture(t);
  fake(bin, 'nixpacks', out);
  chmodSync(path.join(bin, 'nixpacks'), 0o644);
  const notExecutable = new ProgramBuilder('nixpacks', { searchPath: bin });
  await t.rejects(notExecutable.build((await request(dir, {}, false)).req), { message: /needs the "nixpacks" program/ });
  chmodSync(path.join(bin, 'nixpacks'), 0o755);
  const relative = new ProgramBuilder('nixpacks', { searchPath: path.relative(process.cwd(), bin) });
  await t.rejects(relative.build((await request(dir, {}, false)).req), { message: /needs the "nixpacks" program/ });
});

t.test('each build type runs its program with the exact argument array in the build path', async t => {
  process.env.BERTH_SECRET = 'must-not-reach-the-program-0123456789';
  t.teardown(() => {
    delete process.env.BERTH_SECRET;
  });
  const { root, dir } = fixture(t, { apps: { web: { 'index.js': '' } } });
  const app = path.join(dir, 'apps', 'web');
  for (const type of programBuildTypes) {
    const bin = path.join(root, `bin-${type}`);
    const out = path.join(root, `out-${type}`);
    mkdirSync(bin);
    mkdirSync(out);
    const builder = new ProgramBuilder(type, { searchPath: `/nonexistent${path.delimiter}${bin}` });
    fake(bin, builder.program, out);
    const { req, lines } = await request(dir, { buildPath: '/apps/web', buildArgs: { NODE_ENV: 'production', GREETING: 'hi' }, labels: { 'berth.deployment': 'd1' } });
    await builder.build(req);
    t.same(argvOf(out), expected[type](app, req.imageTag, plainEnv, plainLabels), `${type} argv`);
    t.equal(readFileSync(path.join(out, 'cwd'), 'utf8').trim(), app, `${type} runs in the build path`);
    t.notMatch(readFileSync(path.join(out, 'env'), 'utf8'), 'must-not-reach-the-program', `${type} does not get Berth's secrets`);
    const labelledAfter = builder.program !== 'nixpacks';
    t.same(
      lines,
      [
        `$ ${[builder.program, ...expected[type](app, req.imageTag, plainEnv, plainLabels)].join(' ')}`,
        'building the image',
        'a warning',
        ...(labelledAfter ? [`Adding Berth's labels to ${req.imageTag} (${builder.program} has no label flag)`] : []),
      ],
      `${type} log`,
    );
    if (labelledAfter) {
      // The stand-in tagged the base image: the labels are added on top, its config kept.
      const [image, base] = await Promise.all([docker.getImage(req.imageTag).inspect(), docker.getImage(TEST_BASE_IMAGE).inspect()]);
      t.equal(image.Config.Labels?.['berth.deployment'], 'd1', `${type}: the image carries the owner labels`);
      t.same([image.Config.Cmd, image.Config.Entrypoint, image.Config.Env], [base.Config.Cmd, base.Config.Entrypoint, base.Config.Env], `${type}: and keeps its config`);
    }
  }
});

t.test('a configured buildpacks builder image replaces the default', async t => {
  const { bin, out, dir } = fixture(t);
  fake(bin, 'pack', out);
  const builder = new ProgramBuilder('paketo_buildpacks', { searchPath: bin, builder: 'registry.local:5000/team/builder:2' });
  const { req } = await request(dir);
  await builder.build(req);
  t.same(argvOf(out), ['build', req.imageTag, '--path', dir, '--builder', 'registry.local:5000/team/builder:2']);
  t.throws(() => new ProgramBuilder('nixpacks', { builder: 'x' }), { message: 'The nixpacks build type takes no builder image' });
  t.throws(() => new ProgramBuilder('heroku_buildpacks', { builder: 'x; rm -rf /' }), { message: /is not a valid image reference/ });
  t.throws(() => new ProgramBuilder('dockerfile' as ProgramBuildType), { message: '"dockerfile" is not a build type run by a program' });
  t.throws(() => new ProgramBuilder('toString' as ProgramBuildType), { message: /is not a build type run by a program/ });
});

t.test('values with shell metacharacters are each one argument, unchanged, for every build type', async t => {
  // A build path that starts with "-" and holds what a shell would read: it reaches the program as part of an absolute path.
  const appDirName = `-app; $(id) | 'q' "d" \`id\` & > y`;
  const { root, dir } = fixture(t, { [appDirName]: { 'index.js': '' } });
  const app = path.join(dir, appDirName);
  const marker = path.join(root, 'pwned');
  const tricks = shellTricks(marker);
  const env: Pairs = tricks.map((v, i) => [`TRICK_${i}`, v]);
  const labels: Pairs = tricks.map((v, i) => [`test.trick.${i}`, v]);
  for (const type of programBuildTypes) {
    const bin = path.join(root, `bin-${type}`);
    const out = path.join(root, `out-${type}`);
    mkdirSync(bin);
    mkdirSync(out);
    const builder = new ProgramBuilder(type, { searchPath: bin });
    fake(bin, builder.program, out);
    const { req } = await request(dir, { buildPath: appDirName, buildArgs: Object.fromEntries(env), labels: Object.fromEntries(labels) });
    await builder.build(req);
    t.same(argvOf(out), expected[type](app, req.imageTag, env, labels), `${type}: the argument array the program received`);
    t.equal(readFileSync(path.join(out, 'cwd'), 'utf8'), `${app}\n`, `${type}: runs in the build path`);
  }
  t.notOk(existsSync(marker), 'no shell ran any of it');
});

t.test('secrets are masked in the command line and in the program output', async t => {
  const { bin, out, dir } = fixture(t);
  fake(bin, 'railpack', out, 'printf "%s\\n" "$@" | grep TOKEN=');
  const { req, lines } = await request(dir, { buildArgs: { TOKEN: 'tok-s3cr3t' }, secrets: ['tok-s3cr3t'] });
  await new ProgramBuilder('railpack', { searchPath: bin }).build(req);
  t.same(argvOf(out).slice(-2), ['--env', 'TOKEN=tok-s3cr3t'], 'the program gets the secret');
  t.notMatch(lines.join('\n'), 'tok-s3cr3t', 'the secret never reaches the log');
  t.match(lines[0], '--env TOKEN=******', 'the command line is masked');
  t.ok(lines.includes('TOKEN=******'), 'the program output is masked');
});

t.test('a failing program fails the build with its last output line', async t => {
  const { bin, out, dir } = fixture(t);
  fake(bin, 'nixpacks', out, 'echo "step 1"\necho "\x1b[31mError: no start command could be found\x1b[0m" >&2\nexit 3');
  const { req, lines } = await request(dir, { secrets: [] }, false);
  await t.rejects(new ProgramBuilder('nixpacks', { searchPath: bin }).build(req), { message: 'nixpacks failed with exit code 3: Error: no start command could be found' });
  t.ok(lines.includes('Error: no start command could be found'), 'colour codes are stripped from the log');
});

t.test('a program that succeeds without tagging the image fails the build', async t => {
  const { bin, out, dir } = fixture(t);
  fake(bin, 'pack', out);
  const { req } = await request(dir, {}, false);
  await t.rejects(new ProgramBuilder('heroku_buildpacks', { searchPath: bin }).build(req), {
    message: `pack finished but the engine has no image ${req.imageTag}: does it build on the same Docker host?`,
  });
});

/** Whether the process is still running (a zombie that awaits its reaper counts as ended). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

t.test('an abort kills the program and what it started', async t => {
  const { bin, out, dir } = fixture(t);
  // Like nixpacks, which runs `docker build` as its child.
  fake(bin, 'nixpacks', out, `sleep 30 &\necho $! > '${out}/child'\necho started\nwait`);
  const controller = new AbortController();
  const { req } = await request(
    dir,
    {
      signal: controller.signal,
      log: line => {
        if (line === 'started') controller.abort();
      },
    },
    false,
  );
  const started = Date.now();
  await t.rejects(new ProgramBuilder('nixpacks', { searchPath: bin }).build(req), { message: 'The build was cancelled' });
  t.ok(Date.now() - started < 15_000, 'rejects well before the 30 s program would end');
  const child = Number(readFileSync(path.join(out, 'child'), 'utf8'));
  const stopped = await waitFor(`process ${child} ended`, () => !running(child), { timeout: 10_000 }).catch(() => false);
  t.ok(stopped, "the program's own child is stopped too");

  const timeout = new AbortController();
  timeout.abort(new Error('The deployment timed out'));
  await t.rejects(
    new ProgramBuilder('nixpacks', { searchPath: bin }).build((await request(dir, { signal: timeout.signal }, false)).req),
    { message: 'The deployment timed out' },
    'the abort reason is the error',
  );
});

t.test('names that reach the program are checked', async t => {
  const { bin, out, dir } = fixture(t);
  fake(bin, 'nixpacks', out);
  const builder = new ProgramBuilder('nixpacks', { searchPath: bin });
  await t.rejects(builder.build((await request(dir, { imageTag: '--push' }, false)).req), { message: '"--push" is not a valid image tag' });
  await t.rejects(builder.build((await request(dir, { buildArgs: { '-x': '1' } }, false)).req), { message: /Build argument "-x" is not a valid name/ });
  await t.rejects(builder.build((await request(dir, { labels: { '--x': '1' } }, false)).req), { message: 'Label "--x" is not a valid label name' });
  await t.rejects(builder.build((await request(dir, { buildPath: '../..' }, false)).req), { message: /points outside the source/ });
  t.notOk(existsSync(path.join(out, 'argv')), 'the program never ran');
});
