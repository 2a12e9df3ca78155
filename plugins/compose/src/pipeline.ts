// The stack's runs and what hangs off it, as the API sees them: queue a run, read the record
// with its deployments and mounts, convert its file, cancel, clear, delete, templates. The
// engine work of a run is the deployer's (deployer.ts).
import { invalidField, notFound, optionalService, type Cradle, type EntityManager } from '@berth/core';
import { placementOf, serverRelation } from '@berth/plugin-workloads';
import type { ComposeRow } from './entities.ts';
import { KIND, newRefreshToken, type ComposeService } from './service.ts';
import type { ComposeFound, ComposeView, CreateInput, ReadLogsInput, SearchInput, UpdateInput } from './schemas.ts';
import { composeDir, proxyKind, type ComposeDeployer } from './deployer.ts';
import { addSuffix, randomSuffix, ignoredKeys, isolate, parseCompose, parseComposeCommand, serviceNames, withDomains, type ComposeType } from './file/index.ts';
import { assertOwnReferences } from './ownership.ts';
import { catalogSource, fromBase64, fromCatalog, templates, type Processed } from './templates.ts';
import { projectName } from './engine.ts';

const titles: Record<string, string> = { deploy: 'Manual deployment', redeploy: 'Rebuild deployment', start: 'Start the stack', stop: 'Stop the stack' };

export class ComposePipeline {
  readonly #stacks: ComposeService;
  readonly #deployer: ComposeDeployer;
  readonly #cradle: () => Cradle;

  constructor(stacks: ComposeService, deployer: ComposeDeployer, cradle: () => Cradle) {
    this.#stacks = stacks;
    this.#deployer = deployer;
    this.#cradle = cradle;
  }

  async enqueue(row: ComposeRow, action: string, em: EntityManager, input: { title?: string; description?: string | null }) {
    const record = await this.#cradle().deployments.enqueue(
      {
        targetType: KIND,
        targetId: row.composeId,
        organizationId: row.organizationId,
        serverId: row.serverId ?? null,
        action,
        title: input.title || titles[action] || action,
        description: input.description ?? null,
      },
      em,
    );
    return record.deploymentId;
  }

  /** The record with its relations, as the peer's findComposeById answers it (one, delete). */
  async found(row: ComposeRow, organizationId: string, em: EntityManager): Promise<ComposeFound> {
    const cradle = this.#cradle();
    const { composeId } = row;
    // The deployment plugin is a declared dependency: its service is there.
    const records = (await cradle.deployments.listFor(KIND, [composeId], em)).get(composeId) ?? [];
    const directory = optionalService(cradle, 'mounts');
    const mounts = directory?.views((await directory.forServices(KIND, [composeId], em)).get(composeId) ?? []) ?? [];
    const proxied = await optionalService(cradle, 'domains')?.forService(KIND, composeId, em);
    const backups = (await optionalService(cradle, 'backupDirectory')?.viewsFor(KIND, composeId, em)) ?? [];
    return {
      ...this.#stacks.view(row),
      environment: await placementOf(cradle, row.environmentId, organizationId, em),
      deployments: cradle.deployments.views(records),
      mounts,
      domains: proxied?.domains ?? [],
      backups,
      github: (await optionalService(cradle, 'gitProviders')?.githubRelation(this.#stacks.settingsOf(row).githubId, organizationId, em)) ?? null,
      gitlab: (await optionalService(cradle, 'gitProviders')?.gitlabRelation(this.#stacks.settingsOf(row).gitlabId, organizationId, em)) ?? null,
      bitbucket: (await optionalService(cradle, 'gitProviders')?.bitbucketRelation(this.#stacks.settingsOf(row).bitbucketId, organizationId, em)) ?? null,
      gitea: (await optionalService(cradle, 'gitProviders')?.giteaRelation(this.#stacks.settingsOf(row).giteaId, organizationId, em)) ?? null,
      server: await serverRelation(cradle, row.serverId, organizationId, em),
    } as ComposeFound;
  }

  async remove(row: ComposeRow, deleteVolumes: boolean, organizationId: string, em: EntityManager): Promise<ComposeFound> {
    const found = await this.found(row, organizationId, em);
    await this.#cradle().workloads.kind(KIND)!.remove(this.#stacks.ref(row), em, { volumes: deleteVolumes });
    return found;
  }

  /** The file as the next deploy hands it to the program, without the owner labels (getConvertedCompose). */
  async converted(row: ComposeRow, em: EntityManager): Promise<string> {
    const settings = this.#stacks.settingsOf(row);
    const type = row.composeType as ComposeType;
    let text = row.composeFile;
    // The organization's network (the platform network for the instance operators'): the one its services with domains join.
    const network = await this.#cradle().hosts.networkOf(row.organizationId);
    if (settings.randomize && settings.suffix) text = addSuffix(text, String(settings.suffix), network);
    if (settings.isolatedDeployment) text = isolate(text, projectName(row.appName));
    return withDomains(text, await this.#deployer.routes(row, em), { type, proxy: proxyKind(this.#cradle()), platformNetwork: network, appName: row.appName });
  }

  /** The program line the deploy runs (the peer's getDefaultCommand, `docker ...`). */
  defaultCommand(row: ComposeRow): string {
    const p = projectName(row.appName);
    if (row.composeType === 'stack') return `docker stack deploy -c .berth-compose.yml --with-registry-auth --prune ${p}`;
    return `docker compose -p ${p} -f .berth-compose.yml --env-file .env up -d --build --remove-orphans`;
  }

  /** The checked changes: a custom command must pass the parser, a file must parse. */
  checkChanges(row: ComposeRow, changes: Record<string, unknown>): void {
    if (typeof changes.command === 'string' && changes.command.trim()) {
      try {
        parseComposeCommand(changes.command, composeDir(this.#cradle().config.dataDir, row.appName), { projectName: projectName(row.appName) });
      } catch (e) {
        throw invalidField('command', (e as Error).message);
      }
    }
    if (typeof changes.composeFile === 'string' && changes.composeFile.trim()) {
      try {
        parseCompose(changes.composeFile);
      } catch (e) {
        throw invalidField('composeFile', (e as Error).message);
      }
    }
  }

  vars(appName: string) {
    return { domainBase: this.#cradle().config.generatedDomainBase, appName };
  }

  async readLogs(row: ComposeRow, input: ReadLogsInput): Promise<string> {
    const stack = await this.#deployer.stackOf(row);
    const text = await stack.containerLogs(input.containerId, { tail: input.tail ?? 100, since: input.since ?? 'all' });
    if (text === null) throw notFound(`Container ${input.containerId} of this stack`);
    if (!input.search) return text;
    const needle = input.search.toLowerCase();
    return text
      .split('\n')
      .filter(l => l.toLowerCase().includes(needle))
      .join('\n');
  }

  /** The service names of the stored file, or of the last fetched one (git sources); NOT_FOUND when there is none yet. */
  async services(row: ComposeRow): Promise<string[]> {
    const text = row.sourceType === 'raw' ? row.composeFile : await this.#deployer.fetchedFile(row);
    const names = text ? serviceNames(text) : [];
    if (!names.length) throw notFound(row.sourceType === 'raw' ? 'Services of the compose file' : 'Services (deploy the stack once to fetch its file)');
    return names;
  }

  async mountsOf(row: ComposeRow, serviceName: string) {
    return (await this.#deployer.stackOf(row)).volumeMounts(serviceName);
  }
}

/**
 * compose.* for one request: records and runs confined to the caller's organization, in the
 * request's unit of work. Registered request-scoped as `callerCompose`.
 */
export const callerCompose = (stacks: ComposeService, pipeline: ComposePipeline) => (cradle: Cradle) => {
  const { principal, em, workloads } = cradle;
  const organizationId = principal!.organizationId;
  const assertAppNameFree = workloads.placement(organizationId); // a new record's serverId: one of the organization's servers
  const find = (composeId: string) => stacks.find(composeId, organizationId, em);
  const change = async (composeId: string, changes: Partial<UpdateInput> & Record<string, unknown>) => {
    const row = await find(composeId);
    pipeline.checkChanges(row, changes);
    // Another organization's volumes, networks and containers: refused when the file is saved (and again at deploy).
    if (typeof changes.composeFile === 'string' && changes.composeFile.trim()) await assertOwnReferences(changes.composeFile, { organizationId, serverId: row.serverId ?? null }, cradle, em);
    // Linking a repository whose webhook Berth registers needs its public address (a 400 before anything is saved).
    await optionalService(cradle, 'deployHooks')?.assertLinkable(KIND, composeId, changes, principal!, em);
    const changed = await stacks.change(composeId, organizationId, changes, em, assertAppNameFree, principal!);
    // A linked repository gets its push webhook registered (and an unlinked one loses it).
    await optionalService(cradle, 'deployHooks')?.syncWebhook(KIND, composeId, em);
    return changed;
  };
  /** A processed template's mounts and domains, made for the stack through their plugins. */
  const attach = async (row: ComposeRow, processed: Processed) => {
    for (const m of processed.mounts) {
      await cradle.callerMounts.create({ type: 'file', filePath: m.filePath, content: m.content, mountPath: `/${m.filePath}`, serviceId: row.composeId, serviceType: KIND });
    }
    for (const d of processed.domains) {
      await cradle.callerDomains.create({
        host: d.host,
        path: d.path || '/',
        port: d.port,
        serviceName: d.serviceName,
        composeId: row.composeId,
        domainType: KIND,
        https: false,
        certificateType: 'none',
      });
    }
  };
  return {
    create: async (input: CreateInput) => {
      if (input.composeFile?.trim()) await assertOwnReferences(input.composeFile, { organizationId, serverId: input.serverId ?? null }, cradle, em);
      return stacks.view(await stacks.create(input, organizationId, em, assertAppNameFree));
    },
    /** A raw stack with its env, file mounts (under files/) and domains, not yet deployed (ai.deploy). */
    createRaw: async (input: CreateInput & { env: string }, attached: Pick<Processed, 'mounts' | 'domains'>) => {
      const row = await stacks.create({ ...input, sourceType: 'raw' } as CreateInput, organizationId, em, assertAppNameFree);
      await attach(row, attached as Processed);
      return stacks.view(row);
    },
    one: async (composeId: string): Promise<ComposeView> => ({ ...(await pipeline.found(await find(composeId), organizationId, em)), hasGitProviderAccess: true, unauthorizedProvider: null }),
    change: async (composeId: string, changes: Partial<UpdateInput> & Record<string, unknown>) => stacks.view(await change(composeId, changes)),
    run: async (composeId: string, action: string, input: { title?: string; description?: string | null } = {}) => pipeline.enqueue(await find(composeId), action, em, input),
    remove: async (composeId: string, deleteVolumes: boolean) => pipeline.remove(await find(composeId), deleteVolumes, organizationId, em),
    clearQueue: async (composeId: string) => cradle.deployments.clearQueueFor(KIND, (await find(composeId)).composeId, em),
    clearDeployments: async (composeId: string) => cradle.deployments.removeFor(KIND, (await find(composeId)).composeId, em),
    cancel: async (composeId: string) => cradle.deployments.cancelFor(KIND, (await find(composeId)).composeId, em),
    search: (input: SearchInput) => stacks.search(input, organizationId, em),
    readLogs: async (input: ReadLogsInput) => pipeline.readLogs(await find(input.composeId), input),
    refreshToken: (composeId: string) => change(composeId, { refreshToken: newRefreshToken() }),
    services: async (composeId: string) => pipeline.services(await find(composeId)),
    mountsByService: async (composeId: string, serviceName: string) => pipeline.mountsOf(await find(composeId), serviceName),
    sourceType: async (composeId: string) => (await find(composeId)).sourceType,
    randomized: async (composeId: string, suffix?: string) => addSuffix((await find(composeId)).composeFile, suffix || randomSuffix(), await cradle.hosts.networkOf(organizationId)),
    isolated: async (composeId: string, suffix?: string) => {
      const row = await find(composeId);
      return isolate(row.composeFile, suffix || projectName(row.appName));
    },
    converted: async (composeId: string) => pipeline.converted(await find(composeId), em),
    ignored: async (composeId: string) => {
      const row = await find(composeId);
      return ignoredKeys(row.composeFile, row.composeType as ComposeType);
    },
    defaultCommand: async (composeId: string) => pipeline.defaultCommand(await find(composeId)),
    templates: (baseUrl?: string) => templates(catalogSource(cradle, baseUrl)),
    preview: async (base64: string, appName: string) => toPeer(await fromBase64(base64, pipeline.vars(appName))),
    process: async (composeId: string, base64: string) => toPeer(await fromBase64(base64, pipeline.vars((await find(composeId)).appName))),
    /** Replaces the stack's file, env, mounts and domains with the template's (the peer's import). */
    importTemplate: async (composeId: string, base64: string) => {
      const row = await find(composeId);
      const processed = await fromBase64(base64, pipeline.vars(row.appName));
      const directory = optionalService(cradle, 'mounts');
      if (directory) await directory.removeForService(KIND, row.composeId, em);
      await optionalService(cradle, 'domains')?.removeForService(stacks.ref(row), em);
      await stacks.change(composeId, organizationId, { composeFile: processed.compose, sourceType: 'raw', env: processed.env.join('\n') }, em, assertAppNameFree);
      await attach(row, processed);
      return { success: true, message: 'Template imported successfully' };
    },
    deployTemplate: async (input: { environmentId?: string; projectId?: string; id: string; baseUrl?: string; serverId?: string }) => {
      const source = catalogSource(cradle, input.baseUrl);
      const entry = (await templates(source)).find(t => t.id === input.id);
      if (!entry) throw invalidField('id', `no template "${input.id}" in the catalog`);
      const appName = `${input.id.toLowerCase().replace(/[^a-z0-9-]/g, '-')}-${newRefreshToken()
        .slice(0, 6)
        .toLowerCase()
        .replace(/[^a-z0-9]/g, 'x')}`;
      const processed = await fromCatalog(source, input.id, pipeline.vars(appName));
      const row = await stacks.create(
        {
          name: input.id,
          appName,
          environmentId: input.environmentId,
          projectId: input.projectId,
          serverId: input.serverId,
          composeFile: processed.compose,
          env: processed.env.join('\n'),
          sourceType: 'raw',
          icon: entry.logo,
        },
        organizationId,
        em,
        assertAppNameFree,
      );
      await attach(row, processed);
      return stacks.view(row);
    },
  };
};

const toPeer = (p: Processed) => ({ compose: p.compose, template: { envs: p.env, mounts: p.mounts, domains: p.domains } });

declare module '@berth/core' {
  interface Cradle {
    /** compose.* for the current request's caller (request scope only). */
    callerCompose: ReturnType<ReturnType<typeof callerCompose>>;
  }
}

export type { ComposeRow };
