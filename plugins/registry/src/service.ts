// The registries of an organization, and what other plugins (application deploys) use to push and
// pull with one: its credentials, handed per engine call and never written on a node. A record of
// another organization is NOT_FOUND, never FORBIDDEN.
import { badRequest, iso, newId, notFound, optionalService, type Cradle, type EntityManager, type Logger, type SecretBox } from '@berth/core';
import type { ContainerHosts } from '@berth/plugin-hosts';
import type Docker from 'dockerode';
import { authConfig, checkRegistry, pushImage, repositoryOf, RegistryStepError, type RegistryCredentials } from './check.ts';
import { cliLogin, registriesForImages, type CliLoginIo, type CliLogins } from './cli-login.ts';
import { Registry, type RegistryRow } from './entities.ts';
import { RegistryView, type CreateInput, type EnableSelfHostedInput, type TestInput, type UpdateInput } from './schemas.ts';
import { SelfHostedRegistries, type SwarmChange } from './self-hosted.ts';

const toView = (r: RegistryRow): RegistryView => ({
  registryId: r.registryId,
  registryName: r.registryName,
  imagePrefix: r.imagePrefix ?? null,
  username: r.username,
  registryUrl: r.registryUrl,
  createdAt: iso(r.createdAt)!,
  registryType: r.registryType as RegistryView['registryType'],
  organizationId: r.organizationId,
});

/** A registry as a deploy uses it: where its images go and the auth config for the engine. */
export interface RegistryForDeploy {
  registryId: string;
  registryUrl: string;
  /** `<registry>/<prefix>/<name>` (no tag). */
  repository(name: string): string;
  auth: { username: string; password: string; serveraddress: string };
}

export interface RegistryDeps {
  secrets: () => SecretBox;
  hosts: () => ContainerHosts;
  cradle: () => Cradle;
  logger: Logger;
  /** How long one check may take. */
  checkTimeoutMs: number;
  /** The image of a self-hosted registry (config registryImage). */
  registryImage: () => string;
}

export class RegistryService {
  readonly #deps: RegistryDeps;
  readonly #selfHosted: SelfHostedRegistries;

  constructor(deps: RegistryDeps) {
    this.#deps = deps;
    this.#selfHosted = new SelfHostedRegistries({ hosts: deps.hosts, cradle: deps.cradle, logger: deps.logger, image: deps.registryImage, readyTimeoutMs: 60_000 });
  }

  // ------------------------------------------------------------ for other plugins
  /** The organization's registry with its decrypted credentials, for one deploy (NOT_FOUND for another organization's). */
  async forDeploy(registryId: string, organizationId: string, em: EntityManager): Promise<RegistryForDeploy> {
    const row = await this.#find(registryId, organizationId, em);
    const credentials = this.#credentials(row);
    return { registryId, registryUrl: row.registryUrl, repository: name => repositoryOf(credentials, name), auth: authConfig(credentials) };
  }

  /**
   * Tags a locally built image `<registry>/<prefix>/<name>:<tag>` on the engine that built it and
   * pushes it with the registry's credentials (per call: nothing is written on the node); answers
   * the pushed reference and the auth config the service is created with.
   */
  async push(
    docker: Docker,
    built: string,
    target: { name: string; tag: string; registryId: string; organizationId: string },
    io: { em: EntityManager; signal: AbortSignal; log(line: string): void },
  ): Promise<{ image: string; registryAuth: RegistryForDeploy['auth'] }> {
    const registry = await this.forDeploy(target.registryId, target.organizationId, io.em);
    const repository = registry.repository(target.name);
    const image = `${repository}:${target.tag}`;
    await docker.getImage(built).tag({ repo: repository, tag: target.tag });
    io.log(`Pushing ${image}`);
    try {
      await pushImage(docker, image, registry.auth, io.signal);
    } catch (e) {
      const reason = ((e as { json?: { message?: string } }).json?.message ?? (e as Error).message ?? String(e)).split(registry.auth.password).join('***');
      throw new Error(`Push of ${image} failed: ${reason}`);
    }
    io.log(`Pushed ${image}`);
    return { image, registryAuth: registry.auth };
  }

  /**
   * CLI logins for a program that pulls `images` (the Compose program, `docker stack deploy
   * --with-registry-auth`): the organization's registries those images come from, logged in to in a
   * private DOCKER_CONFIG for this run only; null when none matches (the program runs as it is).
   */
  async cliLogins(organizationId: string, images: string[], em: EntityManager, io: CliLoginIo & { redact?(value: string): void }): Promise<CliLogins | null> {
    const rows = await em.find(Registry, { organizationId }, { orderBy: { createdAt: 'asc', registryId: 'asc' } });
    const matched = registriesForImages(
      rows.map(r => ({ ...this.#credentials(r), registryId: r.registryId })),
      images,
    );
    if (!matched.length) return null;
    for (const r of matched) io.redact?.(r.password);
    return cliLogin(matched, io);
  }

  /** The schema of a workload's registry relations (the record as registry.one answers it: no password). */
  relationSchema(): typeof RegistryView {
    return RegistryView;
  }

  /** The registry a workload's registryId (or build/rollback registry id) names; null without one or for another organization's. */
  async relation(registryId: unknown, organizationId: string, em: EntityManager): Promise<RegistryView | null> {
    if (typeof registryId !== 'string' || !registryId) return null;
    const row = await em.findOne(Registry, { registryId, organizationId });
    return row ? toView(row) : null;
  }

  // ------------------------------------------------------------ registry.*
  async create(input: CreateInput, organizationId: string, em: EntityManager): Promise<RegistryView> {
    if (input.serverId && input.serverId !== 'none') await this.#server(input.serverId, organizationId, em);
    await this.#checkAddress(input.registryUrl, organizationId);
    const row = em.create(Registry, {
      registryId: newId(),
      registryName: input.registryName,
      imagePrefix: input.imagePrefix || null,
      username: input.username.trim(),
      password: this.#deps.secrets().encrypt(input.password),
      registryUrl: input.registryUrl,
      registryType: input.registryType,
      organizationId,
      createdAt: new Date(),
    });
    await em.flush();
    return toView(row);
  }

  async one(registryId: string, organizationId: string, em: EntityManager): Promise<RegistryView> {
    return toView(await this.#find(registryId, organizationId, em));
  }

  /** Oldest first, as the peer lists them. */
  async all(organizationId: string, em: EntityManager): Promise<RegistryView[]> {
    const rows = await em.find(Registry, { organizationId }, { orderBy: { createdAt: 'asc', registryId: 'asc' } });
    return rows.map(toView);
  }

  async update(input: UpdateInput, organizationId: string, em: EntityManager): Promise<boolean> {
    const row = await this.#find(input.registryId, organizationId, em);
    const changes = (key: 'username' | 'password' | 'registryUrl') => input[key] !== undefined && (key === 'password' || input[key] !== row[key]);
    if (row.runsService && (['username', 'password', 'registryUrl'] as const).some(changes))
      throw badRequest(
        "The self-hosted registry's user and address are set when it is enabled (its htpasswd, route and the nodes' CA files): remove it and enable it again to change them (its images stay in its volume)",
      );
    if (input.serverId && input.serverId !== 'none') await this.#server(input.serverId, organizationId, em);
    if (input.registryUrl !== undefined && !row.runsService) await this.#checkAddress(input.registryUrl, organizationId);
    if (input.registryName !== undefined) row.registryName = input.registryName;
    if (input.imagePrefix !== undefined) row.imagePrefix = input.imagePrefix || null;
    if (input.username !== undefined) row.username = input.username.trim();
    if (input.password !== undefined) row.password = this.#deps.secrets().encrypt(input.password);
    if (input.registryUrl !== undefined) row.registryUrl = input.registryUrl;
    if (input.registryType !== undefined) row.registryType = input.registryType;
    await em.flush();
    return true;
  }

  /**
   * Deletes the record; answers it as it was. Nothing to log out of: no node was ever logged in
   * (every push and pull carried the credentials with it). A self-hosted registry's service, secret,
   * route and CA files on the nodes go with it; its volume (the images) stays.
   */
  async remove(registryId: string, organizationId: string, em: EntityManager): Promise<RegistryView> {
    const row = await this.#find(registryId, organizationId, em);
    const view = toView(row);
    if (row.runsService) await this.#selfHosted.disable({ registryId, registryUrl: row.registryUrl, serverId: row.serverId ?? null, organizationId }, em);
    await em.nativeDelete(Registry, { registryId, organizationId });
    return view;
  }

  /** A server joined a swarm: the self-hosted registries on its manager have their CA written on it (see SelfHostedRegistries.nodeJoined). */
  nodeJoined(joined: SwarmChange, em: EntityManager): Promise<void> {
    return this.#selfHosted.nodeJoined(joined, em);
  }

  /** A server left a swarm: their CA files go from it. */
  nodeLeft(left: SwarmChange, em: EntityManager): Promise<void> {
    return this.#selfHosted.nodeLeft(left, em);
  }

  /**
   * Runs a registry on the manager (this machine or serverId) behind the proxy, every node trusting
   * the proxy's CA, and stores it as a selfHosted registry once a login through the proxy succeeds.
   */
  async enableSelfHosted(input: EnableSelfHostedInput, organizationId: string, em: EntityManager): Promise<RegistryView> {
    const serverId = input.serverId && input.serverId !== 'none' ? input.serverId : null;
    if (serverId) await this.#server(serverId, organizationId, em);
    const registryId = newId();
    const username = input.username.trim();
    await this.#selfHosted.enable({ registryId, registryUrl: input.registryUrl, username, password: input.password, serverId, organizationId }, em);
    const row = em.create(Registry, {
      registryId,
      registryName: 'Self Hosted Registry',
      imagePrefix: null,
      username,
      password: this.#deps.secrets().encrypt(input.password),
      registryUrl: input.registryUrl,
      registryType: 'selfHosted',
      organizationId,
      runsService: true,
      serverId,
      createdAt: new Date(),
    });
    await em.flush();
    return toView(row);
  }

  /** Logs in, pushes and pulls a generated image from the engine of serverId (this machine without one). */
  async test(input: TestInput, organizationId: string, em: EntityManager): Promise<true> {
    await this.#checkAddress(input.registryUrl, organizationId);
    return this.#check({ registryUrl: input.registryUrl, username: input.username.trim(), password: input.password, imagePrefix: input.imagePrefix || null }, input.serverId, organizationId, em);
  }

  async testById(registryId: string, serverId: string | undefined, organizationId: string, em: EntityManager): Promise<true> {
    const row = await this.#find(registryId, organizationId, em);
    // Checked again now (DNS may have changed since it was saved); the self-hosted registry is Berth's own.
    if (!row.runsService) await this.#checkAddress(row.registryUrl, organizationId);
    return this.#check(this.#credentials(row), serverId, organizationId, em);
  }

  /** A registry's address must be one the organization may reach (outboundAllow; a 400 naming registryUrl). */
  async #checkAddress(registryUrl: string, organizationId: string): Promise<void> {
    const value = registryUrl.trim();
    if (!value) return; // Docker Hub
    await this.#deps.cradle().outbound.checkSaved(value, { field: 'registryUrl', organizationId });
  }

  async #check(credentials: RegistryCredentials, serverId: string | undefined, organizationId: string, em: EntityManager): Promise<true> {
    const onServer = serverId && serverId !== 'none' ? serverId : null;
    if (onServer) await this.#server(onServer, organizationId, em);
    const docker = await (await this.#deps.hosts().of(onServer)).engine();
    const ca = await this.#selfHostedCa(credentials.registryUrl, organizationId, em);
    try {
      const result = await checkRegistry(docker, credentials, AbortSignal.timeout(this.#deps.checkTimeoutMs), ca ? { ca } : {});
      if (!result.deleted) this.#deps.logger.warn({ tag: result.tag, reason: result.deleteRefusal }, `registry check: ${result.tag} stays in the registry (${result.deleteRefusal})`);
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
  async #selfHostedCa(registryUrl: string, organizationId: string, em: EntityManager): Promise<string | undefined> {
    const row = await em.findOne(Registry, { organizationId, registryUrl, runsService: true });
    if (!row) return undefined;
    const provider = optionalService(this.#deps.cradle(), 'proxyRouting')?.provider(row.serverId ?? null);
    return (await provider?.ownCaRoot?.().catch(() => undefined)) ?? undefined;
  }

  #credentials(row: RegistryRow): RegistryCredentials {
    return { registryUrl: row.registryUrl, username: row.username, password: this.#deps.secrets().decrypt(row.password), imagePrefix: row.imagePrefix ?? null };
  }

  async #server(serverId: string, organizationId: string, em: EntityManager): Promise<void> {
    const servers = optionalService(this.#deps.cradle(), 'servers');
    if (!servers) throw notFound('Server');
    await servers.owned(serverId, organizationId, em);
  }

  async #find(registryId: string, organizationId: string, em: EntityManager): Promise<RegistryRow> {
    const row = await em.findOne(Registry, { registryId, organizationId });
    if (!row) throw notFound('Registry');
    return row;
  }
}

/** registry.* for one request: the service confined to the caller's organization and the request's unit of work. */
export const callerRegistries =
  (registries: RegistryService) =>
  ({ principal, em }: Cradle) => {
    const organizationId = principal!.organizationId;
    return {
      create: (input: CreateInput) => registries.create(input, organizationId, em),
      one: (registryId: string) => registries.one(registryId, organizationId, em),
      all: () => registries.all(organizationId, em),
      update: (input: UpdateInput) => registries.update(input, organizationId, em),
      remove: (registryId: string) => registries.remove(registryId, organizationId, em),
      enableSelfHosted: (input: EnableSelfHostedInput) => registries.enableSelfHosted(input, organizationId, em),
      test: (input: TestInput) => registries.test(input, organizationId, em),
      testById: (registryId: string, serverId: string | undefined) => registries.testById(registryId, serverId, organizationId, em),
    };
  };

declare module '@berth/core' {
  interface Cradle {
    /** The registries of every organization (deploys push and pull with them); from the registry plugin. */
    registries: RegistryService;
    /** registry.* for the current request's caller (request scope only). */
    callerRegistries: ReturnType<ReturnType<typeof callerRegistries>>;
  }
}
