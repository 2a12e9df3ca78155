// One engine build for every builder that produces a Dockerfile: the context directory is
// packed (honouring .dockerignore) and sent to the engine's build API; its output is streamed
// line by line into the deployment log with secrets masked; an abort drops the request (the
// engine then stops the build and removes its intermediate container). A build given secrets
// goes through the engine's BuildKit instead (buildkit-session.ts serves them, buildkit-status.ts
// reads its output); one without keeps the classic builder.
import { lstatSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import dockerignoreModule from '@balena/dockerignore';
import tar from 'tar-fs';
import type Docker from 'dockerode';
import type { BuildIo, BuildRequest } from '@berth/core';
import type { SecretSession } from './buildkit-session.ts';
import type { BuildKitTrace } from './buildkit-status.ts';

// The package is CommonJS (module.exports = factory) while its types declare an ES default export.
// cast: the package is CommonJS; under Node's ESM its default export is the module itself.
const dockerignore = dockerignoreModule as unknown as typeof dockerignoreModule.default;

/** An image reference as Berth accepts them: [registry[:port]/]name[/name...][:tag][@sha256:digest]. */
export const IMAGE_REF = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]{1,5})?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;
/** A build argument's name (also an environment variable name for the program builders). */
export const BUILD_ARG = /^[A-Za-z_][A-Za-z0-9_]*$/;
const STAGE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
/** What a secret becomes in the log. */
export const MASK = '******';

/** Replaces every secret value in a line by ******, longest first (a secret may contain another). */
export function masker(secrets: string[]): (line: string) => string {
  const values = [...new Set(secrets.filter(s => s.length > 0))].sort((a, b) => b.length - a.length);
  return line => values.reduce((out, s) => out.split(s).join(MASK), line);
}

export interface ContextBuild extends BuildIo {
  engine: Docker;
  /** Absolute directory sent as the build context. */
  contextDir: string;
  /** The Dockerfile, relative to contextDir, "/"-separated. */
  dockerfile: string;
  imageTag: string;
  buildArgs: Record<string, string>;
  target: string | null;
  labels: Record<string, string>;
  secrets: string[];
  /** Secrets the Dockerfile mounts by id (`RUN --mount=type=secret,id=KEY`); any: the build goes through BuildKit. */
  buildSecrets?: Record<string, string>;
}

function packContext(contextDir: string, dockerfile: string): Readable {
  let rules: string | null = null;
  try {
    rules = readFileSync(path.join(contextDir, '.dockerignore'), 'utf8');
  } catch {
    // no .dockerignore: everything is sent
  }
  let ignore: (file: string) => boolean = () => false;
  if (rules !== null) {
    const matcher = dockerignore({ ignorecase: false }).add(rules);
    // With exceptions ("!keep/this") an ignored directory may hold kept files: filter files only then.
    const hasExceptions = rules.split(/\r?\n/).some(l => l.trim().startsWith('!'));
    ignore = file => {
      const rel = path.relative(contextDir, file).split(path.sep).join('/');
      if (rel === dockerfile || rel === '.dockerignore' || !matcher.ignores(rel)) return false;
      return !(hasExceptions && lstatSync(file).isDirectory());
    };
  }
  return tar.pack(contextDir, { ignore }) as Readable;
}

/** For builders that build no Dockerfile of the user's: one line saying the build secrets are not given to them. */
export function skipBuildSecrets(request: BuildIo & { buildSecrets?: Record<string, string> }, buildType: string): void {
  const keys = Object.keys(request.buildSecrets ?? {});
  if (keys.length > 0) request.log(`Build secrets ${keys.join(', ')} are not given to the ${buildType} builder: only a Dockerfile build mounts them (RUN --mount=type=secret,id=KEY)`);
}

/** The error an aborted step rejects with: the abort's own reason when it gave one (e.g. a timeout). */
export function cancelled(signal: AbortSignal, step = 'The build'): Error {
  const reason = signal.reason as unknown;
  return reason instanceof Error && reason.name !== 'AbortError' ? reason : new Error(`${step} was cancelled`);
}

interface BuildEvent {
  id?: string;
  aux?: unknown;
  stream?: string;
  status?: string;
  progress?: string;
  error?: string;
  errorDetail?: { message?: string };
}

/** Sends contextDir to the engine and builds it; resolves when the image is tagged, throws naming the failed step. */
export async function buildContext(b: ContextBuild): Promise<void> {
  if (!IMAGE_REF.test(b.imageTag)) throw new Error(`"${b.imageTag}" is not a valid image tag`);
  for (const name of Object.keys(b.buildArgs)) {
    if (!BUILD_ARG.test(name)) throw new Error(`Build argument "${name}" is not a valid name (letters, digits and _, not starting with a digit)`);
  }
  if (b.target !== null && !STAGE.test(b.target)) throw new Error(`Build stage "${b.target}" is not a valid stage name`);
  const buildSecrets = b.buildSecrets ?? {};
  for (const name of Object.keys(buildSecrets)) {
    if (!BUILD_ARG.test(name)) throw new Error(`Build secret "${name}" is not a valid name (letters, digits and _, not starting with a digit)`);
  }
  if (b.signal.aborted) throw cancelled(b.signal);
  const mask = masker([...b.secrets, ...Object.values(buildSecrets)]);
  const options = {
    t: b.imageTag,
    dockerfile: b.dockerfile,
    buildargs: b.buildArgs,
    ...(b.target ? { target: b.target } : {}),
    labels: b.labels,
    rm: true,
    forcerm: true,
    // Never pull on purpose; a base image that is missing is still looked up by the engine.
    pull: false,
  };
  let session: SecretSession | null = null;
  let decode: typeof BuildKitTrace | null = null;
  let pack: Readable | null = null;
  let output: Readable;
  try {
    if (Object.keys(buildSecrets).length > 0) {
      b.log(`Building with BuildKit: build secrets ${Object.keys(buildSecrets).join(', ')} are mounted by id (RUN --mount=type=secret,id=KEY), never passed as build args`);
      // Loaded when a build has secrets (protobufjs and http2 stay out of an idle Berth).
      const { openSecretSession } = await import('./buildkit-session.ts');
      session = await openSecretSession(b.engine, buildSecrets, b.signal);
      decode = (await import('./buildkit-status.ts')).BuildKitTrace;
      pack = packContext(b.contextDir, b.dockerfile);
      output = await buildKitRequest(b.engine, pack, { ...options, version: '2', session: session.id }, b.signal);
    } else {
      pack = packContext(b.contextDir, b.dockerfile);
      output = (await b.engine.buildImage(pack, { ...options, abortSignal: b.signal })) as Readable;
    }
  } catch (e) {
    pack?.destroy();
    session?.close();
    if (b.signal.aborted) throw cancelled(b.signal);
    const err = e as { json?: { message?: string }; message?: string };
    throw new Error(mask(`Docker build failed: ${err.json?.message ?? err.message ?? String(e)}`));
  }
  const trace = decode ? new decode(line => b.log(mask(line))) : null;
  const openSession = session;

  await new Promise<void>((resolve, reject) => {
    let pending = '';
    let failure: string | null = null;
    // The engine's error alone may not say which instruction failed (a base image that cannot
    // be pulled answers with a registry error): the last step line does.
    let step: string | null = null;
    let settled = false;
    const finish = (error: Error | null) => {
      if (settled) return;
      settled = true;
      b.signal.removeEventListener('abort', onAbort);
      openSession?.close();
      if (error) reject(error);
      else resolve();
    };
    const onAbort = () => {
      output.destroy();
      pack?.destroy();
      finish(cancelled(b.signal));
    };
    const logLine = (line: string) => {
      if (!line.trim()) return;
      if (/^Step \d+\/\d+ : /.test(line)) step = line.trim();
      b.log(mask(line.trimEnd()));
    };
    const message = (text: string) => {
      if (!text.trim()) return;
      let event: BuildEvent;
      try {
        event = JSON.parse(text) as BuildEvent;
      } catch {
        logLine(text);
        return;
      }
      if (trace && event.id === 'moby.buildkit.trace') {
        if (typeof event.aux === 'string') trace.add(event.aux);
      } else if (event.error !== undefined) {
        failure = (event.errorDetail?.message ?? event.error).trim();
        b.log(mask(failure));
      } else if (event.stream !== undefined) {
        for (const line of event.stream.split(/\r?\n/)) logLine(line);
      } else if (event.status !== undefined) {
        logLine(event.progress ? `${event.status} ${event.progress}` : event.status);
      }
    };
    b.signal.addEventListener('abort', onAbort, { once: true });
    output.on('data', (chunk: Buffer | string) => {
      pending += chunk.toString();
      for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
        message(pending.slice(0, i));
        pending = pending.slice(i + 1);
      }
    });
    output.on('end', () => {
      message(pending);
      trace?.end();
      // A secret mount is optional by default: one the build asked for and was not given leaves no file.
      const missing = openSession ? [...new Set(openSession.requested)].filter(id => !Object.hasOwn(buildSecrets, id)) : [];
      const hint = missing.length ? ` (the build asked for the build secret ${missing.join(', ')}, which is not among the build secrets: ${Object.keys(buildSecrets).join(', ')})` : '';
      if (missing.length && !trace?.failure && failure === null) b.log(`The build asked for the build secret ${missing.join(', ')}, which is not given: its mount was left empty`);
      // BuildKit names the failed step in its trace; the closing error line repeats its message.
      if (trace?.failure) finish(new Error(mask(`${trace.failure.step} failed: ${trace.failure.error}${hint}`)));
      else if (failure !== null && /--mount option requires BuildKit/i.test(failure))
        finish(new Error(mask(`${step ? `${step} failed` : 'Docker build failed'}: ${failure} (a Dockerfile build goes through BuildKit when the application has build secrets)`)));
      else if (failure === null) finish(null);
      else finish(new Error(mask(step ? `${step} failed: ${failure}` : `Docker build failed: ${failure}`)));
    });
    output.on('error', (e: Error) => {
      finish(b.signal.aborted ? cancelled(b.signal) : new Error(mask(`Docker build failed: ${e.message}`)));
    });
  });
}

/** `POST /build` with BuildKit (version 2) through the engine's modem, so a server's engine is reached over its connection. */
function buildKitRequest(engine: Docker, pack: Readable, options: Record<string, unknown>, signal: AbortSignal): Promise<Readable> {
  return new Promise((resolve, reject) => {
    engine.modem.dial(
      { path: '/build?', method: 'POST', file: pack, options, abortSignal: signal, isStream: true, statusCodes: { 200: true, 400: 'bad parameter', 500: 'server error' } },
      (err: unknown, data: unknown) => {
        if (err) reject(err);
        // cast: a streamed request answers the response stream.
        else resolve(data as Readable);
      },
    );
  });
}

/**
 * Builds a context Berth writes itself (a static site beside its Dockerfile, a one-line Dockerfile
 * that labels an image) in a temporary directory, removed afterwards: `fill` puts the files beside
 * the Dockerfile. No build args, stage or build secrets: nothing of the user's runs in it.
 */
export async function buildWrittenContext(request: BuildRequest, o: { prefix: string; dockerfile: string; fill?: (contextDir: string) => Promise<void>; log: (line: string) => void }): Promise<void> {
  const contextDir = await mkdtemp(path.join(os.tmpdir(), o.prefix));
  try {
    await o.fill?.(contextDir);
    await writeFile(path.join(contextDir, 'Dockerfile'), o.dockerfile);
    await buildContext({
      engine: request.engine,
      contextDir,
      dockerfile: 'Dockerfile',
      imageTag: request.imageTag,
      buildArgs: {},
      target: null,
      labels: request.labels,
      secrets: request.secrets,
      signal: request.signal,
      log: o.log,
    });
  } finally {
    await rm(contextDir, { recursive: true, force: true });
  }
}
