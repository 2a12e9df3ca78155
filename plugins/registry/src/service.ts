// The registries as other plugins (application deploys) use them to push and pull with one: its
// credentials, handed per engine call and never written on a node. A record of another organization
// is NOT_FOUND, never FORBIDDEN. registry.* is requests.ts.
import { iso, type Cradle, type EntityManager, type Logger, type SecretBox, findOwned } from '@berth/core';
import type { ContainerHosts } from '@berth/plugin-hosts';
import type Docker from 'dockerode';
import { authConfig, pushImage, repositoryOf, type RegistryCredentials } from './check.ts';
import { cliLogin, registriesForImages, type CliLoginIo, type CliLogins } from './cli-login.ts';
import { Registry, type RegistryRow } from './entities.ts';
import { RegistryView } from './schemas.ts';
import { SelfHostedRegistries, type SwarmChange } from './self-hosted.ts';

export const toView = (r: RegistryRow): RegistryView => ({
  registryId: r.registryId,
  registryName: r.registryName,
  imagePrefix: r.imagePrefix ?? null,
  username: r.username,
  registryUrl: r.registryUrl,
  createdAt: iso(r.createdAt)!,
  registryType: r.registryType as RegistryView['registryType'],
  organizationId: r.organizationId,
});

/** A registry's credentials, its password opened. */
export const credentialsOf = (row: RegistryRow, secrets: SecretBox): RegistryCredentials => ({
  registryUrl: row.registryUrl,
  username: row.username,
  password: secrets.decrypt(row.password),
  imagePrefix: row.imagePrefix ?? null,
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
  /** The image of a self-hosted registry (config registryImage). */
  registryImage: () => string;
}

export class RegistryService {
  readonly #deps: RegistryDeps;
  /** The self-hosted registries: registry.* enables and removes them (requests.ts); a swarm's changes keep their CA on its nodes. */
  readonly selfHosted: SelfHostedRegistries;

  constructor(deps: RegistryDeps) {
    this.#deps = deps;
    this.selfHosted = new SelfHostedRegistries({ hosts: deps.hosts, cradle: deps.cradle, logger: deps.logger, image: deps.registryImage, readyTimeoutMs: 60_000 });
  }

  // ------------------------------------------------------------ for other plugins
  /** The organization's registry with its decrypted credentials, for one deploy (NOT_FOUND for another organization's). */
  async forDeploy(registryId: string, organizationId: string, em: EntityManager): Promise<RegistryForDeploy> {
    const row = await this.#find(registryId, organizationId, em);
    const credentials = credentialsOf(row, this.#deps.secrets());
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
      rows.map(r => ({ ...credentialsOf(r, this.#deps.secrets()), registryId: r.registryId })),
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

  /** The organization's registry, without its password (NOT_FOUND for another organization's). */
  async one(registryId: string, organizationId: string, em: EntityManager): Promise<RegistryView> {
    return toView(await this.#find(registryId, organizationId, em));
  }

  /** A server joined a swarm: the self-hosted registries on its manager have their CA written on it (see SelfHostedRegistries.nodeJoined). */
  nodeJoined(joined: SwarmChange, em: EntityManager): Promise<void> {
    return this.selfHosted.nodeJoined(joined, em);
  }

  /** A server left a swarm: their CA files go from it. */
  nodeLeft(left: SwarmChange, em: EntityManager): Promise<void> {
    return this.selfHosted.nodeLeft(left, em);
  }

  #find(registryId: string, organizationId: string, em: EntityManager): Promise<RegistryRow> {
    return findOwned(em, Registry, { registryId }, organizationId, 'Registry');
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The registries of every organization (deploys push and pull with them); from the registry plugin. */
    registries: RegistryService;
  }
}
