// Test harness: a real kernel on a real PostgreSQL database of its own (or on the default database,
// the one Berth starts on without DATABASE_URL, with BERTH_TEST_DB=default), listening on a free port,
// and a small client for it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createKernel, type Kernel } from './kernel.ts';
import type { BerthConfig } from './config.ts';
import { newId } from './crypto.ts';
import { Member, Organization } from './identity/entities.ts';
import { DEPLOYMENT_ID_HEADER } from './contracts/deployments.ts';
import type { Principal } from './procedure.ts';
import { roleGrants } from './identity/grants.ts';
import { MEMBER_SWITCHES, type MemberSwitch } from './permissions.ts';
import { waitFor } from './testing-support.ts';
import { loadConfig } from './config.ts';
import { loadProvider } from './provider-loader.ts';
import type { Clock } from './clock.ts';
import { asValue } from 'awilix';

/** The PostgreSQL server the tests create their databases on: BERTH_TEST_PG, set by scripts/services.sh. Never guessed. */
export const adminServerUrl = (): string => {
  const url = process.env.BERTH_TEST_PG;
  if (!url) throw new Error('BERTH_TEST_PG is not set: run the tests through scripts/test.sh, or export the URL scripts/services.sh prints');
  return url;
};
/** 'default' is the database Berth starts on when no DATABASE_URL is set (the embedded one), whatever engine that is. */
export const testDbMode = (): 'external' | 'default' => (process.env.BERTH_TEST_DB === 'default' ? 'default' : 'external');

/** Creates an empty database on the test server and returns its URL and a drop function. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `berth_t_${newId(10)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, 'x')}`;
  const admin = new pg.Client({ connectionString: adminServerUrl() });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const u = new URL(adminServerUrl());
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminServerUrl() });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`);
      await c.end();
    },
  };
}

/**
 * The database of a Berth process that a test starts itself (the operator command): in the external
 * mode, `DATABASE_URL` of a new database on the test server; in the default mode no `DATABASE_URL`, so
 * the process opens the default (embedded) database in its data directory.
 */
export async function processDatabase(mode = testDbMode()): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (mode === 'default') return { env: {}, drop: async () => {} };
  const db = await createTestDatabase();
  return { env: { DATABASE_URL: db.url }, drop: db.drop };
}

export interface TestServer {
  url: string;
  kernel: Kernel;
  dataDir: string;
  /** Connection settings of the server's own database: its database on the test server, or the default (embedded) one. */
  database: pg.ClientConfig;
  /** Stops the kernel; keeps database and data dir (to test restarts). */
  stop(): Promise<void>;
  /**
   * Starts a new kernel on the same database and data dir. `beforeListen` runs on the new kernel
   * before it serves and its jobs start (to subscribe to events its first job runs raise).
   */
  restart(config?: Partial<BerthConfig>, beforeListen?: (kernel: Kernel) => void): Promise<TestServer>;
  /** Stops every kernel booted on this data (restarts too, from whichever handle) and removes database and data dir. */
  destroy(): Promise<void>;
}

/**
 * initdb takes seconds (4–6 s on a busy 2-core machine) where copying its result takes a tenth of
 * that: the test servers on the embedded database each get a copy of one cluster made once per
 * binaries version and shared by every test process (made in a directory of its own and renamed
 * into place, so a reader never sees half of it). Berth itself runs initdb on a first start, which
 * test/embedded-postgres.test.ts exercises.
 */
const quiet = { info() {}, warn() {}, error() {}, debug() {} };

/** organizationRemoved for each organization of a test server, awaited (whoever labelled swarm nodes for them unlabels them). */
async function forgetOrganizations(kernel: Kernel): Promise<void> {
  const { orm, events } = kernel.container.cradle;
  const organizations = await orm.em
    .fork()
    .find(Organization, {}, { fields: ['id'] })
    .catch(() => []);
  for (const o of organizations) await events.emitDurable('organizationRemoved', { organizationId: o.id, at: new Date().toISOString() }).catch(() => undefined);
}

async function seedEmbeddedCluster(dataDir: string): Promise<void> {
  // The embedded database's provider, found as the kernel finds it.
  const provider = await loadProvider(loadConfig({}), 'persistence');
  if (!provider.initialize || !provider.binaries) throw new Error("the default database's provider cannot make a cluster to copy");
  const template = path.join(os.tmpdir(), `berth-test-cluster-${provider.binaries}`);
  if (!existsSync(template)) {
    const making = mkdtempSync(`${template}.making-`);
    await provider.initialize(making, quiet);
    try {
      renameSync(making, template);
    } catch {
      rmSync(making, { recursive: true, force: true }); // another process was first
    }
  }
  // cp -a keeps the modes PostgreSQL insists on (a data directory of 0700).
  execFileSync('cp', ['-a', path.join(template, 'postgres'), path.join(template, 'postgres.password'), dataDir]);
}

/**
 * A data directory of its own for a Berth process a test starts, removed at teardown. Short on
 * purpose: the embedded database's Unix socket lives in it, and tap's `t.testdir()` paths exceed the
 * 107 bytes a socket path may have.
 */
export function dataDirFor(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'berth-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * What a test server's outboundAllow lists unless the test gives its own: loopback, where every
 * stand-in (notify sink, forges, s3rver, the LLM, Stripe) listens. A test of the refusals gives
 * `outboundAllow: []` (or only what it allows); BERTH_OUTBOUND_ALLOW is the same for a spawned Berth.
 */
export const LOOPBACK_STAND_INS: readonly string[] = ['127.0.0.0/8', '::1'];

export async function startTestServer(config: Partial<BerthConfig> = {}, mode = testDbMode()): Promise<TestServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'berth-test-'));
  const db = mode === 'external' ? await createTestDatabase() : undefined;
  if (mode === 'default' && !config.databaseUrl) await seedEmbeddedCluster(dataDir);
  // Every kernel booted on this data (restarts too): destroy, from any handle, stops them all.
  const kernels: Kernel[] = [];
  const boot = async (extra: Partial<BerthConfig>, beforeListen?: (kernel: Kernel) => void): Promise<TestServer> => {
    const kernel = await createKernel({
      env: {},
      // cleanupThisMachine: no test cleans the engine other test files share (a test host's engine only).
      config: {
        port: 0,
        host: '127.0.0.1',
        dataDir,
        logLevel: 'silent',
        checkResponses: true,
        cleanupThisMachine: false,
        outboundAllow: [...LOOPBACK_STAND_INS],
        ...(db ? { databaseUrl: db.url } : {}),
        ...config,
        ...extra,
      },
    });
    kernels.push(kernel);
    beforeListen?.(kernel);
    const url = await kernel.listen();
    const server: TestServer = {
      url,
      kernel,
      dataDir,
      database: kernel.database.pool,
      stop: () => kernel.stop(),
      restart: async (more, hook) => {
        await kernel.stop();
        return boot(more ?? {}, hook);
      },
      destroy: async () => {
        // The engine is shared by every test file: its organizations' placement labels go with the server.
        for (const k of kernels) await forgetOrganizations(k);
        for (const k of kernels) await k.stop();
        await db?.drop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
    return server;
  };
  return boot({});
}

/** A clock that moves only when the test moves it. */
export interface ManualClock extends Clock {
  /** Moves the clock forward. */
  advance(ms: number): void;
}

/** Gives the server's services (the login guard...) a clock of the test's, starting at the current time. */
export function manualClock(server: { kernel: Kernel }): ManualClock {
  let at = Date.now();
  const clock: ManualClock = { now: () => at, advance: ms => void (at += ms) };
  server.kernel.container.register({ clock: asValue(clock) });
  return clock;
}

export interface CallOptions {
  apiKey?: string;
  token?: string;
  /** Force the HTTP method; default GET for queries (input in the query string), POST otherwise. */
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
}

/** The file of an upload: its form field, the name the client gives it and its content. */
export interface UploadPart {
  field: string;
  name: string;
  content: Buffer | string;
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** A client for one server, speaking the REST form or the tRPC form. */
export class Client {
  readonly base: string;
  apiKey?: string;
  token?: string;
  constructor(base: string, auth: { apiKey?: string; token?: string } = {}) {
    this.base = base;
    this.apiKey = auth.apiKey;
    this.token = auth.token;
  }
  #headers(o: CallOptions): Record<string, string> {
    const h: Record<string, string> = { ...o.headers };
    const apiKey = 'apiKey' in o ? o.apiKey : this.apiKey;
    const token = 'token' in o ? o.token : this.token;
    if (apiKey) h['x-api-key'] = apiKey;
    if (token) h.authorization = `Bearer ${token}`;
    return h;
  }
  async #send(url: string, init: RequestInit): Promise<Reply> {
    const res = await fetch(url, init);
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body, headers: res.headers };
  }
  /** GET with query-string input. */
  get<T = any>(op: string, input: Record<string, unknown> = {}, o: CallOptions = {}): Promise<Reply<T>> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(input)) if (v !== undefined) qs.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
    const q = qs.toString();
    return this.#send(`${this.base}/api/${op}${q ? `?${q}` : ''}`, { method: 'GET', headers: this.#headers(o) });
  }
  /** POST with a JSON body (no body when input is undefined). */
  post<T = any>(op: string, input?: unknown, o: CallOptions = {}): Promise<Reply<T>> {
    const headers = this.#headers(o);
    if (input !== undefined) headers['content-type'] ??= 'application/json';
    return this.#send(`${this.base}/api/${op}`, { method: 'POST', headers, body: input === undefined ? undefined : JSON.stringify(input) });
  }
  /** The tRPC wire form: queries as GET ?input={"json":…}, mutations as POST {"json":…}. */
  trpc<T = any>(kind: 'query' | 'mutation', op: string, input?: unknown, o: CallOptions = {}): Promise<Reply<T>> {
    const headers = this.#headers(o);
    if (kind === 'query') {
      const q = input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify({ json: input }))}`;
      return this.#send(`${this.base}/api/trpc/${op}${q}`, { method: 'GET', headers });
    }
    headers['content-type'] = 'application/json';
    return this.#send(`${this.base}/api/trpc/${op}`, { method: 'POST', headers, body: JSON.stringify({ json: input ?? null }) });
  }
  /**
   * An upload as the peer's clients send one: multipart/form-data, the fields as text (objects as
   * JSON, null and undefined left out) and the file, to the REST form or (`trpc`) the tRPC form.
   */
  upload<T = any>(op: string, fields: Record<string, unknown>, file: UploadPart | null, o: CallOptions & { trpc?: boolean } = {}): Promise<Reply<T>> {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) if (v !== undefined && v !== null) form.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
    if (file) form.append(file.field, new Blob([typeof file.content === 'string' ? file.content : new Uint8Array(file.content)]), file.name);
    return this.#send(`${this.base}/api/${o.trpc ? 'trpc/' : ''}${op}`, { method: 'POST', headers: this.#headers(o), body: form });
  }
  /** Raw request for malformed-input tests. */
  raw(pathAndQuery: string, init: RequestInit = {}): Promise<Reply> {
    return this.#send(`${this.base}${pathAndQuery}`, init);
  }
}

/** Creates the first admin through the API and returns a client holding an API key (and the bearer token). */
export async function signUpAdmin(
  server: { url: string },
  email = 'admin@example.com',
  password = 'correct horse battery',
): Promise<{ client: Client; token: string; apiKey: string; userId: string; organizationId: string }> {
  const anon = new Client(server.url);
  const created = await anon.post('auth.createAdmin', { email, password });
  if (created.status !== 200) throw new Error(`auth.createAdmin: ${created.status} ${JSON.stringify(created.body)}`);
  const { token, id, organizationId } = created.body;
  const withToken = new Client(server.url, { token });
  const key = await withToken.post('user.createApiKey', { name: 'test', metadata: { organizationId } });
  if (key.status !== 200) throw new Error(`user.createApiKey: ${key.status} ${JSON.stringify(key.body)}`);
  return { client: new Client(server.url, { apiKey: key.body.key }), token, apiKey: key.body.key, userId: id, organizationId };
}

/**
 * A new account in the admin's organization (user.createUserWithCredentials), signed in.
 * `client` speaks with its bearer token, or with an API key of its own when via is 'apiKey'.
 * A member is given every record of the organization (user.assignPermissions allRecords: what a
 * member could do before roles) unless `grants` is 'none': the peer's defaults, nothing given.
 */
export async function addMember(
  server: { url: string },
  admin: Client,
  email: string,
  role: 'admin' | 'member' = 'member',
  password = 'member-password-1',
  via: 'token' | 'apiKey' = 'token',
  grants: 'allRecords' | 'none' = 'allRecords',
) {
  const created = await admin.post('user.createUserWithCredentials', { email, password, role });
  if (created.status !== 200) throw new Error(`createUserWithCredentials: ${created.status} ${JSON.stringify(created.body)}`);
  if (role === 'member' && grants === 'allRecords') {
    const given = await admin.post('user.assignPermissions', { ...noGrants(created.body.userId as string), allRecords: true });
    if (given.status !== 200) throw new Error(`user.assignPermissions: ${given.status} ${JSON.stringify(given.body)}`);
  }
  // The peer answers {userId, email, role}: the membership's id is user.one's `id`.
  const membership = await admin.get('user.one', { userId: created.body.userId });
  if (membership.status !== 200) throw new Error(`user.one: ${membership.status} ${JSON.stringify(membership.body)}`);
  const login = await new Client(server.url).post('auth.login', { email, password });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${JSON.stringify(login.body)}`);
  const token = login.body.token as string;
  let apiKey: string | undefined;
  if (via === 'apiKey') {
    const key = await new Client(server.url, { token }).post('user.createApiKey', { name: email.slice(0, 32), metadata: { organizationId: login.body.organizationId } });
    if (key.status !== 200) throw new Error(`createApiKey: ${key.status} ${JSON.stringify(key.body)}`);
    apiKey = key.body.key as string;
  }
  return {
    userId: created.body.userId as string,
    membershipId: membership.body.id as string,
    token,
    apiKey: apiKey as string,
    password,
    client: new Client(server.url, apiKey ? { apiKey } : { token }),
  };
}

/** user.assignPermissions' input that gives the member `id` nothing: no switch, no record (add what a test gives). */
export const noGrants = (id: string) => ({
  id,
  accessedProjects: [] as string[],
  accessedEnvironments: [] as string[],
  accessedServices: [] as string[],
  accessedGitProviders: [] as string[],
  accessedServers: [] as string[],
  ...(Object.fromEntries(MEMBER_SWITCHES.map(name => [name, false])) as Record<MemberSwitch, boolean>),
});

/** An API key of the same user, acting in a second organization it owns (cross-organization tests). */
export async function otherOrganization(server: { url: string; kernel: Kernel }, userId: string): Promise<{ organizationId: string; client: Client }> {
  const { orm, apiKeys } = server.kernel.container.cradle;
  // As organization.create makes one (the organization plugin's service is not the kernel's to name).
  const em = orm.em.fork();
  const org = em.create(Organization, { id: newId(), name: 'Other', logo: null, slug: null, ownerId: userId, createdAt: new Date() });
  em.create(Member, { id: newId(), userId, organizationId: org.id, role: 'owner', createdAt: new Date() });
  await em.flush();
  const principal: Principal = { userId, organizationId: org.id, role: 'owner', grants: roleGrants('owner'), via: 'apiKey', credentialId: '' };
  const key = await apiKeys.createApiKey(principal, { name: 'other', organizationId: org.id });
  return { organizationId: org.id, client: new Client(server.url, { apiKey: key.key }) };
}

export * from './testing-support.ts';
export * from './testing-images.ts';
export * from './testing-conformance.ts';
export * from './testing-proxy.ts';
export * from './testing-hosts.ts';

/** The deployment a run (deploy, start, stop, reload, rebuild...) queued: its reply's DEPLOYMENT_ID_HEADER. */
export function deploymentIdOf(reply: Reply): string {
  const id = reply.headers.get(DEPLOYMENT_ID_HEADER);
  if (reply.status !== 200 || !id) throw new Error(`no queued deployment: ${reply.status} ${JSON.stringify(reply.body)}`);
  return id;
}

/** Posts a run (deploy, start, stop, reload, rebuild...) and waits for the deployment it queued to end; answers the deployment's record. */
export async function runFinished(client: Client, op: string, input: Record<string, unknown>, o: { timeout?: number; statuses?: string[] } = {}): Promise<Record<string, any>> {
  return deploymentFinished(client, deploymentIdOf(await client.post(op, input)), o);
}

/** Polls deployment.one until the deployment's state has left queued/running (or is one of `statuses`, states: queued, running, done, error, cancelled); answers its record. */
export async function deploymentFinished(client: Client, deploymentId: string, o: { timeout?: number; statuses?: string[] } = {}): Promise<Record<string, any>> {
  return waitFor(
    `deployment ${deploymentId} finished`,
    async () => {
      const res = await client.get('deployment.one', { deploymentId });
      if (res.status !== 200) throw new Error(`deployment.one ${res.status}: ${JSON.stringify(res.body)}`);
      const done = o.statuses ? o.statuses.includes(res.body.state) : !['queued', 'running'].includes(res.body.state);
      return done ? (res.body as Record<string, any>) : undefined;
    },
    { timeout: o.timeout ?? 240_000, interval: 100 },
  );
}
export * from './testing-storage.ts';
export * from './testing-git-server.ts';
export * from './testing-git-provider.ts';
export * from './testing-notify.ts';
