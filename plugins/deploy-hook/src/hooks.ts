// A delivery to a workload's hook, from the request to the answer: the workload its refresh
// token names, the signature when the workload has a secret (401 without it), a redelivered id
// (200 "already processed", nothing deployed, signed or not), a pull request event that is not
// signed (200, nothing deployed: a preview runs code of the pull request's choosing, so only a
// delivery signed with a secret Berth holds may ask for one), then what the push is compared with — autoDeploy,
// triggerType, the watched branch, a [skip ci] message, watchPaths — each answered 200 with the
// reason; otherwise the push supersedes the workload's queued deployments and one is queued (202).
// Every answer that names a workload is written to its delivery log.
import path from 'node:path';
import { isStorable, newId, optionalService, type BerthConfig, type Cradle, type DeliveryHeaders, type EntityManager, type GitProvider, type Principal, type PullRequestEvent } from '@berth/core';
import type { PushTarget, WorkloadHooks, WorkloadKind } from '@berth/plugin-workloads';
import { checkSignature, readDelivery, type Delivery } from './delivery.ts';
import { WebhookDelivery } from './entities.ts';
import { WebhookLinks } from './links.ts';

/** Where a delivery came from, for the audit log. */
interface Sender {
  address: string | null;
  userAgent: string | null;
}
const sender = (headers: Record<string, string | string[] | undefined>, address: string | null): Sender => {
  const agent = headers['user-agent'];
  return { address, userAgent: (Array.isArray(agent) ? agent[0] : agent)?.slice(0, 500) ?? null };
};

/** The git ref a delivery names (a tag's or a branch's), as its log row and audit entry keep it. */
const refOf = (d: Delivery): string | null => (d.tag ? `refs/tags/${d.tag}` : d.branch ? `refs/heads/${d.branch}` : null)?.slice(0, 255) ?? null;

export interface HookAnswer {
  status: number;
  body: { message: string; reason?: string; deploymentId?: string; workloads?: WorkloadAnswer[] };
}

/** What a forge app's delivery did for each workload deploying its repository. */
export interface WorkloadAnswer {
  kind: string;
  id: string;
  name: string;
  statusCode: number;
  deploymentId?: string;
  reason?: string;
}

/** What handles a kind's pull request events (the preview plugin, for applications): answers like the hook. */
export type PullRequestHandler = (target: PushTarget, pullRequest: PullRequestEvent, delivery: { provider: string; deliveryId: string | null }, em: EntityManager) => Promise<HookAnswer>;

const SKIP = /\[(skip ci|ci skip|no ci|skip deploy|deploy skip)\]/i;

export class HookService implements WorkloadHooks {
  readonly #config: BerthConfig;
  readonly #cradle: () => Cradle;
  readonly #pullRequests = new Map<string, PullRequestHandler>();
  readonly #links: WebhookLinks;

  constructor(config: BerthConfig, cradle: () => Cradle) {
    this.#config = config;
    this.#cradle = cradle;
    this.#links = new WebhookLinks(config, cradle);
  }

  /** After a change of a workload's record: its registered webhook follows its source (see WebhookLinks). */
  syncWebhook(kind: string, id: string, em: EntityManager): Promise<void> {
    const found = this.#cradle().workloads.kind(kind);
    return found ? this.#links.sync(found, id, em) : Promise.resolve();
  }

  /** What became of the workload's push webhook (see WebhookLinks.registration). */
  webhookRegistration(kind: string, id: string, em: EntityManager): Promise<string | null> {
    const found = this.#cradle().workloads.kind(kind);
    return found ? this.#links.registration(found, id, em) : Promise.resolve(null);
  }

  /** Before a workload is deleted: its registered webhook is removed. */
  removeWebhook(kind: string, id: string, em: EntityManager): Promise<void> {
    return this.#links.unlink(kind, id, em);
  }

  /** Pull request events of the kind's hooks go to this handler (without one, they deploy nothing). */
  onPullRequest(kind: string, handler: PullRequestHandler): void {
    this.#pullRequests.set(kind, handler);
  }

  async receive(
    kind: WorkloadKind,
    refreshToken: string,
    headers: Record<string, string | string[] | undefined>,
    raw: Buffer,
    body: Record<string, unknown>,
    em: EntityManager,
    address: string | null = null,
  ): Promise<HookAnswer> {
    // A token no column could hold (too long, a NUL, an unpaired surrogate) is no workload's.
    const target = refreshToken.length <= 255 && isStorable(refreshToken) ? await kind.push!.byRefreshToken(refreshToken, em) : null;
    if (!target) return { status: 404, body: { message: `${kind.label} not found: no ${kind.label.toLowerCase()} has this refresh token` } };
    const delivery = { ...readDelivery(headers, body, this.#cradle().providers.all('git')), ...sender(headers, address) };
    let signatureOk: boolean | null = null;
    if (target.webhookSecret) {
      const check = checkSignature(headers, raw, delivery.forge, target.webhookSecret, this.#config.webhookToleranceSeconds);
      signatureOk = check.ok;
      if (!check.ok) return this.#log(kind, target, delivery, signatureOk, { status: 401, body: { message: check.reason, reason: check.reason } }, em);
    }
    const answer = await this.#decide(kind, target, delivery, signatureOk === true, em);
    return this.#log(kind, target, delivery, signatureOk, answer, em);
  }

  /**
   * A forge app's delivery (POST /api/deploy/<forge>: GitHub's App at /api/deploy/github): it names
   * its installation (the app's ping, its app), which finds the forge's app connections (of any
   * organization) it may come from before any secret is used; signed with the app's webhook secret
   * of one of them (by the forge's scheme), it reaches every workload of the kinds that deploys the
   * delivery's repository through such a connection; each gets the decisions of its own hook and a
   * log entry. 202 when any deployment was queued, 200 with why otherwise, 401 when it names no
   * known installation or no such connection's secret signed it — written to no workload's log (an
   * unauthenticated caller must not push a workload's real deliveries out of its last
   * webhookDeliveriesKept).
   */
  async receiveApp(
    forge: GitProvider,
    kinds: WorkloadKind[],
    headers: DeliveryHeaders,
    raw: Buffer,
    body: Record<string, unknown>,
    em: EntityManager,
    address: string | null = null,
  ): Promise<HookAnswer> {
    const skip = (status: number, reason: string): HookAnswer => ({ status, body: { message: reason, reason } });
    const [reader, label, type] = [forge.deliveries!, forge.label, forge.id];
    const app = reader.app!;
    const gitProviders = optionalService(this.#cradle(), 'gitProviders');
    if (!gitProviders) return skip(404, `${label} App deliveries need the git-provider plugin, which is not enabled`);
    const delivery = { ...readDelivery(headers, body, this.#cradle().providers.all('git')), ...sender(headers, address) };
    // With no secret yet, verify only says whether the delivery carries the forge's signature header at all (null: none).
    if (reader.verify(headers, raw, '') === null) return skip(401, `missing signature: a ${label} App delivery carries ${reader.signatureHeader}`);
    const { installationId, appId } = app.origin(body, delivery);
    if (!installationId && !appId) return skip(401, `no installation: a ${label} App delivery names the installation it comes from (${app.installationField})`);
    const { matched, signers } = await gitProviders.appSigners(type, raw, headers, { installationId, appId }, em);
    if (!matched)
      return skip(401, installationId ? `unknown installation: no ${label} App connection has installation ${installationId}` : `unknown App: no ${label} App connection has App id ${appId}`);
    if (!signers.length) return skip(401, `bad signature: ${reader.signatureHeader} does not match the body signed with the webhook secret of the ${label} App connections of this installation`);
    const repository = app.repository(body);
    const field = gitProviders.sourceFields(type)?.id;
    const targetsOf = async (connectionIds: string[]) => {
      if (!repository || !field) return [];
      const found = await Promise.all(
        kinds.map(async k =>
          (await k.push!.byConnection(type, field, connectionIds, em))
            .filter(t => {
              const linked = gitProviders.repositoryOf(type, t.fields);
              return linked && `${linked.repo.owner}/${linked.repo.name}`.toLowerCase() === repository.toLowerCase();
            })
            .map(t => ({ kind: k, target: t })),
        ),
      );
      return found.flat();
    };
    if (delivery.provider !== type) return skip(200, `not a ${label} delivery: ${reader.eventHeader} is missing`);
    if (delivery.kind === 'ping') return skip(200, 'ping received: the hook is active');
    if (!repository) return skip(200, `unknown event: ${type} "${delivery.event}" names no repository and deploys nothing`);
    const targets = await targetsOf(signers);
    if (!targets.length) return skip(200, `no application or compose stack deploys ${repository} through this ${label} App`);
    const workloads: WorkloadAnswer[] = [];
    for (const { kind, target } of targets) {
      const answer = await this.#log(kind, target, delivery, true, await this.#decide(kind, target, delivery, true, em), em);
      const { deploymentId, reason } = answer.body;
      workloads.push({ kind: kind.kind, id: target.workload.id, name: target.workload.name, statusCode: answer.status, ...(deploymentId ? { deploymentId } : {}), ...(reason ? { reason } : {}) });
    }
    const queued = workloads.filter(w => w.statusCode === 202);
    if (!queued.length) {
      const reason = `nothing deployed: ${workloads.map(w => `${w.kind} ${w.name}: ${w.reason ?? 'no deployment'}`).join('; ')}`;
      return { status: 200, body: { message: reason, reason, workloads } };
    }
    return { status: 202, body: { message: `${queued.length} of ${workloads.length} deployment${workloads.length === 1 ? '' : 's'} queued`, deploymentId: queued[0]!.deploymentId!, workloads } };
  }

  /** What the delivery does for the workload; `signed`: it carried a signature made with a secret Berth holds (the workload's, a forge app's). */
  async #decide(kind: WorkloadKind, target: PushTarget, d: Delivery, signed: boolean, em: EntityManager): Promise<HookAnswer> {
    const skip = (reason: string): HookAnswer => ({ status: 200, body: { message: reason, reason } });
    if (d.kind === 'ping') return skip('ping received: the hook is active');
    if (d.kind === 'other') return skip(`unknown event: ${d.provider} "${d.event}" deploys nothing (only pushes do)`);
    if (d.deliveryId) {
      // A delivery id seen before, signed or unsigned (signatureOk true or NULL; SQL's `!= false` leaves NULL out), is a replay.
      // Only the rows refused for their signature do not count: a forger must not use up a real delivery's id.
      const seen = await em.findOne(
        WebhookDelivery,
        { targetId: target.workload.id, targetType: kind.kind, deliveryId: d.deliveryId.slice(0, 128), $or: [{ signatureOk: true }, { signatureOk: null }] },
        { orderBy: { createdAt: 'asc' } },
      );
      if (seen) return { status: 200, body: { message: 'already processed', reason: 'already processed', ...(seen.deploymentId ? { deploymentId: seen.deploymentId } : {}) } };
    }
    if (d.kind === 'pullRequest') {
      const handler = this.#pullRequests.get(kind.kind);
      if (!handler) return skip(`pull request events deploy nothing for ${kind.label.toLowerCase()}s (previews are not served for them)`);
      if (!signed)
        return skip(
          `unsigned pull request event: previews are made only from signed deliveries (set the ${kind.label.toLowerCase()}'s webhookSecret and sign with it, link the repository through a git provider so that Berth registers a signed webhook, or deploy it through a forge's app)`,
        );
      return handler(target, d.pullRequest!, { provider: d.provider, deliveryId: d.deliveryId }, em);
    }
    const f = target.fields;
    if (f.autoDeploy === false) return skip('autoDeploy is off for this workload');
    if (d.deleted) return skip(`the ${d.tag ? `tag ${d.tag}` : `branch ${d.branch}`} was deleted: nothing to deploy`);
    const sourceType = String(f.sourceType);
    if (d.image) {
      const [name, tag] = imageParts(String(f.dockerImage ?? ''));
      if (sourceType !== 'docker' || !name) return skip('image push: the workload does not deploy a Docker image');
      if (d.image.name !== name) return skip(`image not watched: ${d.image.name} was pushed, the workload runs ${name}`);
      if (d.image.tag && d.image.tag !== tag) return skip(`tag not watched: ${d.image.name}:${d.image.tag} was pushed, the workload runs ${name}:${tag}`);
    } else if (f.triggerType === 'tag') {
      if (!d.tag) return skip(`trigger is tag: a push of branch ${d.branch ?? '(none named)'} deploys nothing`);
    } else if (d.tag) {
      return skip(`a tag push (${d.tag}): the workload's triggerType is push (branches only)`);
    } else {
      // The field the source provider follows (the same names on every kind that deploys from git).
      const field = this.#cradle().providers.find('source', sourceType)?.branchField;
      const watched = field ? (f[field] as string | null) : null;
      if (field && d.branch !== null && d.branch !== watched) return skip(`branch not watched: ${d.branch} was pushed, the workload deploys ${watched ?? '(no branch set)'}`);
      if (field && d.branch === null && d.provider !== 'generic') return skip('no branch: the delivery names no pushed branch');
    }
    if (d.message && SKIP.test(d.message)) return skip(`skipped by the commit message (${SKIP.exec(d.message)![0]})`);
    const watchPaths = (f.watchPaths as string[] | null) ?? [];
    if (watchPaths.length && d.paths) {
      if (!d.paths.some(p => watchPaths.some(w => matches(p, w)))) return skip(`no file under watchPaths changed (${watchPaths.join(', ')})`);
    }
    // A newer push supersedes what is still queued for the workload.
    const deployments = this.#cradle().deployments;
    await deployments.clearQueueFor(kind.kind, target.workload.id, em);
    const title = (d.message?.split('\n')[0] || (d.image ? `Image ${d.image.name}:${d.image.tag ?? ''}` : `Push from ${d.provider}`)).slice(0, 255);
    // A tag push (triggerType tag) deploys the tag itself, not the branch's head.
    const checkout = f.triggerType === 'tag' && d.tag ? d.tag : null;
    const deploymentId = await kind.push!.deploy(target.workload, { title, description: d.commit ? `Hash: ${d.commit}` : null, checkout }, em);
    return { status: 202, body: { message: 'deployment queued', deploymentId } };
  }

  async #log(kind: WorkloadKind, target: PushTarget, d: Delivery & Sender, signatureOk: boolean | null, answer: HookAnswer, em: EntityManager): Promise<HookAnswer> {
    const { id, organizationId } = target.workload;
    this.#audit(kind, target, d, answer, em);
    em.create(WebhookDelivery, {
      targetType: kind.kind,
      targetId: id,
      organizationId,
      provider: d.provider,
      event: d.event.slice(0, 64),
      deliveryId: d.deliveryId?.slice(0, 128) ?? null,
      signatureOk,
      statusCode: answer.status,
      decision: answer.body.reason ?? answer.body.message,
      deploymentId: answer.status === 202 ? (answer.body.deploymentId ?? null) : null,
      ref: refOf(d),
      commit: d.commit?.slice(0, 64) ?? null,
    });
    await em.flush();
    // The newest webhookDeliveriesKept stay.
    const old = await em.find(
      WebhookDelivery,
      { targetType: kind.kind, targetId: id },
      { orderBy: { createdAt: 'desc', webhookDeliveryId: 'desc' }, offset: this.#config.webhookDeliveriesKept, fields: ['webhookDeliveryId'] },
    );
    if (old.length) await em.nativeDelete(WebhookDelivery, { webhookDeliveryId: { $in: old.map(o => o.webhookDeliveryId) } });
    return answer;
  }

  /**
   * The audit log's entry of a delivery that queued a deployment (202), in the same flush as the
   * delivery's log row; its actor is the hook (`hook:<provider>`). Deliveries refused (a wrong or
   * missing signature: 401) or that decide nothing change nothing and are not entered: whoever holds
   * a hook's URL could grow the audit log without end, where the delivery log keeps only the newest
   * (webhookDeliveriesKept) and says what was refused.
   */
  #audit(kind: WorkloadKind, target: PushTarget, d: Delivery & Sender, answer: HookAnswer, em: EntityManager): void {
    if (answer.status !== 202) return;
    const sink = optionalService(this.#cradle(), 'auditSink');
    if (!sink) return;
    const idField = `${kind.kind}Id`;
    const deploymentId = answer.body.deploymentId ?? null;
    sink.create(
      em,
      {
        requestId: d.deliveryId?.slice(0, 128) ?? newId(),
        procedure: `${kind.kind}.deploy`,
        actor: `hook:${d.provider}`,
        principal: null,
        organizationId: target.workload.organizationId,
        targetIds: { [idField]: target.workload.id, ...(deploymentId ? { deploymentId } : {}) },
        input: { event: d.event.slice(0, 64), ref: refOf(d), commit: d.commit?.slice(0, 64) ?? null, deliveryId: d.deliveryId?.slice(0, 128) ?? null },
        address: d.address,
        userAgent: d.userAgent,
        at: new Date(),
      },
      { outcome: 'success' },
    );
  }

  /** The workload's delivery log, newest first. */
  async log(kind: WorkloadKind, id: string, organizationId: string, em: EntityManager) {
    await this.#cradle().workloads.owner(kind.kind, id, organizationId, em);
    const rows = await em.find(WebhookDelivery, { targetType: kind.kind, targetId: id, organizationId }, { orderBy: { createdAt: 'desc', webhookDeliveryId: 'desc' } });
    return rows.map(r => ({
      webhookDeliveryId: r.webhookDeliveryId,
      createdAt: r.createdAt.toISOString(),
      provider: r.provider,
      event: r.event,
      deliveryId: r.deliveryId ?? null,
      signatureOk: r.signatureOk ?? null,
      statusCode: r.statusCode,
      decision: r.decision,
      deploymentId: r.deploymentId ?? null,
      ref: r.ref ?? null,
      commit: r.commit ?? null,
    }));
  }
}

/** A watchPaths entry matches a changed file: a glob, or a directory prefix. */
function matches(file: string, pattern: string): boolean {
  const p = pattern.replace(/^\.?\//, '');
  if (path.posix.matchesGlob(file, p)) return true;
  return !/[*?[{]/.test(p) && (file === p || file.startsWith(p.endsWith('/') ? p : `${p}/`));
}

/** An image reference's name and tag (latest when none; a registry port is not a tag). */
function imageParts(image: string): [string, string] {
  const at = image.lastIndexOf(':');
  if (at === -1 || image.slice(at + 1).includes('/')) return [image, 'latest'];
  return [image.slice(0, at), image.slice(at + 1)];
}
