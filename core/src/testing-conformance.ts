// The conformance suites every builder's and every source's test calls (driverConformance in
// @berth/plugin-workloads/testing is the database drivers' one): the descriptor and its options,
// and the instance's behaviour — on the real engine for builders given an application they can
// build, on real temporary directories for sources.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import Docker from 'dockerode';
import { Value } from 'typebox/value';
import type { BerthConfig } from './config.ts';
import { resolveConfig } from './loader.ts';
import type { Builder, BuildRequest } from './contracts/builders.ts';
import type { SourceProvider, SourceRequest } from './contracts/sources.ts';
import { isProviderDescriptor, type ProviderDescriptor } from './provider.ts';

let made = 0;
const scratch = (t: Test, prefix: string) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), `berth-conformance-${prefix}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};
function writeTree(root: string, files: Record<string, string>) {
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), content);
  }
}

/** A configuration as the kernel would load it (the enabled plugins' sections included), for the factory's context. */
const testConfig = async (t: Test): Promise<BerthConfig> => (await resolveConfig({}, { dataDir: scratch(t, 'data') })).config;

/**
 * The descriptor's shape, its options (defaults applied) and the instance the factory makes, which
 * serves the descriptor's id (`id`, or `kind` for database drivers). Every contract's suite starts
 * with it; a provider of a contract without a suite of its own calls it directly.
 */
export async function descriptorConformance<I>(t: Test, descriptor: ProviderDescriptor, contract: string, options?: unknown): Promise<I> {
  t.ok(isProviderDescriptor(descriptor), 'the default export is made with defineProvider()');
  t.equal(descriptor.contract, contract, `a provider of contract ${contract}`);
  t.match(descriptor.id, /^[a-z][a-z0-9_]*$/, 'its id is a wire value');
  t.equal((descriptor.options as { type?: string }).type, 'object', 'its options are an object schema');
  const withDefaults = Value.Default(descriptor.options, structuredClone(options ?? {}));
  t.ok(Value.Check(descriptor.options, withDefaults), `the options given are valid: ${JSON.stringify([...Value.Errors(descriptor.options, withDefaults)].map(e => e.message))}`);
  t.notOk(Value.Check(descriptor.options, { ...(withDefaults as object), 'not-an-option': true }), 'an unknown option is refused (additionalProperties: false)');
  const instance = (await descriptor.create(withDefaults as never, { config: await testConfig(t) })) as unknown as I & { id?: string; kind?: string };
  t.equal(contract === 'database' ? instance.kind : instance.id, descriptor.id, "the instance serves the descriptor's id");
  return instance;
}

export interface BuilderConformanceOptions {
  /** The provider's options (default: none). */
  options?: Record<string, unknown>;
  /** An application this builder builds on the real engine (files by path); without it only what needs no engine build is checked. */
  app?: Record<string, string>;
  /** Request fields the app needs (dockerfile, publishDirectory...). */
  request?: Partial<BuildRequest>;
  /** Whether the built image carries the request's labels (false for programs without a label flag). */
  labels?: boolean;
}

/** The shared suite of the builder contract. */
export function builderConformance(t: Test, descriptor: ProviderDescriptor, o: BuilderConformanceOptions = {}): void {
  const docker = new Docker();
  const request = (sourceDir: string, more: Partial<BuildRequest> = {}) => {
    const lines: string[] = [];
    const imageTag = `berth-test/conformance-${descriptor.id.replace(/_/g, '-')}:${process.pid}-${++made}`;
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
      labels: { 'berth.conformance': imageTag.split(':')[1]! },
      signal: new AbortController().signal,
      log: line => lines.push(line),
      ...o.request,
      ...more,
    };
    t.teardown(() =>
      docker
        .getImage(imageTag)
        .remove({ force: true })
        .then(
          () => undefined,
          () => undefined,
        ),
    );
    return { req, lines };
  };
  const noImage = async (tag: string) =>
    docker
      .getImage(tag)
      .inspect()
      .then(
        () => false,
        () => true,
      );

  t.test(`builder ${descriptor.id}: conformance`, async t => {
    const builder = await descriptorConformance<Builder>(t, descriptor, 'builder', o.options);
    t.type(builder.build, 'function', 'it builds');

    t.test('a build path outside the source is refused, and nothing is built', async t => {
      const dir = scratch(t, 'escape');
      writeTree(dir, o.app ?? { 'index.html': 'x' });
      const { req } = request(dir, { buildPath: '../outside' });
      await t.rejects(builder.build(req), Error);
      t.ok(await noImage(req.imageTag), 'no image under the tag');
    });

    t.test('an aborted build rejects and leaves no image', async t => {
      const dir = scratch(t, 'abort');
      writeTree(dir, o.app ?? { 'index.html': 'x' });
      const controller = new AbortController();
      controller.abort();
      const { req } = request(dir, { signal: controller.signal });
      await t.rejects(builder.build(req), Error);
      t.ok(await noImage(req.imageTag), 'no image under the tag');
    });

    if (!o.app) return;
    t.test('builds the application into the requested tag, logging lines', async t => {
      const dir = scratch(t, 'build');
      writeTree(dir, o.app!);
      const { req, lines } = request(dir);
      await builder.build(req);
      const image = await docker.getImage(req.imageTag).inspect();
      t.ok(image.Id, `the engine has ${req.imageTag}`);
      if (o.labels !== false) t.same(image.Config.Labels?.['berth.conformance'], req.labels['berth.conformance'], "with the request's labels");
      t.ok(lines.length > 0 && lines.every(l => typeof l === 'string'), 'the build log got lines');
    });
  });
}

export interface SourceCase {
  /** What the case is. */
  name: string;
  /** The workload's saved fields. */
  fields: Record<string, unknown>;
  secrets?: Record<string, string | null>;
  /** Stored SSH keys by id. */
  sshKeys?: Record<string, string>;
  /** A file the source receives for the case's workload before it resolves (a source of uploads: drop). */
  upload?: string;
}

export interface SourceConformanceOptions {
  options?: Record<string, unknown>;
  /** Fields this source deploys from: images, or checkouts with the files expected in them. */
  valid: (SourceCase & ({ image: string } | { files: string[] }))[];
  /** Fields it refuses, with the message the deployment log shows. */
  invalid: (SourceCase & { message: RegExp })[];
}

/** The shared suite of the source contract. */
export function sourceConformance(t: Test, descriptor: ProviderDescriptor, o: SourceConformanceOptions): void {
  const request = (t: Test, c: SourceCase, signal = new AbortController().signal) => {
    const workDir = scratch(t, 'work');
    const lines: string[] = [];
    const redacted: string[] = [];
    const req: SourceRequest = {
      owner: { kind: 'conformance', id: `case${++made}` },
      fields: c.fields,
      secrets: c.secrets ?? {},
      workDir,
      signal,
      log: line => lines.push(line),
      redact: value => void redacted.push(value),
      sshKey: async id => c.sshKeys?.[id] ?? null,
      checkLocal: () => {},
    };
    return { req, lines, redacted, workDir };
  };

  t.test(`source ${descriptor.id}: conformance`, async t => {
    const source = await descriptorConformance<SourceProvider>(t, descriptor, 'source', o.options);
    t.type(source.resolve, 'function', 'it resolves');
    t.ok(o.valid.length > 0, 'the suite is given a case this source deploys');

    for (const c of o.valid) {
      t.test(`deploys: ${c.name}`, async t => {
        const { req, workDir, redacted } = request(t, c);
        if (c.upload) {
          t.type(source.receive, 'function', 'a source given an upload receives one');
          await source.receive!({ owner: req.owner!, file: c.upload, field: 'upload', signal: req.signal });
        }
        const result = await source.resolve(req);
        if ('image' in c) {
          t.ok('image' in result, 'an image to run');
          t.equal('image' in result ? result.image : null, c.image);
          t.same(readdirSync(workDir), [], 'nothing written to the work directory');
        } else {
          t.notOk('image' in result, 'a checkout to build');
          for (const f of c.files) t.ok(readdirSync(path.join(workDir, path.dirname(f))).includes(path.basename(f)), `${f} is in the checkout`);
          if (!('image' in result)) t.ok(result.buildPath === null || typeof result.buildPath === 'string', 'a build path or none');
        }
        for (const key of Object.values(c.sshKeys ?? {})) t.ok(redacted.includes(key), 'a key it used is redacted from the log');
      });
    }

    for (const c of o.invalid) {
      t.test(`refuses: ${c.name}`, async t => {
        const { req } = request(t, c);
        await t.rejects(source.resolve(req), c.message);
      });
    }

    const checkout = o.valid.find(c => !('image' in c));
    if (checkout) {
      t.test('an aborted fetch rejects', async t => {
        const controller = new AbortController();
        controller.abort();
        const { req } = request(t, checkout, controller.signal);
        await t.rejects(source.resolve(req), Error);
      });
    }
  });
}
