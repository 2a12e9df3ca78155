// What compose.* (requests.ts) starts from: the kernel's RequestScope (the caller, their
// organization and the request's transaction, from the request's scope) and the stacks as a
// request reads and writes them — one of the organization's, with its relations, a new one, a
// change checked and applied, a template's mounts and domains made for it.
import { invalidField, newId, notFound, optionalService, RequestScope, type Principal } from '@berth/core';
import { gitRelations, newRecordColumns, newRefreshToken, placementOf, serverRelation, webhookRegistration, type AssertAppNameFree } from '@berth/plugin-workloads';
import { Compose, type ComposeRow } from './entities.ts';
import { KIND, type ComposeService } from './service.ts';
import type { ComposeFound, CreateInput, UpdateInput } from './schemas.ts';
import { composeDir, type ComposeDeployer } from './deployer.ts';
import { parseCompose, parseComposeCommand, type ComposeType } from './file/index.ts';
import { assertOwnReferences, serviceNetworkPlans } from './ownership.ts';
import type { Processed } from './templates.ts';
import { projectName } from './engine.ts';

export abstract class ComposeScope extends RequestScope {
  /** The stack records (views, env, settings, how a change applies): the singleton the deployer and the workload kind use too. */
  protected get stacks(): ComposeService {
    return this.cradle.composeStacks;
  }

  /** The engine side of the stacks' runs: a stack's engine, its fetched file, its domains' routes. */
  protected get deployer(): ComposeDeployer {
    return this.cradle.composeDeployer;
  }

  /** The registry's appName check for the caller's organization: a new record's serverId must be one of the organization's servers. */
  protected get assertAppNameFree(): AssertAppNameFree {
    return this.cradle.workloads.placement(this.organizationId);
  }

  /** One of the organization's stacks (NOT_FOUND otherwise: another organization's is never FORBIDDEN). */
  protected async stack(composeId: string): Promise<ComposeRow> {
    const row = await this.em.findOne(Compose, { composeId, organizationId: this.organizationId });
    if (!row) throw notFound('Compose');
    return row;
  }

  /** The record with its relations, as the peer's findComposeById answers it (one, delete). */
  protected async withRelations(row: ComposeRow): Promise<ComposeFound> {
    const { cradle, organizationId, em } = this;
    const { composeId } = row;
    // The deployment plugin is a declared dependency: its service is there.
    const records = (await cradle.deployments.listFor(KIND, [composeId], em)).get(composeId) ?? [];
    const directory = optionalService(cradle, 'mounts');
    const mounts = directory?.views((await directory.forServices(KIND, [composeId], em)).get(composeId) ?? []) ?? [];
    const proxied = await optionalService(cradle, 'domains')?.forService(KIND, composeId, em);
    const backups = (await optionalService(cradle, 'backupDirectory')?.viewsFor(KIND, composeId, em)) ?? [];
    return {
      ...this.stacks.view(row),
      environment: await placementOf(cradle, row.environmentId, organizationId, em),
      deployments: cradle.deployments.views(records),
      mounts,
      domains: proxied?.domains ?? [],
      backups,
      ...(await gitRelations(optionalService(cradle, 'gitProviders'), cradle.providers.ids('git'), this.stacks.settingsOf(row), organizationId, em)),
      server: await serverRelation(cradle, row.serverId, organizationId, em),
      webhookRegistration: await webhookRegistration(cradle, KIND, composeId, em),
    } as ComposeFound;
  }

  /** A new stack in one of the organization's environments. */
  protected async newStack(input: CreateInput & { env?: string | null; sourceType?: string; icon?: string | null }): Promise<ComposeRow> {
    const { environments } = this.cradle;
    const { organizationId, em } = this;
    const columns = await newRecordColumns(input, { environments, organizationId, em, assertAppNameFree: this.assertAppNameFree });
    const row = this.em.create(Compose, {
      composeId: newId(),
      ...columns,
      // The peer's default source is github; a file given at creation is a raw source.
      sourceType: input.sourceType ?? (input.composeFile ? 'raw' : 'github'),
      composeType: input.composeType ?? 'docker-compose',
      composeStatus: 'idle',
      refreshToken: newRefreshToken(),
      webhookSecret: null,
      composeFile: input.composeFile ?? '',
      settings: input.icon ? { icon: input.icon } : {},
      sealed: this.cradle.secrets.encrypt(input.env ?? ''),
      createdAt: new Date(),
    });
    await this.grantCreated('services', row.composeId);
    await this.em.flush();
    return row;
  }

  /** A change as compose.update makes it: the command and file checked, the file's references the organization's own, the webhook kept in step. */
  protected async changeChecked(composeId: string, changes: Partial<UpdateInput> & Record<string, unknown>): Promise<ComposeRow> {
    const row = await this.stack(composeId);
    this.#checkChanges(row, changes);
    // Another organization's volumes, networks and containers: refused when the file is saved (and again at deploy).
    if (typeof changes.composeFile === 'string' && changes.composeFile.trim())
      await assertOwnReferences(changes.composeFile, { organizationId: this.organizationId, serverId: row.serverId ?? null }, this.cradle, this.em);
    // The user networks its services name: the organization's, on the stack's host, of a driver its type joins (and again at deploy).
    if (changes.serviceNetworks)
      await serviceNetworkPlans(
        changes.serviceNetworks,
        { organizationId: this.organizationId, serverId: row.serverId ?? null },
        (changes.composeType ?? row.composeType) as ComposeType,
        this.cradle,
        this.em,
      );
    await this.apply(row, changes, this.principal);
    // A linked repository gets its push webhook registered (and an unlinked one loses it).
    await optionalService(this.cradle, 'deployHooks')?.syncWebhook(KIND, composeId, this.em);
    return row;
  }

  /** Applies any subset of API fields to the row (update, saveEnvironment, randomize...). */
  protected async apply(row: ComposeRow, changes: Partial<UpdateInput> & Record<string, unknown>, caller?: Pick<Principal, 'userId' | 'role'>): Promise<void> {
    const { organizationId, em } = this;
    await this.stacks.changes.apply(row, changes, { organizationId, em, assertAppNameFree: this.assertAppNameFree, caller }, async (key, value, settings) => {
      if (key === 'env') {
        row.sealed = this.cradle.secrets.encrypt((value as string | null) ?? '');
        return true;
      }
      if (key !== 'customGitSSHKeyId' || typeof value !== 'string' || !value) return false;
      // The stored key pairs (their plugin may be disabled): a customGitSSHKeyId must name one of the organization's.
      await optionalService(this.cradle, 'sshKeys')?.one(value, organizationId, em);
      settings[key] = value;
      return true;
    });
  }

  /** The checked changes: a custom command must pass the parser, a file must parse. */
  #checkChanges(row: ComposeRow, changes: Record<string, unknown>): void {
    if (typeof changes.command === 'string' && changes.command.trim()) {
      try {
        parseComposeCommand(changes.command, composeDir(this.cradle.config.dataDir, row.appName), { projectName: projectName(row.appName) });
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

  /** A processed template's mounts and domains, made for the stack through their plugins. */
  protected async attach(row: ComposeRow, processed: Pick<Processed, 'mounts' | 'domains'>): Promise<void> {
    for (const m of processed.mounts) {
      await this.cradle.mountRequests.create({ type: 'file', filePath: m.filePath, content: m.content, mountPath: `/${m.filePath}`, serviceId: row.composeId, serviceType: KIND });
    }
    for (const d of processed.domains) {
      await this.cradle.domainRequests.create({
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
  }

  protected vars(appName: string) {
    return { domainBase: this.cradle.config.generatedDomainBase, appName };
  }
}
