// Destinations of one organization, and the storage each opens: the BackupStorage provider
// whose id is the destination's `provider`, else the one that serves other providers (the S3
// one serves AWS, Cloudflare, Minio...). testConnection writes, reads and deletes a probe.
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import {
  badRequest,
  iso,
  findOwned,
  StorageError,
  type BackupStorage,
  type BackupStore,
  type EntityManager,
  type OutboundGuard,
  type ProviderRegistry,
  type SecretBox,
  type StorageLocation,
} from '@berth/core';
import { Destination, type DestinationRow } from './entities.ts';
import { givenFields } from './given.ts';
import type { DestinationInputT, DestinationViewT } from './schemas.ts';

const PROBE_PREFIX = '.berth-connection-test-';

export class DestinationService {
  readonly #providers: () => ProviderRegistry;
  readonly #secrets: () => SecretBox;

  /** Refuses (NOT_FOUND) a serverId that names no server of the organization (WorkloadRegistry.assertServer). */
  readonly #assertServer: (serverId: string, organizationId: string) => Promise<void>;

  /** The outbound guard: an endpoint is checked on save and on every connection (its lookup). */
  readonly #outbound: () => OutboundGuard | null;

  constructor(
    providers: () => ProviderRegistry,
    secrets: () => SecretBox,
    assertServer: (serverId: string, organizationId: string) => Promise<void> = async () => undefined,
    outbound: () => OutboundGuard | null = () => null,
  ) {
    this.#outbound = outbound;
    this.#assertServer = assertServer;
    this.#providers = providers;
    this.#secrets = secrets;
  }

  /** The provider that serves a destination's `provider` value; 400 naming the field when none is enabled. */
  storageFor(provider: string | null | undefined): BackupStorage {
    const registry = this.#providers();
    const id = (provider ?? '').toLowerCase();
    if (id && registry.has('storage', id)) return registry.get('storage', id);
    const fallback = registry.all('storage').find(s => s.servesOtherProviders);
    if (fallback) return fallback;
    const enabled = registry.ids('storage');
    throw badRequest(`No storage provider serves "${provider ?? ''}" (enabled: ${enabled.join(', ') || 'none'})`, [
      { path: ['provider'], message: `no enabled storage provider serves it (enabled: ${enabled.join(', ') || 'none'})` },
    ]);
  }

  #location(input: DestinationInputT | DestinationRow, secret: string, organizationId: string | null): StorageLocation {
    const guard = this.#outbound();
    return {
      provider: input.provider ?? null,
      endpoint: input.endpoint,
      region: input.region,
      bucket: input.bucket,
      accessKey: input.accessKey,
      secretAccessKey: secret,
      ...(guard ? { lookup: guard.lookup({ field: 'endpoint', organizationId }) } : {}),
    };
  }

  /** An http(s) endpoint must be an address the organization may reach (a 400 naming endpoint). */
  async #checkEndpoint(endpoint: string, organizationId: string): Promise<void> {
    const guard = this.#outbound();
    if (guard && /^https?:\/\//i.test(endpoint.trim())) await guard.checkSaved(endpoint, { field: 'endpoint', organizationId });
  }

  /** The storage and location of the input, or a 400 naming the field the provider refuses. */
  #checked(input: DestinationInputT, organizationId: string): { storage: BackupStorage; location: StorageLocation } {
    const storage = this.storageFor(input.provider);
    const location = this.#location(input, input.secretAccessKey, organizationId);
    const problem = storage.validate(location);
    if (problem) throw badRequest(`${problem.field} ${problem.message}`, [{ path: [problem.field], message: problem.message }]);
    return { storage, location };
  }

  view(row: DestinationRow, withSecret = true): DestinationViewT {
    return {
      destinationId: row.destinationId,
      name: row.name,
      provider: row.provider ?? null,
      accessKey: row.accessKey,
      bucket: row.bucket,
      region: row.region,
      endpoint: row.endpoint,
      secretAccessKey: withSecret ? this.#secrets().decrypt(row.secretAccessKey) : '',
      additionalFlags: row.additionalFlags ?? null,
      organizationId: row.organizationId,
      createdAt: iso(row.createdAt)!,
    };
  }

  /** The destination inside a backup's answer: without its keys (as the peer's backup answers). */
  keyless(row: DestinationRow): Omit<DestinationViewT, 'accessKey' | 'secretAccessKey'> {
    const { accessKey: _a, secretAccessKey: _s, ...rest } = this.view(row, false);
    return rest;
  }

  row(destinationId: string, organizationId: string, em: EntityManager): Promise<DestinationRow> {
    return findOwned(em, Destination, { destinationId }, organizationId, 'Destination');
  }

  /** The opened storage of a stored destination. */
  open(row: DestinationRow): BackupStore {
    return this.storageFor(row.provider).open(this.#location(row, this.#secrets().decrypt(row.secretAccessKey), row.organizationId));
  }

  async create(input: DestinationInputT, organizationId: string, em: EntityManager): Promise<DestinationViewT> {
    this.#checked(input, organizationId);
    await this.#checkEndpoint(input.endpoint, organizationId);
    if (input.serverId) await this.#assertServer(input.serverId, organizationId);
    const row = em.create(Destination, {
      name: input.name,
      provider: input.provider ?? null,
      accessKey: input.accessKey,
      secretAccessKey: this.#secrets().encrypt(input.secretAccessKey),
      bucket: input.bucket,
      region: input.region,
      endpoint: input.endpoint,
      additionalFlags: input.additionalFlags ?? null,
      serverId: input.serverId ?? null,
      organizationId,
    }) as DestinationRow;
    await em.flush();
    return this.view(row);
  }

  async update(input: DestinationInputT & { destinationId: string }, organizationId: string, em: EntityManager): Promise<DestinationViewT> {
    const row = await this.row(input.destinationId, organizationId, em);
    this.#checked({ ...input, provider: input.provider === undefined ? row.provider : input.provider }, organizationId);
    await this.#checkEndpoint(input.endpoint, organizationId);
    if (input.serverId) await this.#assertServer(input.serverId, organizationId);
    Object.assign(row, {
      name: input.name,
      accessKey: input.accessKey,
      secretAccessKey: this.#secrets().encrypt(input.secretAccessKey),
      bucket: input.bucket,
      region: input.region,
      endpoint: input.endpoint,
      ...givenFields(input, ['provider', 'additionalFlags', 'serverId']),
    });
    await em.flush();
    return this.view(row);
  }

  async all(organizationId: string, em: EntityManager): Promise<DestinationViewT[]> {
    const rows = await em.find(Destination, { organizationId }, { orderBy: { createdAt: 'asc' } });
    return rows.map(r => this.view(r, false));
  }

  async remove(destinationId: string, organizationId: string, em: EntityManager): Promise<DestinationViewT> {
    const row = await this.row(destinationId, organizationId, em);
    const view = this.view(row);
    // Its backups (and their file records) go with it: the foreign keys cascade.
    await em.nativeDelete(Destination, { destinationId: row.destinationId });
    return view;
  }

  /** Writes, reads back and deletes a small object; a 400 naming what failed (endpoint, auth, bucket, write, read, delete). */
  async testConnection(input: DestinationInputT, organizationId: string): Promise<true> {
    const { storage, location } = this.#checked(input, organizationId);
    await this.#checkEndpoint(input.endpoint, organizationId);
    // The test runs from Berth; a serverId is still held to the organization's servers, as create and update hold it.
    if (input.serverId) await this.#assertServer(input.serverId, organizationId);
    const store = storage.open(location);
    const key = `${PROBE_PREFIX}${randomBytes(6).toString('hex')}`;
    const body = Buffer.from(`berth connection test ${new Date().toISOString()}\n`);
    try {
      await store.put(key, Readable.from([body]));
      const back: Buffer[] = [];
      for await (const chunk of await store.get(key)) back.push(Buffer.from(chunk as Buffer));
      if (!Buffer.concat(back).equals(body)) throw new StorageError('read', `${storage.id} storage: the object read back differs from the one written`);
      await store.remove(key);
    } catch (e) {
      if (!(e instanceof StorageError)) throw e;
      const field = ({ endpoint: 'endpoint', auth: 'accessKey', bucket: 'bucket' } as Record<string, string>)[e.failure];
      throw badRequest(`Connection test failed (${e.failure}): ${e.message}`, field ? [{ path: [field], message: `${e.failure}: ${e.message}` }] : []);
    }
    return true;
  }
}
