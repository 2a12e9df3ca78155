// The registry check that testRegistry runs on the engine that will push: log in (the engine's
// auth endpoint, nothing written on the node), push a tiny image generated on the spot, remove it
// from that engine, pull it back, remove it again, and delete it from the registry where the
// registry allows deletion. Credentials travel with each call (X-Registry-Auth); a failing step
// is named in the error, and the password never appears in one. The deletion speaks to the
// registry from Berth itself: over HTTPS (trusting the proxy's CA for the self-hosted registry),
// plain HTTP only on loopback, and never as a retry after HTTPS failed.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
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
export async function checkRegistry(docker: Docker, c: RegistryCredentials, signal: AbortSignal, o: { ca?: string } = {}): Promise<CheckResult> {
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
  const refusal = await deleteFromRegistry(c, repository.slice(c.registryUrl ? c.registryUrl.length + 1 : 0), tagName, signal, o).catch(e => reasonOf(e));
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
 * The base URL of a registry's HTTP API. HTTPS, except where plain HTTP is what the address says:
 * an explicit `http://`, or a loopback address (127.0.0.0/8, ::1, localhost), which Docker itself
 * trusts without TLS. Never chosen after HTTPS failed: the credentials would go in clear to
 * whoever answers on the way.
 */
export function registryBase(registryUrl: string): URL {
  const explicit = /^(https?):\/\//i.exec(registryUrl)?.[1]?.toLowerCase();
  const address = registryUrl.replace(/^https?:\/\//i, '');
  const url = new URL(`https://${address || 'registry-1.docker.io'}`);
  return new URL(`${explicit ?? (isLoopback(url.hostname) ? 'http' : 'https')}://${url.host}`);
}

/** A loopback address, as Docker trusts it without TLS (no name resolved: a name could point anywhere). */
export function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || (isIP(h) === 4 && h.startsWith('127.'));
}

interface Answer {
  status: number;
  header(name: string): string | null;
  body: string;
}

/** One HTTP(S) request; `ca` replaces the trusted roots for HTTPS (the self-hosted registry's proxy CA). */
function send(method: string, url: URL, headers: Record<string, string>, o: { ca?: string; signal: AbortSignal }): Promise<Answer> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, { method, headers, signal: o.signal, ...(url.protocol === 'https:' && o.ca ? { ca: o.ca } : {}) }, res => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        // Only a token answer is read; a large body is cut.
        if (size < 1 << 20) chunks.push(chunk);
        size += chunk.length;
      });
      res.on('end', () => {
        const header = (name: string) => {
          const value = res.headers[name.toLowerCase()];
          return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
        };
        resolve({ status: res.statusCode ?? 0, header, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Deletes repository:tag through the registry's HTTP API (v2): the manifest's digest, then DELETE.
 * Answers null when deleted, or why not (deletion disabled, not allowed, HTTPS failed). The scheme
 * is registryBase's, decided before anything is sent; `ca` is trusted for HTTPS when given.
 */
export async function deleteFromRegistry(c: RegistryCredentials, repository: string, tag: string, signal: AbortSignal, o: { ca?: string } = {}): Promise<string | null> {
  const base = registryBase(c.registryUrl);
  const basic = `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
  const accept = ['application/vnd.docker.distribution.manifest.v2+json', 'application/vnd.oci.image.manifest.v1+json'].join(', ');
  let authorization = basic;
  const request = async (method: string, path: string): Promise<Answer> => {
    const url = new URL(path, base);
    let res = await send(method, url, { accept, authorization }, { ...o, signal });
    const challenge = res.header('www-authenticate') ?? '';
    if (res.status === 401 && /^Bearer /i.test(challenge)) {
      authorization = `Bearer ${await bearerToken(challenge, basic, `repository:${repository}:pull,push,delete`, signal, o.ca)}`;
      res = await send(method, url, { accept, authorization }, { ...o, signal });
    }
    return res;
  };
  const manifest = `/v2/${repository}/manifests/`;
  let head: Answer;
  try {
    head = await request('HEAD', `${manifest}${tag}`);
  } catch (e) {
    return `the registry could not be reached over ${base.protocol.replace(':', '')} (${(e as Error).message})`;
  }
  const digest = head.header('docker-content-digest');
  if (head.status < 200 || head.status > 299 || !digest) return `the registry answered ${head.status} for the manifest of ${repository}:${tag}`;
  const removed = await request('DELETE', `${manifest}${digest}`);
  if (removed.status >= 200 && removed.status <= 299) return null;
  return removed.status === 405 ? 'the registry does not allow deletion' : `the registry refused the deletion (${removed.status})`;
}

/** A token from the realm of a Bearer challenge (Docker Hub, GHCR, GitLab...), asked with the basic credentials (never over plain HTTP off loopback). */
async function bearerToken(challenge: string, basic: string, scope: string, signal: AbortSignal, ca?: string): Promise<string> {
  const params = Object.fromEntries([...challenge.matchAll(/(\w+)="([^"]*)"/g)].map(m => [m[1]!, m[2]!]));
  if (!params.realm) throw new Error('the registry asked for a token without a realm');
  const url = new URL(params.realm);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) throw new Error(`the registry's token service ${url.origin} is not https: no credentials are sent to it`);
  if (params.service) url.searchParams.set('service', params.service);
  url.searchParams.set('scope', scope);
  const res = await send('GET', url, { authorization: basic }, { signal, ...(ca ? { ca } : {}) });
  if (res.status < 200 || res.status > 299) throw new Error(`the token service answered ${res.status}`);
  const body = JSON.parse(res.body) as { token?: string; access_token?: string };
  const token = body.token ?? body.access_token;
  if (!token) throw new Error('the token service answered no token');
  return token;
}
