// Previews: a pull request event on an application's hook (opened, reopened, synchronize)
// deploys the pull request's branch as a service of its own, <appName>-pr-<number>, at a domain
// known in advance; closing the pull request, previewDeployment.delete, the application's
// deletion or the age limit removes it (service, domain and its routes, deployments, record).
// Each gate that stops a deploy answers the hook with why, and the delivery log keeps it. Only
// signed deliveries reach here (the deploy-hook plugin answers the others), and even then the
// payload is believed for nothing that decides what runs: the pull request's head (repository,
// branch, commit), base branch and author are read from the provider's API through the
// application's connection, and a fork's author is checked there for write access.
import { notFound, optionalService, type BerthConfig, type Cradle, type DeploymentRun, type EntityManager, type PullRequestEvent, findOwned } from '@berth/core';
import type { HookAnswer } from '@berth/plugin-deploy-hook';
import type { PushTarget, WorkloadRef } from '@berth/plugin-workloads';
import { PreviewDeployment, type PreviewRow } from './entities.ts';

export const TARGET = 'previewDeployment';
const DAY_MS = 86_400_000;
const DEPLOYING = new Set(['opened', 'reopened', 'synchronize']);

/** The text of the pull request's one comment: the preview's status, its URL and the commit deployed. */
export function commentBody(o: { appName: string; status: string; url: string | null; sha?: string | null; note?: string }): string {
  const lines = [`**Berth preview** of \`${o.appName}\``, '', `- Status: **${o.status}**`];
  if (o.url) lines.push(`- URL: ${o.url}`);
  if (o.sha) lines.push(`- Commit: \`${o.sha.slice(0, 12)}\``);
  if (o.note) lines.push('', o.note);
  return lines.join('\n');
}

/** The fork a pull request's head is in (what its preview clones), null when it is the base repository. */
const forkOf = (pr: PullRequestEvent) => (pr.fromFork ? pr.headRepository : null);

/** The peer's fields of a preview, as answered. */
export function previewView(row: PreviewRow) {
  return {
    previewDeploymentId: row.previewDeploymentId,
    branch: row.branch,
    pullRequestId: row.pullRequestId,
    pullRequestNumber: row.pullRequestNumber,
    pullRequestURL: row.pullRequestURL,
    pullRequestTitle: row.pullRequestTitle,
    pullRequestCommentId: row.pullRequestCommentId,
    previewStatus: row.previewStatus,
    appName: row.appName,
    applicationId: row.applicationId,
    domainId: row.domainId ?? null,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt?.toISOString() ?? null,
  };
}

/** The preview's service name: the application's appName (shortened to fit 63 characters) and -pr-<number>. */
export function previewAppName(appName: string, number: number): string {
  const suffix = `-pr-${number}`;
  return `${appName.slice(0, 63 - suffix.length).replace(/[-_]+$/, '')}${suffix}`.toLowerCase();
}

export class PreviewService {
  readonly #config: BerthConfig;
  readonly #cradle: () => Cradle;

  constructor(config: BerthConfig, cradle: () => Cradle) {
    this.#config = config;
    this.#cradle = cradle;
  }

  // ------------------------------------------------------------ the hook

  /** A pull request event on an application's hook: deploys, updates or removes its preview, or says why not. */
  async onPullRequest(target: PushTarget, payload: PullRequestEvent, em: EntityManager): Promise<HookAnswer> {
    const skip = (reason: string): HookAnswer => ({ status: 200, body: { message: reason, reason } });
    const app = target.workload;
    const f = target.fields;
    if (!payload.id || payload.id.length > 64 || !Number.isSafeInteger(payload.number) || payload.number < 1 || payload.number > 999_999_999)
      return skip('the pull request event names no pull request (an id and a number)');
    const existing = await em.findOne(PreviewDeployment, { applicationId: app.id, pullRequestId: payload.id });
    if (payload.action === 'closed') {
      const pr = payload;
      if (!existing) return skip(`pull request #${pr.number} closed: it had no preview`);
      await this.#comment(existing, f, { appName: existing.appName, status: 'removed', url: null, sha: existing.headSha, note: 'The pull request was closed: the preview is gone.' }, em);
      await this.#remove(existing, em);
      const message = `preview removed: pull request #${pr.number} closed`;
      return { status: 200, body: { message, reason: message } };
    }
    if (!DEPLOYING.has(payload.action)) return skip(`pull request ${payload.action || '(no action)'}: only opened, reopened, synchronize and closed change a preview`);
    if (f.isPreviewDeploymentsActive !== true) return skip('previews are off for this application (isPreviewDeploymentsActive)');
    const branchField = this.#cradle().providers.find('source', String(f.sourceType))?.branchField;
    if (!branchField) return skip(`previews deploy a branch: the application's source (${String(f.sourceType)}) has none`);
    const watched = f[branchField] as string | null;
    const held = await this.#held(f, app.organizationId, payload, em);
    if (typeof held === 'string') return skip(held);
    const pr = held;
    if (watched && pr.baseBranch !== watched) return skip(`pull request into ${pr.baseBranch}: the application deploys ${watched}`);
    const forkRefused = pr.fromFork ? await this.#forkRefusal(f, app.organizationId, pr, em) : null;
    if (forkRefused) return skip(forkRefused);
    const labels = (f.previewLabels as string[] | null) ?? [];
    if (labels.length && !pr.labels.some(l => labels.includes(l))) return skip(`label gate: the pull request carries none of previewLabels (${labels.join(', ')})`);
    if (!/^[A-Za-z0-9._/-]{1,255}$/.test(pr.headBranch) || pr.headBranch.includes('..')) return skip(`the pull request's branch "${pr.headBranch.slice(0, 80)}" is not a branch name Berth clones`);

    let row = existing;
    if (!row) {
      const limit = Number(f.previewLimit ?? 3);
      const live = await em.count(PreviewDeployment, { applicationId: app.id });
      if (live >= limit) {
        const reason = `preview limit reached: ${live} live previews (previewLimit ${limit})`;
        // Said once on the pull request: when it is opened (or reopened), not on each push.
        if (pr.action !== 'synchronize')
          await this.#post(
            f,
            app.organizationId,
            pr.number,
            null,
            commentBody({ appName: app.name, status: 'not deployed', url: null, sha: pr.headSha, note: `The ${reason}: close another preview's pull request, or raise previewLimit.` }),
            em,
          );
        return skip(reason);
      }
      row = await this.#create(app, f, pr, em);
    } else {
      Object.assign(row, { branch: pr.headBranch, headRepository: forkOf(pr), pullRequestTitle: pr.title, pullRequestURL: pr.url, headSha: pr.headSha });
      await em.flush();
    }
    const deploymentId = await this.#enqueue(
      row,
      app.serverId,
      { title: `Preview of pull request #${pr.number}: ${pr.title}`.slice(0, 255), description: pr.headSha ? `Hash: ${pr.headSha}` : null },
      em,
    );
    return { status: 202, body: { message: 'preview deployment queued', deploymentId } };
  }

  /** Whether the source type is a forge (an enabled git provider): its pull requests are read and commented on through the git-provider plugin. */
  #forge(type: string): boolean {
    return this.#cradle().providers.has('git', type);
  }

  /**
   * The pull request as its provider holds it, read through the application's connection: the
   * event with its head (repository, branch, commit), base branch and author replaced by the
   * provider's answer; or why not (the provider cannot be asked, has no such pull request, or
   * has it closed). A plain git URL has no provider to ask: its previews clone the application's
   * own repository only (a fork is refused below), so the event's branch names what is cloned.
   */
  async #held(f: Record<string, unknown>, organizationId: string, pr: PullRequestEvent, em: EntityManager): Promise<PullRequestEvent | string> {
    const type = String(f.sourceType);
    const git = optionalService(this.#cradle(), 'gitProviders');
    const linked = git?.repositoryOf(type, f);
    if (!this.#forge(type)) return pr;
    if (!git || !linked) return `pull request #${pr.number}: the application's ${type} source names no connection and repository through which Berth could read it`;
    let held: Awaited<ReturnType<typeof git.pullRequestOf>>;
    try {
      held = await git.pullRequestOf(type, f, organizationId, pr.number, em);
    } catch (e) {
      return `pull request #${pr.number} could not be read from ${type} (${(e as Error).message}): not deployed`;
    }
    if (!held) return pr;
    if (held.state !== 'open') return `pull request #${pr.number} is closed at ${type}: not deployed`;
    const base = `${linked.repo.owner}/${linked.repo.name}`;
    return {
      ...pr,
      headBranch: held.headBranch,
      headSha: held.headSha,
      baseBranch: held.baseBranch,
      repository: base,
      headRepository: held.headRepository,
      fromFork: held.headRepository.toLowerCase() !== base.toLowerCase(),
      author: held.author,
    };
  }

  /**
   * Why a fork's pull request is not deployed, or null: while previewRequireCollaboratorPermissions
   * is on, its author (as the provider names them) needs write access to the base repository — the
   * provider's collaborator permission, asked through the application's connection; and the source
   * must be able to clone the fork (a git provider's, not a plain URL).
   */
  async #forkRefusal(f: Record<string, unknown>, organizationId: string, pr: PullRequestEvent, em: EntityManager): Promise<string | null> {
    const type = String(f.sourceType);
    const git = optionalService(this.#cradle(), 'gitProviders');
    const who = pr.author.login ?? (pr.author.id ? `user ${pr.author.id}` : 'an unnamed author');
    const repo = pr.repository ?? 'the repository';
    if (f.previewRequireCollaboratorPermissions !== false) {
      const gate = 'not deployed while previewRequireCollaboratorPermissions is on';
      let writer: boolean | null = null;
      try {
        writer = (await git?.writeAccess(type, f, organizationId, pr.author, em)) ?? null;
      } catch (e) {
        return `pull request from a fork by ${who}: their write access to ${repo} could not be checked (${(e as Error).message}): ${gate}`;
      }
      if (writer === null) return `pull request from a fork by ${who}: the application's source (${type}) cannot tell whether they have write access to ${repo}: ${gate}`;
      if (!writer) return `pull request from a fork by ${who}, who has no write access to ${repo}: ${gate}`;
    }
    if (!pr.headRepository || !git?.repositoryFields(type, pr.headRepository))
      return `pull request from a fork (${pr.headRepository ?? 'repository not named'}): the application's source (${type}) cannot clone another repository`;
    return null;
  }

  async #create(app: WorkloadRef, f: Record<string, unknown>, pr: PullRequestEvent, em: EntityManager): Promise<PreviewRow> {
    const now = new Date(this.#cradle().clock.now());
    const row = em.create(PreviewDeployment, {
      applicationId: app.id,
      organizationId: app.organizationId,
      branch: pr.headBranch,
      headRepository: forkOf(pr),
      pullRequestId: pr.id,
      pullRequestNumber: String(pr.number),
      pullRequestURL: pr.url,
      pullRequestTitle: pr.title,
      pullRequestCommentId: '',
      previewStatus: 'idle',
      appName: previewAppName(app.appName, pr.number),
      domainId: null,
      headSha: pr.headSha,
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.#config.previewMaxAgeDays * DAY_MS),
    });
    await em.flush();
    // The domain is made with the record, so that it is known before the first deploy and stays the same after.
    const domains = optionalService(this.#cradle(), 'domains');
    if (domains?.attach) {
      const https = f.previewHttps === true;
      const attached = domains.attach(
        this.#ref(row, app),
        {
          host: this.#host(row.appName, f, app.appName, pr),
          path: (f.previewPath as string | null) || '/',
          port: Number(f.previewPort ?? 3000),
          https,
          certificateType: https ? ((f.previewCertificateType as 'letsencrypt' | 'none' | 'custom' | null) ?? 'none') : 'none',
          customCertResolver: (f.previewCustomCertResolver as string | null) ?? null,
          domainType: 'preview',
          previewDeploymentId: row.previewDeploymentId,
        },
        em,
      );
      // The domain is stored before the proxy takes it: when the proxy fails (503), the record still names it.
      try {
        row.domainId = await attached;
      } finally {
        row.domainId ??= ((await domains.forService(TARGET, row.previewDeploymentId, em)).domains[0]?.domainId as string | undefined) ?? null;
        await em.flush();
      }
    }
    return row;
  }

  /**
   * Berth's previewDomainTemplate (`${prNumber}`, `${appName}`, `${branch}` — the branch as a DNS
   * label); else previewWildcard `*.example.com` → `<label>.example.com`; without either, the
   * generated domains' base with the server's address.
   */
  #host(label: string, f: Record<string, unknown>, appName: string, pr: PullRequestEvent): string {
    const template = f.previewDomainTemplate as string | null;
    if (template) {
      const branch =
        pr.headBranch
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '-')
          .replace(/^-+|-+$/g, '')
          .slice(0, 40)
          .replace(/-+$/, '') || 'branch';
      const values: Record<string, string> = { prNumber: String(pr.number), appName, branch };
      return template.replace(/\$\{(prNumber|appName|branch)\}/g, (_, key: string) => values[key]!);
    }
    const wildcard = f.previewWildcard as string | null;
    if (wildcard?.startsWith('*.')) return `${label}.${wildcard.slice(2)}`;
    const { serverIp, generatedDomainBase } = this.#config;
    return `${label}-${(serverIp ?? '127.0.0.1').replace(/[.:]/g, '-')}.${generatedDomainBase}`;
  }

  /** The owner of a preview's domain (for the domain plugin's own changes of it); null once the preview or its application is gone. */
  async ownerOf(previewDeploymentId: string, em: EntityManager): Promise<WorkloadRef | null> {
    const row = await em.findOne(PreviewDeployment, { previewDeploymentId });
    const app = row ? await this.#cradle().applicationVariants.settings(row.applicationId, em) : null;
    return row && app ? this.#ref(row, app.ref) : null;
  }

  /** The preview as the owner of its service and domain. */
  #ref(row: PreviewRow, app: WorkloadRef): WorkloadRef {
    return {
      kind: TARGET,
      id: row.previewDeploymentId,
      organizationId: row.organizationId,
      environmentId: app.environmentId,
      appName: row.appName,
      name: `${app.name} PR #${row.pullRequestNumber}`,
      serverId: app.serverId,
    };
  }

  async #enqueue(row: PreviewRow, serverId: string | null, run: { title: string; description: string | null }, em: EntityManager): Promise<string> {
    const deployments = this.#cradle().deployments;
    await deployments.clearQueueFor(TARGET, row.previewDeploymentId, em);
    const request = { targetType: TARGET, targetId: row.previewDeploymentId, organizationId: row.organizationId, serverId, action: 'deploy', ...run };
    return (await deployments.enqueue(request, em)).deploymentId;
  }

  /**
   * Adds or updates the pull request's one comment through the git provider of the application's
   * source, and keeps its id on the record. Never fails what calls it: a refusal is logged.
   */
  async #comment(row: PreviewRow, fields: Record<string, unknown>, body: Parameters<typeof commentBody>[0], em: EntityManager, log?: (line: string) => void): Promise<void> {
    const id = await this.#post(fields, row.organizationId, Number(row.pullRequestNumber), row.pullRequestCommentId || null, commentBody(body), em, log);
    if (id && id !== row.pullRequestCommentId) {
      row.pullRequestCommentId = id.slice(0, 64);
      await em.flush();
    }
  }

  async #post(
    fields: Record<string, unknown>,
    organizationId: string,
    number: number,
    commentId: string | null,
    body: string,
    em: EntityManager,
    log?: (line: string) => void,
  ): Promise<string | null> {
    const type = String(fields.sourceType);
    const git = optionalService(this.#cradle(), 'gitProviders');
    if (!git || !this.#forge(type)) return null;
    try {
      return await git.pullRequestComment(type, fields, organizationId, { number, body, commentId }, em);
    } catch (e) {
      const line = `The pull request comment was not posted: ${(e as Error).message}`;
      if (log) log(line);
      else this.#cradle().logger.warn({ organizationId, pullRequest: number }, line);
      return null;
    }
  }

  /** The preview's URL (its domain's), or null without a domain. */
  async #url(row: PreviewRow, em: EntityManager): Promise<string | null> {
    const found = await optionalService(this.#cradle(), 'domains')?.forService(TARGET, row.previewDeploymentId, em);
    const domain = found?.domains[0] as { host: string; https: boolean; path: string | null } | undefined;
    if (!domain) return null;
    const path = domain.path && domain.path !== '/' ? domain.path : '';
    return `${domain.https ? 'https' : 'http'}://${domain.host}${path}`;
  }

  /** Takes the preview away: its deployments, service, domain and routes, and the record. */
  async #remove(row: PreviewRow, em: EntityManager): Promise<void> {
    const cradle = this.#cradle();
    const app = await cradle.applicationVariants.settings(row.applicationId, em);
    await cradle.deployments.cancelFor(TARGET, row.previewDeploymentId, em);
    const owner = { kind: TARGET, id: row.previewDeploymentId, organizationId: row.organizationId };
    if (app) {
      await cradle.applicationVariants.remove(row.applicationId, { appName: row.appName, owner }, em);
      await optionalService(cradle, 'domains')?.removeForService(this.#ref(row, app.ref), em);
    }
    await cradle.deployments.removeFor(TARGET, row.previewDeploymentId, em, { includeActive: true });
    await em.nativeDelete(PreviewDeployment, { previewDeploymentId: row.previewDeploymentId });
  }

  // ------------------------------------------------------------ the deploy queue's runs

  readonly deployer = {
    targetType: TARGET,
    run: async (action: string, run: DeploymentRun): Promise<void> => {
      if (action !== 'deploy' && action !== 'redeploy') throw new Error(`Unknown preview action "${action}"`);
      const em = run.em;
      const row = await em.findOne(PreviewDeployment, { previewDeploymentId: run.deployment.targetId });
      if (!row) throw new Error('The preview was deleted before its deployment ran');
      const cradle = this.#cradle();
      const app = await cradle.applicationVariants.settings(row.applicationId, em);
      if (!app) throw new Error('The application was deleted before its preview ran');
      row.previewStatus = 'running';
      await em.flush();
      const url = await this.#url(row, em);
      const preview: Record<string, string> = url ? { BERTH_PREVIEW_URL: url } : {};
      run.log(`Preview of pull request #${row.pullRequestNumber} (${row.branch}${row.headRepository ? ` of the fork ${row.headRepository}` : ''})${url ? ` at ${url}` : ''}`);
      const type = String(app.fields.sourceType);
      // A fork's branch is cloned from the fork, through the same connection.
      const fork = row.headRepository ? optionalService(cradle, 'gitProviders')?.repositoryFields(type, row.headRepository) : null;
      if (row.headRepository && !fork) throw new Error(`The preview's branch is in the fork ${row.headRepository}, and the application's source (${type}) cannot clone it`);
      const said = { appName: app.ref.name, url, sha: row.headSha };
      await this.#comment(row, app.fields, { ...said, status: 'building' }, em, run.log);
      await cradle.applicationVariants.deploy(
        row.applicationId,
        {
          appName: row.appName,
          owner: { kind: TARGET, id: row.previewDeploymentId, organizationId: row.organizationId },
          fields: { ...fork, [cradle.providers.find('source', type)?.branchField ?? 'branch']: row.branch },
          env: preview,
          buildArgs: preview,
          buildSecrets: {},
        },
        run,
      );
      row.previewStatus = 'done';
      await em.flush();
      await this.#comment(row, app.fields, { ...said, status: 'done' }, em, run.log);
    },
    settle: async (targetId: string, outcome: 'error' | 'cancelled', _reason: string, em: EntityManager): Promise<void> => {
      await em.nativeUpdate(PreviewDeployment, { previewDeploymentId: targetId }, { previewStatus: 'error' });
      const row = await em.findOne(PreviewDeployment, { previewDeploymentId: targetId });
      const app = row && (await this.#cradle().applicationVariants.settings(row.applicationId, em));
      if (row && app) await this.#comment(row, app.fields, { appName: app.ref.name, status: outcome === 'error' ? 'error' : 'cancelled', url: await this.#url(row, em), sha: row.headSha }, em);
    },
  };

  // ------------------------------------------------------------ operations

  #find(previewDeploymentId: string, organizationId: string, em: EntityManager): Promise<PreviewRow> {
    return findOwned(em, PreviewDeployment, { previewDeploymentId }, organizationId, 'Preview deployment');
  }

  /** The preview with its deployments (newest first) and its domain, as the peer's router joins them. */
  async #joined(rows: PreviewRow[], em: EntityManager) {
    const cradle = this.#cradle();
    // The deployment plugin is a declared dependency: its service is there.
    const deployments = cradle.deployments;
    const records = await deployments.listFor(
      TARGET,
      rows.map(r => r.previewDeploymentId),
      em,
    );
    const domains = optionalService(cradle, 'domains');
    return Promise.all(
      rows.map(async r => ({
        ...previewView(r),
        deployments: deployments.views(records.get(r.previewDeploymentId) ?? []),
        domain: ((await domains?.forService(TARGET, r.previewDeploymentId, em))?.domains[0] as Record<string, unknown> | undefined) ?? null,
      })),
    );
  }

  /** The application's previews, newest first. */
  async all(applicationId: string, organizationId: string, em: EntityManager) {
    await this.#cradle().workloads.owner('application', applicationId, organizationId, em); // kind-names: previews are the application kind's
    return this.#joined(await em.find(PreviewDeployment, { applicationId, organizationId }, { orderBy: { createdAt: 'desc' } }), em);
  }

  async one(previewDeploymentId: string, organizationId: string, em: EntityManager) {
    return (await this.#joined([await this.#find(previewDeploymentId, organizationId, em)], em))[0]!;
  }

  async delete(previewDeploymentId: string, organizationId: string, em: EntityManager): Promise<true> {
    await this.#remove(await this.#find(previewDeploymentId, organizationId, em), em);
    return true;
  }

  /** Queues a run of the preview; answers the queued deployment's id. */
  async redeploy(input: { previewDeploymentId: string; title?: string; description?: string }, organizationId: string, em: EntityManager): Promise<string> {
    const row = await this.#find(input.previewDeploymentId, organizationId, em);
    const app = await this.#cradle().applicationVariants.settings(row.applicationId, em);
    if (!app) throw notFound('Application');
    return this.#enqueue(row, app.ref.serverId, { title: input.title || 'Rebuild Preview Deployment', description: input.description ?? null }, em);
  }

  /** The application's previews as application.one lists them. */
  async forApplication(applicationId: string, em: EntityManager) {
    return (await em.find(PreviewDeployment, { applicationId }, { orderBy: { createdAt: 'desc' } })).map(previewView);
  }

  /** Removes the application's previews (the application is being deleted). */
  async removeForApplication(applicationId: string, em: EntityManager): Promise<void> {
    for (const row of await em.find(PreviewDeployment, { applicationId })) await this.#remove(row, em);
  }

  /** Removes the previews whose expiresAt has passed (the daily job); answers how many. */
  async expire(em: EntityManager): Promise<number> {
    const old = await em.find(PreviewDeployment, { expiresAt: { $lt: new Date(this.#cradle().clock.now()) } });
    for (const row of old) await this.#remove(row, em);
    return old.length;
  }
}
