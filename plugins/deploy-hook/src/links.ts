// Webhooks Berth registers on a linked repository (a forge without an app: GitLab, Gitea, Bitbucket; an app, GitHub's, has its
// own). When a workload's source names a connection and a repository and `publicUrl` is set, a
// push webhook is made through the provider's API, pointing at the workload's hook URL
// (<publicUrl>/api/deploy/[<hookPath>/]<refreshToken>) and signed with the workload's webhook
// secret (one is made when it has none). A change of the repository, the connection, the URL or
// the secret registers it anew; unlinking the source or deleting the workload removes it.
// Without publicUrl a repository links as the peer's, autoDeploy on or off: no webhook is
// registered, and the workload's delivery log says so and how to get one (issue 49 reversed the
// 400 the push-to-deploy issue had set: a peer client's first link, autoDeploy on by default, failed).
import { createHash, randomBytes } from 'node:crypto';
import { optionalService, type BerthConfig, type Cradle, type EntityManager } from '@berth/core';
import type { PushTarget, WorkloadKind } from '@berth/plugin-workloads';
import { RegisteredWebhook, WebhookDelivery, type RegisteredWebhookRow } from './entities.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

interface Wanted {
  provider: string;
  connectionId: string;
  owner: string;
  name: string;
  url: string;
}

export class WebhookLinks {
  readonly #config: BerthConfig;
  readonly #cradle: () => Cradle;

  constructor(config: BerthConfig, cradle: () => Cradle) {
    this.#config = config;
    this.#cradle = cradle;
  }

  /**
   * The connection field of a source type whose webhooks Berth registers on linked repositories:
   * an enabled forge that is a source and has no app of its own (an app's webhook covers every
   * repository of its installations: GitHub's); undefined for any other source type.
   */
  #registered(sourceType: string): string | undefined {
    const providers = this.#cradle().providers;
    if (!providers.has('git', sourceType)) return undefined;
    const forge = providers.get('git', sourceType);
    return forge.sourceFields && !forge.deliveries?.app ? forge.sourceFields.id : undefined;
  }

  /** The hook URL of a workload: below publicUrl, at its kind's path. */
  hookUrl(kind: WorkloadKind, refreshToken: string): string | null {
    const base = this.#config.publicUrl?.replace(/\/+$/, '');
    return base ? `${base}/api/deploy/${kind.push!.hookPath ? `${kind.push!.hookPath}/` : ''}${refreshToken}` : null;
  }

  /** The webhook the workload's source asks for; `unplaced` names a linked repository that gets none because publicUrl is not set. */
  #wanted(kind: WorkloadKind, target: PushTarget): { wanted: Wanted | null; unplaced?: { provider: string; repository: string } } {
    const provider = String(target.fields.sourceType);
    const gitProviders = optionalService(this.#cradle(), 'gitProviders');
    if (!this.#registered(provider) || !gitProviders || !target.refreshToken) return { wanted: null };
    const linked = gitProviders.repositoryOf(provider, target.fields);
    const url = this.hookUrl(kind, target.refreshToken);
    if (linked && !url) return { wanted: null, unplaced: { provider, repository: `${linked.repo.owner}/${linked.repo.name}` } };
    return { wanted: linked && url ? { provider, connectionId: linked.connectionId, owner: linked.repo.owner, name: linked.repo.name, url } : null };
  }

  /** A line of the workload's delivery log about its webhook (event "webhook registration"), unless the newest such line says the same. */
  async #note(kind: WorkloadKind, id: string, organizationId: string, provider: string, decision: string, em: EntityManager): Promise<void> {
    const last = await em.findOne(WebhookDelivery, { targetType: kind.kind, targetId: id, event: 'webhook registration' }, { orderBy: { createdAt: 'desc' } });
    if (last?.decision === decision) return;
    em.create(WebhookDelivery, {
      targetType: kind.kind,
      targetId: id,
      organizationId,
      provider,
      event: 'webhook registration',
      deliveryId: null,
      signatureOk: null,
      statusCode: 0,
      decision,
      deploymentId: null,
      ref: null,
      commit: null,
    });
  }

  /**
   * Brings the workload's registered webhook in line with its source, after a change of its record:
   * registers one for a newly linked repository, registers it anew when the repository, connection,
   * URL or secret changed, removes it when the source no longer names one. A provider that refuses
   * is written to the delivery log (the link itself stands).
   */
  async sync(kind: WorkloadKind, id: string, em: EntityManager): Promise<void> {
    if (!kind.push) return;
    let target = await kind.push.byId(id, em);
    if (!target) return;
    const { wanted, unplaced } = this.#wanted(kind, target);
    const current = await em.findOne(RegisteredWebhook, { targetType: kind.kind, targetId: id });
    const same = (r: RegisteredWebhookRow, w: Wanted, secret: string | null) =>
      r.provider === w.provider && r.connectionId === w.connectionId && r.owner === w.owner && r.name === w.name && r.url === w.url && secret !== null && r.secretHash === sha256(secret);
    if (current && wanted && same(current, wanted, target.webhookSecret)) return;
    if (current) await this.#remove(current, em);
    if (unplaced) await this.#note(kind, id, target.workload.organizationId, unplaced.provider, this.#unplacedNote(kind, unplaced.repository), em);
    if (!wanted) return void (await em.flush());
    if (!target.webhookSecret) {
      await kind.push.setWebhookSecret(id, randomBytes(24).toString('hex'), em);
      target = (await kind.push.byId(id, em))!;
    }
    const secret = target.webhookSecret!;
    const { organizationId } = target.workload;
    try {
      const hookId = await optionalService(this.#cradle(), 'gitProviders')!.registerWebhook(
        wanted.provider,
        wanted.connectionId,
        organizationId,
        { owner: wanted.owner, name: wanted.name },
        { url: wanted.url, secret },
        em,
      );
      em.create(RegisteredWebhook, { targetType: kind.kind, targetId: id, organizationId, ...wanted, hookId: hookId.slice(0, 128), secretHash: sha256(secret) });
    } catch (e) {
      await this.#note(kind, id, organizationId, wanted.provider, `the webhook on ${wanted.owner}/${wanted.name} could not be registered: ${(e as Error).message}`, em);
    }
    await em.flush();
  }

  /**
   * What became of the workload's push webhook: where Berth registered it; why none was when its
   * repository is linked without publicUrl (and how to add one); the provider's refusal, as the
   * delivery log kept it; null when its source asks for none.
   */
  async registration(kind: WorkloadKind, id: string, em: EntityManager): Promise<string | null> {
    const current = await em.findOne(RegisteredWebhook, { targetType: kind.kind, targetId: id });
    if (current) return `registered on ${current.owner}/${current.name} (${current.provider}), calling ${current.url}`;
    const target = kind.push ? await kind.push.byId(id, em) : null;
    if (!target) return null;
    const { wanted, unplaced } = this.#wanted(kind, target);
    if (unplaced) return this.#unplacedNote(kind, unplaced.repository);
    if (!wanted) return null;
    const last = await em.findOne(WebhookDelivery, { targetType: kind.kind, targetId: id, event: 'webhook registration' }, { orderBy: { createdAt: 'desc' } });
    return last?.decision ?? null;
  }

  /** Why a linked repository has no webhook without publicUrl, and how to add one. */
  #unplacedNote(kind: WorkloadKind, repository: string): string {
    const how = `add one by hand pointing at /api/deploy/${kind.push!.hookPath ? `${kind.push!.hookPath}/` : ''}<refreshToken> of this address, or set publicUrl (BERTH_PUBLIC_URL)`;
    return `no webhook registered on ${repository}: Berth's public address (publicUrl) is not set; ${how}`;
  }

  /** Removes the workload's registered webhook (its source was unlinked or it is being deleted). */
  async unlink(kind: string, id: string, em: EntityManager): Promise<void> {
    const current = await em.findOne(RegisteredWebhook, { targetType: kind, targetId: id });
    if (current) await this.#remove(current, em);
    await em.flush();
  }

  /** Best effort at the provider (the connection or the repository may be gone): the record goes in any case. */
  async #remove(row: RegisteredWebhookRow, em: EntityManager): Promise<void> {
    const gitProviders = optionalService(this.#cradle(), 'gitProviders');
    try {
      await gitProviders?.removeWebhook(row.provider, row.connectionId, row.organizationId, { owner: row.owner, name: row.name }, row.hookId, em);
    } catch (e) {
      this.#cradle().logger.warn({ err: e, provider: row.provider, repository: `${row.owner}/${row.name}` }, 'a registered webhook could not be removed at its provider');
    }
    em.remove(row);
  }
}
