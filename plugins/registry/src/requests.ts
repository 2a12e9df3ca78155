// registry.*: the registries of the caller's organization — stored, one, all, changed, removed, a
// self-hosted one enabled, and the push-and-pull check. No answer carries a password. A record of
// another organization is NOT_FOUND, never FORBIDDEN. Request-scoped: the caller's organization and
// the request's transaction come from the container.
import { badRequest, newId, notFound, optionalService, RequestScope } from '@berth/core';
import { checkRegistry, RegistryStepError, type RegistryCredentials } from './check.ts';
import { Registry, type RegistryRow } from './entities.ts';
import type { CreateInput, EnableSelfHostedInput, RegistryView, TestInput, UpdateInput } from './schemas.ts';
import { credentialsOf, toView } from './service.ts';

/** How long one check may take. */
const CHECK_TIMEOUT_MS = 180_000;

/** Registered asClass(...).scoped() as `registryRequests`; other plugins use the singleton `registries`. */
export class RegistryRequests extends RequestScope {
  /** Stores a registry; its password sealed. */
  async create(input: CreateInput): Promise<RegistryView> {
    if (input.serverId && input.serverId !== 'none') await this.#server(input.serverId);
    await this.#checkAddress(input.registryUrl);
    const row = this.em.create(Registry, {
      registryId: newId(),
      registryName: input.registryName,
      imagePrefix: input.imagePrefix || null,
      username: input.username.trim(),
      password: this.cradle.secrets.encrypt(input.password),
      registryUrl: input.registryUrl,
      registryType: input.registryType,
      organizationId: this.organizationId,
      createdAt: new Date(),
    });
    await this.em.flush();
    return toView(row);
  }

  /** A registry without its password. */
  one(registryId: string): Promise<RegistryView> {
    return this.cradle.registries.one(registryId, this.organizationId, this.em);
  }

  /** Oldest first, as the peer lists them. */
  async all(): Promise<RegistryView[]> {
    const rows = await this.em.find(Registry, { organizationId: this.organizationId }, { orderBy: { createdAt: 'asc', registryId: 'asc' } });
    return rows.map(toView);
  }

  /** Changes a registry's name, address, prefix, type or credentials. */
  async update(input: UpdateInput): Promise<boolean> {
    const row = await this.#find(input.registryId);
    const changes = (key: 'username' | 'password' | 'registryUrl') => input[key] !== undefined && (key === 'password' || input[key] !== row[key]);
    if (row.runsService && (['username', 'password', 'registryUrl'] as const).some(changes))
      throw badRequest(
        "The self-hosted registry's user and address are set when it is enabled (its htpasswd, route and the nodes' CA files): remove it and enable it again to change them (its images stay in its volume)",
      );
    if (input.serverId && input.serverId !== 'none') await this.#server(input.serverId);
    if (input.registryUrl !== undefined && !row.runsService) await this.#checkAddress(input.registryUrl);
    if (input.registryName !== undefined) row.registryName = input.registryName;
    if (input.imagePrefix !== undefined) row.imagePrefix = input.imagePrefix || null;
    if (input.username !== undefined) row.username = input.username.trim();
    if (input.password !== undefined) row.password = this.cradle.secrets.encrypt(input.password);
    if (input.registryUrl !== undefined) row.registryUrl = input.registryUrl;
    if (input.registryType !== undefined) row.registryType = input.registryType;
    await this.em.flush();
    return true;
  }

  /**
   * Deletes the record; answers it as it was. Nothing to log out of: no node was ever logged in
   * (every push and pull carried the credentials with it). A self-hosted registry's service, secret,
   * route and CA files on the nodes go with it; its volume (the images) stays.
   */
  async remove(registryId: string): Promise<RegistryView> {
    const row = await this.#find(registryId);
    const view = toView(row);
    if (row.runsService) await this.cradle.registries.selfHosted.disable({ registryId, registryUrl: row.registryUrl, serverId: row.serverId ?? null, organizationId: this.organizationId }, this.em);
    await this.em.nativeDelete(Registry, { registryId, organizationId: this.organizationId });
    return view;
  }

  /**
   * Runs a registry on the manager (this machine or serverId) behind the proxy, every node trusting
   * the proxy's CA, and stores it as a selfHosted registry once a login through the proxy succeeds.
   */
  async enableSelfHosted(input: EnableSelfHostedInput): Promise<RegistryView> {
    const serverId = input.serverId && input.serverId !== 'none' ? input.serverId : null;
    if (serverId) await this.#server(serverId);
    const registryId = newId();
    const username = input.username.trim();
    await this.cradle.registries.selfHosted.enable({ registryId, registryUrl: input.registryUrl, username, password: input.password, serverId, organizationId: this.organizationId }, this.em);
    const row = this.em.create(Registry, {
      registryId,
      registryName: 'Self Hosted Registry',
      imagePrefix: null,
      username,
      password: this.cradle.secrets.encrypt(input.password),
      registryUrl: input.registryUrl,
      registryType: 'selfHosted',
      organizationId: this.organizationId,
      runsService: true,
      serverId,
      createdAt: new Date(),
    });
    await this.em.flush();
    return toView(row);
  }

  /** Logs in, pushes and pulls a generated image from the engine of serverId (this machine without one). */
  async test(input: TestInput): Promise<true> {
    await this.#checkAddress(input.registryUrl);
    return this.#check({ registryUrl: input.registryUrl, username: input.username.trim(), password: input.password, imagePrefix: input.imagePrefix || null }, input.serverId);
  }

  /** The check with a stored registry's credentials. */
  async testById(registryId: string, serverId: string | undefined): Promise<true> {
    const row = await this.#find(registryId);
    // Checked again now (DNS may have changed since it was saved); the self-hosted registry is Berth's own.
    if (!row.runsService) await this.#checkAddress(row.registryUrl);
    return this.#check(credentialsOf(row, this.cradle.secrets), serverId);
  }

  /** A registry's address must be one the organization may reach (outboundAllow; a 400 naming registryUrl). */
  async #checkAddress(registryUrl: string): Promise<void> {
    const value = registryUrl.trim();
    if (!value) return; // Docker Hub
    await this.cradle.outbound.checkSaved(value, { field: 'registryUrl', organizationId: this.organizationId });
  }

  async #check(credentials: RegistryCredentials, serverId: string | undefined): Promise<true> {
    const onServer = serverId && serverId !== 'none' ? serverId : null;
    if (onServer) await this.#server(onServer);
    const docker = await (await this.cradle.hosts.of(onServer)).engine();
    const ca = await this.#selfHostedCa(credentials.registryUrl);
    try {
      const result = await checkRegistry(docker, credentials, AbortSignal.timeout(CHECK_TIMEOUT_MS), ca ? { ca } : {});
      if (!result.deleted) this.cradle.logger.warn({ tag: result.tag, reason: result.deleteRefusal }, `registry check: ${result.tag} stays in the registry (${result.deleteRefusal})`);
      return true;
    } catch (e) {
      if (e instanceof RegistryStepError) throw badRequest(e.message);
      const message = ((e as Error).message ?? String(e)).split(credentials.password).join('***');
      throw badRequest(`Registry check failed: ${message}`);
    }
  }

  /**
   * The CA Berth's proxy made for the organization's self-hosted registry at registryUrl (the one
   * the nodes trust in certs.d), which Berth trusts too when it speaks to that registry itself;
   * undefined for any other registry (the system's roots apply).
   */
  async #selfHostedCa(registryUrl: string): Promise<string | undefined> {
    const row = await this.em.findOne(Registry, { organizationId: this.organizationId, registryUrl, runsService: true });
    if (!row) return undefined;
    const provider = optionalService(this.cradle, 'proxyRouting')?.provider(row.serverId ?? null);
    return (await provider?.ownCaRoot?.().catch(() => undefined)) ?? undefined;
  }

  async #server(serverId: string): Promise<void> {
    const servers = optionalService(this.cradle, 'servers');
    if (!servers) throw notFound('Server');
    await servers.owned(serverId, this.organizationId, this.em);
  }

  /** One of the organization's registries (NOT_FOUND otherwise: another organization's is never FORBIDDEN). */
  #find(registryId: string): Promise<RegistryRow> {
    return this.owned(Registry, { registryId }, 'Registry');
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** registry.* for the current request's caller (request scope only). */
    registryRequests: RegistryRequests;
  }
}
