// The registry check that testRegistry runs on the engine that will push: log in (the engine's
// auth endpoint, nothing written on the node), push a tiny image generated on the spot, remove it
// from that engine, pull it back, remove it again, and delete it from the registry where the
// registry allows deletion. Credentials travel with each call (X-Registry-Auth); a failing step
// is named in the error, and the password never appears in one.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type Docker from 'dockerode';

export interface RegistryCredentials {
  registryUrl: string;
  username: string;
  password: string;
  imagePrefix: string | null;
}

/** The engine's auth config for a registry ("" is Docker Hub). */
export const authConfig = (c: Pick<RegistryCredentials, 'registryUrl' | 'username' | 'password'>) => ({
  username: c.username,
  password: c.password,
  serveraddress: c.registryUrl || 'https://index.docker.io/v1/',
});

/** `<registry>/<prefix>/<name>` without a tag (the registry part left out for Docker Hub). */
export function repositoryOf(c: Pick<RegistryCredentials, 'registryUrl' | 'imagePrefix' | 'username'>, name: string): string {
  const prefix = c.imagePrefix || (c.registryUrl ? '' : c.username.toLowerCase());
  return [c.registryUrl, prefix, name].filter(Boolean).join('/');
}

export class RegistryStepError extends Error {
  readonly step: 'login' | 'push' | 'pull';
  constructor(step: 'login' | 'push' | 'pull', message: string) {
    super(message);
    this.step = step;
  }
}

export interface CheckResult {
  /** The tag pushed. */
  tag: string;
  /** True when the registry deleted it again; false when it refused (the tag stays there). */
  deleted: boolean;
  /** Why deletion did not happen, when it did not. */
  deleteRefusal?: string;
}

/** Runs the check; throws a RegistryStepError naming the failing step (password redacted). */
export async function checkRegistry(docker: Docker, c: RegistryCredentials, signal: AbortSignal): Promise<CheckResult> {
  const redact = (text: string) => (c.password ? text.split(c.password).join('***') : text);
  const reasonOf = (e: unknown) => redact(((e as { json?: { message?: string } }).json?.message ?? (e as Error).message ?? String(e)).trim());
  const auth = authConfig(c);
  const where = c.registryUrl || 'Docker Hub';

  try {
    await docker.checkAuth(auth);
  } catch (e) {
    throw new RegistryStepError('login', `Login to ${where} failed: ${reasonOf(e)}`);
  }

  const repository = repositoryOf(c, 'berth-push-check');
  const tagName = randomBytes(6).toString('hex');
  const tag = `${repository}:${tagName}`;
  await importTinyImage(docker, repository, tagName, signal);
  const removeLocal = () =>
    docker
      .getImage(tag)
      .remove({ force: true })
      .catch(() => undefined);
  try {
    try {
      await pushImage(docker, tag, auth, signal);
    } catch (e) {
      throw new RegistryStepError('push', `Login to ${where} succeeded, but the push of ${tag} failed: ${reasonOf(e)}`);
    }
    await removeLocal();
    try {
      await progress(docker, await docker.pull(tag, { authconfig: auth, abortSignal: signal }));
    } catch (e) {
      throw new RegistryStepError('pull', `Pushed ${tag}, but pulling it back failed: ${reasonOf(e)}`);
    }
  } finally {
    await removeLocal();
  }
  const refusal = await deleteFromRegistry(c, repository.slice(c.registryUrl ? c.registryUrl.length + 1 : 0), tagName, signal).catch(e => reasonOf(e));
  return refusal ? { tag, deleted: false, deleteRefusal: refusal } : { tag, deleted: true };
}

/** Pushes a tag with the auth config of this call (X-Registry-Auth). */
export async function pushImage(docker: Docker, tag: string, auth: ReturnType<typeof authConfig>, signal: AbortSignal): Promise<void> {
  await progress(docker, await docker.getImage(tag).push({ authconfig: auth, abortSignal: signal } as object));
}

/** Follows an engine progress stream; an `error` line fails it. */
function progress(docker: Docker, stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve, reject) =>
    docker.modem.followProgress(stream, (err: Error | null, out: { error?: string; errorDetail?: { message?: string } }[]) => {
      const failed = out?.find(o => o.error || o.errorDetail);
      if (err) reject(err);
      else if (failed) reject(new Error(failed.errorDetail?.message ?? failed.error));
      else resolve();
    }),
  );
}

/** Imports a one-file image (random content, so every check pushes a new layer) as repository:tag. */
async function importTinyImage(docker: Docker, repository: string, tag: string, signal: AbortSignal): Promise<void> {
  const tar = tarOf('berth-push-check', Buffer.from(`berth registry check ${randomBytes(16).toString('hex')}\n`));
  // cast: dockerode takes a stream at run time; its types only name a file path.
  const stream = await docker.importImage(Readable.from([tar]) as unknown as string, { repo: repository, tag, abortSignal: signal } as object);
  await progress(docker, stream);
}

/** A tar archive of one regular file (ustar). */
function tarOf(name: string, content: Buffer): Buffer {
  const header = Buffer.alloc(512);
  const field = (value: string, offset: number, length: number) => header.write(value, offset, length, 'ascii');
  field(name, 0, 100);
  field('0000644\0', 100, 8);
  field('0000000\0', 108, 8);
  field('0000000\0', 116, 8);
  field(content.length.toString(8).padStart(11, '0') + '\0', 124, 12);
  field(
    Math.floor(Date.now() / 1000)
      .toString(8)
      .padStart(11, '0') + '\0',
    136,
    12,
  );
  field('        ', 148, 8);
  field('0', 156, 1);
  field('ustar\0', 257, 6);
  field('00', 263, 2);
  let sum = 0;
  for (const byte of header) sum += byte;
  field(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8);
  const padding = Buffer.alloc((512 - (content.length % 512)) % 512);
  return Buffer.concat([header, content, padding, Buffer.alloc(1024)]);
}

/**
 * Deletes repository:tag through the registry's HTTP API (v2): the manifest's digest, then DELETE.
 * Answers null when deleted, or why not (deletion disabled, not allowed). HTTPS first; plain HTTP
 * only where HTTPS cannot connect (a loopback registry the engine trusts without TLS).
 */
async function deleteFromRegistry(c: RegistryCredentials, repository: string, tag: string, signal: AbortSignal): Promise<string | null> {
  const host = c.registryUrl || 'registry-1.docker.io';
  const basic = `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
  let base = `https://${host}`;
  const accept = ['application/vnd.docker.distribution.manifest.v2+json', 'application/vnd.oci.image.manifest.v1+json'].join(', ');
  let authorization = basic;
  const request = async (method: string, url: string): Promise<Response> => {
    let res = await fetch(url, { method, headers: { accept, authorization }, signal });
    const challenge = res.headers.get('www-authenticate') ?? '';
    if (res.status === 401 && /^Bearer /i.test(challenge)) {
      authorization = `Bearer ${await bearerToken(challenge, basic, `repository:${repository}:pull,push,delete`, signal)}`;
      res = await fetch(url, { method, headers: { accept, authorization }, signal });
    }
    return res;
  };
  const manifest = `/v2/${repository}/manifests/`;
  let head: Response;
  try {
    head = await request('HEAD', `${base}${manifest}${tag}`);
  } catch {
    base = `http://${host}`;
    head = await request('HEAD', `${base}${manifest}${tag}`);
  }
  const digest = head.headers.get('docker-content-digest');
  if (!head.ok || !digest) return `the registry answered ${head.status} for the manifest of ${repository}:${tag}`;
  const removed = await request('DELETE', `${base}${manifest}${digest}`);
  if (removed.ok) return null;
  return removed.status === 405 ? 'the registry does not allow deletion' : `the registry refused the deletion (${removed.status})`;
}

/** A token from the realm of a Bearer challenge (Docker Hub, GHCR, GitLab...), asked with the basic credentials. */
async function bearerToken(challenge: string, basic: string, scope: string, signal: AbortSignal): Promise<string> {
  const params = Object.fromEntries([...challenge.matchAll(/(\w+)="([^"]*)"/g)].map(m => [m[1]!, m[2]!]));
  if (!params.realm) throw new Error('the registry asked for a token without a realm');
  const url = new URL(params.realm);
  if (params.service) url.searchParams.set('service', params.service);
  url.searchParams.set('scope', scope);
  const res = await fetch(url, { headers: { authorization: basic }, signal });
  if (!res.ok) throw new Error(`the token service answered ${res.status}`);
  const body = (await res.json()) as { token?: string; access_token?: string };
  const token = body.token ?? body.access_token;
  if (!token) throw new Error('the token service answered no token');
  return token;
}
