// compose.*: the stacks of the caller's organization and what hangs off them, as the API sees
// them — create, read with the deployments and mounts, change, queue a run, cancel, clear, delete,
// search, the file as it will run, logs, and templates. Request-scoped: the caller's organization
// and the request's transaction come from the container (scope.ts), so handlers pass only their
// input. The engine work of a run is the deployer's (deployer.ts).
import { iso, invalidField, notFound, optionalService, type Static } from '@berth/core';
import { enqueueRun, linesContaining, newRefreshToken, searchFilters } from '@berth/plugin-workloads';
import { Compose, type ComposeRow } from './entities.ts';
import { KIND } from './service.ts';
import type { ComposeFields, ComposeFound, ComposeView, CreateInput, ReadLogsInput, SearchInput, SearchResult, UpdateInput } from './schemas.ts';
import { proxyKind } from './deployer.ts';
import { addSuffix, randomSuffix, ignoredKeys, isolate, serviceNames, withDomains, type ComposeType } from './file/index.ts';
import { assertOwnReferences } from './ownership.ts';
import { catalogSource, fromBase64, fromCatalog, templates, type Processed } from './templates.ts';
import { projectName } from './engine.ts';
import { ComposeScope } from './scope.ts';

const titles: Record<string, string> = { deploy: 'Manual deployment', redeploy: 'Rebuild deployment', start: 'Start the stack', stop: 'Stop the stack' };

/** Registered asClass(...).scoped() as `composeRequests`; the deployer, the workload kind and the push source use the singleton `composeStacks` service. */
export class ComposeRequests extends ComposeScope {
  // ------------------------------------------------------------ records
  /** Creates a stack in one of the organization's environments; a file given is checked for other organizations' references. */
  async create(input: CreateInput): Promise<ComposeFields> {
    if (input.composeFile?.trim()) await assertOwnReferences(input.composeFile, { organizationId: this.organizationId, serverId: input.serverId ?? null }, this.cradle, this.em);
    return this.stacks.view(await this.newStack(input));
  }

  /** A raw stack with its env, file mounts (under files/) and domains, not yet deployed (ai.deploy). */
  async createRaw(input: CreateInput & { env: string }, attached: Pick<Processed, 'mounts' | 'domains'>): Promise<ComposeFields> {
    const row = await this.newStack({ ...input, sourceType: 'raw' });
    await this.attach(row, attached);
    return this.stacks.view(row);
  }

  /** The stack with its placement, deployments, mounts, domains and backups. */
  async one(composeId: string): Promise<ComposeView> {
    return { ...(await this.withRelations(await this.stack(composeId))), hasGitProviderAccess: true, unauthorizedProvider: null };
  }

  /** Applies any subset of the API's fields (checked: the command, the file, its references, a linked repository). */
  async change(composeId: string, changes: Partial<UpdateInput> & Record<string, unknown>): Promise<ComposeFields> {
    return this.stacks.view(await this.changeChecked(composeId, changes));
  }

  /** Issues a new webhook refresh token. */
  async refreshToken(composeId: string): Promise<ComposeRow> {
    return this.changeChecked(composeId, { refreshToken: newRefreshToken() });
  }

  /** Deletes the stack and what it left on the host (its named volumes when asked); answers the record as it was, with its relations. */
  async remove(composeId: string, deleteVolumes: boolean): Promise<ComposeFound> {
    const row = await this.stack(composeId);
    const found = await this.withRelations(row);
    await this.cradle.workloads.kind(KIND)!.remove(this.stacks.ref(row), this.em, { volumes: deleteVolumes });
    return found;
  }

  /** Stacks matching the given texts, paged. */
  async search(input: SearchInput): Promise<Static<typeof SearchResult>> {
    const and = await searchFilters(input, this.organizationId, this.em, { field: 'composeId', grants: this.principal.grants });
    const [rows, total] = await this.em.findAndCount(Compose, { $and: and }, { orderBy: { createdAt: 'desc', composeId: 'asc' }, limit: input.limit ?? 20, offset: input.offset ?? 0 });
    // The peer's search answers these columns only.
    const items = rows.map(r => ({
      composeId: r.composeId,
      name: r.name,
      appName: r.appName,
      description: r.description ?? null,
      environmentId: r.environmentId,
      composeStatus: r.composeStatus,
      sourceType: r.sourceType,
      createdAt: iso(r.createdAt)!,
    }));
    return { items, total };
  }

  // ------------------------------------------------------------ runs
  /** Queues a run of the stack; answers the queued deployment's id. */
  async run(composeId: string, action: string, input: { title?: string; description?: string | null } = {}): Promise<string> {
    return enqueueRun(this.cradle.deployments, this.stacks.ref(await this.stack(composeId)), action, titles, input, this.em);
  }

  /** Drops the queued deployments. */
  async clearQueue(composeId: string): Promise<number> {
    return this.cradle.deployments.clearQueueFor(KIND, (await this.stack(composeId)).composeId, this.em);
  }

  /** Removes the finished deployments and their logs. */
  async clearDeployments(composeId: string): Promise<void> {
    return this.cradle.deployments.removeFor(KIND, (await this.stack(composeId)).composeId, this.em);
  }

  /** Stops the running deployment and drops the queued ones. */
  async cancel(composeId: string): Promise<number> {
    return this.cradle.deployments.cancelFor(KIND, (await this.stack(composeId)).composeId, this.em);
  }

  /** A container of the stack: its output, filtered by `search`. */
  async readLogs(input: ReadLogsInput): Promise<string> {
    const stack = await this.deployer.stackOf(await this.stack(input.composeId));
    const text = await stack.containerLogs(input.containerId, { tail: input.tail ?? 100, since: input.since ?? 'all' });
    if (text === null) throw notFound(`Container ${input.containerId} of this stack`);
    return linesContaining(text, input.search);
  }

  // ------------------------------------------------------------ the file
  /** The service names of the stored file, or of the last fetched one (git sources); NOT_FOUND when there is none yet. */
  async services(composeId: string): Promise<string[]> {
    const row = await this.stack(composeId);
    const text = row.sourceType === 'raw' ? row.composeFile : await this.deployer.fetchedFile(row);
    const names = text ? serviceNames(text) : [];
    if (!names.length) throw notFound(row.sourceType === 'raw' ? 'Services of the compose file' : 'Services (deploy the stack once to fetch its file)');
    return names;
  }

  /** The named volumes a service's container mounts, as the engine reports them. */
  async mountsByService(composeId: string, serviceName: string) {
    return (await this.deployer.stackOf(await this.stack(composeId))).volumeMounts(serviceName);
  }

  /** The stack's source type. */
  async sourceType(composeId: string): Promise<string> {
    return (await this.stack(composeId)).sourceType;
  }

  /** The file with a suffix on its names and every reference to them (not saved). */
  async randomized(composeId: string, suffix?: string): Promise<string> {
    return addSuffix((await this.stack(composeId)).composeFile, suffix || randomSuffix(), await this.cradle.hosts.networkOf(this.organizationId));
  }

  /** The file with a network of its own that every service joins (not saved). */
  async isolated(composeId: string, suffix?: string): Promise<string> {
    const row = await this.stack(composeId);
    return isolate(row.composeFile, suffix || projectName(row.appName));
  }

  /** The file as the next deploy hands it to the program, without the owner labels (getConvertedCompose). */
  async converted(composeId: string): Promise<string> {
    const row = await this.stack(composeId);
    const settings = this.stacks.settingsOf(row);
    const type = row.composeType as ComposeType;
    let text = row.composeFile;
    // The organization's network (the platform network for the instance operators'): the one its services with domains join.
    const network = await this.cradle.hosts.networkOf(row.organizationId);
    if (settings.randomize && settings.suffix) text = addSuffix(text, String(settings.suffix), network);
    if (settings.isolatedDeployment) text = isolate(text, projectName(row.appName));
    return withDomains(text, await this.deployer.routes(row, this.em), { type, proxy: proxyKind(this.cradle), platformNetwork: network, appName: row.appName });
  }

  /** What the stack's compose type ignores or refuses in its file. */
  async ignored(composeId: string) {
    const row = await this.stack(composeId);
    return ignoredKeys(row.composeFile, row.composeType as ComposeType);
  }

  /** The program line the deploy runs (the peer's getDefaultCommand, `docker ...`). */
  async defaultCommand(composeId: string): Promise<string> {
    const row = await this.stack(composeId);
    const p = projectName(row.appName);
    if (row.composeType === 'stack') return `docker stack deploy -c .berth-compose.yml --with-registry-auth --prune ${p}`;
    return `docker compose -p ${p} -f .berth-compose.yml --env-file .env up -d --build --remove-orphans`;
  }

  // ------------------------------------------------------------ templates
  /** The template catalog (the configured source, or baseUrl). */
  templates(baseUrl?: string) {
    return templates(catalogSource(this.cradle, baseUrl));
  }

  /** A base64 template processed for appName (nothing saved). */
  async preview(base64: string, appName: string) {
    return toPeer(await fromBase64(base64, this.vars(appName)));
  }

  /** A base64 template processed for the stack (nothing saved). */
  async process(composeId: string, base64: string) {
    return toPeer(await fromBase64(base64, this.vars((await this.stack(composeId)).appName)));
  }

  /** Replaces the stack's file, env, mounts and domains with the template's (the peer's import). */
  async importTemplate(composeId: string, base64: string): Promise<{ success: boolean; message: string }> {
    const row = await this.stack(composeId);
    const processed = await fromBase64(base64, this.vars(row.appName));
    const directory = optionalService(this.cradle, 'mounts');
    if (directory) await directory.removeForService(KIND, row.composeId, this.em);
    await optionalService(this.cradle, 'domains')?.removeForService(this.stacks.ref(row), this.em);
    await this.apply(row, { composeFile: processed.compose, sourceType: 'raw', env: processed.env.join('\n') });
    await this.attach(row, processed);
    return { success: true, message: 'Template imported successfully' };
  }

  /** Creates a stack from a catalog template, with its env, file mounts and domains (deployed next). */
  async deployTemplate(input: { environmentId?: string; projectId?: string; id: string; baseUrl?: string; serverId?: string }): Promise<ComposeFields> {
    const source = catalogSource(this.cradle, input.baseUrl);
    const entry = (await templates(source)).find(t => t.id === input.id);
    if (!entry) throw invalidField('id', `no template "${input.id}" in the catalog`);
    const appName = `${input.id.toLowerCase().replace(/[^a-z0-9-]/g, '-')}-${newRefreshToken()
      .slice(0, 6)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, 'x')}`;
    const processed = await fromCatalog(source, input.id, this.vars(appName));
    const row = await this.newStack({
      name: input.id,
      appName,
      environmentId: input.environmentId,
      projectId: input.projectId,
      serverId: input.serverId,
      composeFile: processed.compose,
      env: processed.env.join('\n'),
      sourceType: 'raw',
      icon: entry.logo,
    });
    await this.attach(row, processed);
    return this.stacks.view(row);
  }
}

const toPeer = (p: Processed) => ({ compose: p.compose, template: { envs: p.env, mounts: p.mounts, domains: p.domains } });

declare module '@berth/core' {
  interface Cradle {
    /** compose.* for the current request's caller (request scope only). */
    composeRequests: ComposeRequests;
  }
}
