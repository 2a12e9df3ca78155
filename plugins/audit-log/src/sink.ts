// The audit log's rows: what the kernel's capture records of a call (core/src/audit/capture.ts),
// as the peer's audit_log row (its action and resource type, the target and its name) and Berth's
// own detail (procedure, outcome, input, credential, address). One INSERT each.
import { newId, type AuditContext, type AuditOutcome, type AuditSink, type EntityManager } from '@berth/core';
import { AuditEntry } from './entities.ts';

/** Routers whose records the peer names by another resource type. */
const RESOURCE_OF: Record<string, string> = {
  certificates: 'certificate',
  redirects: 'redirect',
  volumeBackups: 'volumeBackup',
  mounts: 'mount',
  github: 'gitProvider',
  gitlab: 'gitProvider',
  bitbucket: 'gitProvider',
  gitea: 'gitProvider',
  auth: 'session',
  admin: 'settings',
  whitelabeling: 'settings',
  licenseKey: 'settings',
  auditLog: 'settings',
};
/** Procedure names that are the peer's actions as they are. */
const ACTIONS = new Set(['deploy', 'redeploy', 'cancel', 'login', 'logout', 'start', 'stop', 'reload', 'rebuild', 'move', 'restore', 'create', 'update', 'delete']);

/** The peer's action for a procedure's name: create, update, delete, deploy, … (update when nothing else fits). */
export function actionOf(name: string): string {
  if (ACTIONS.has(name)) return name;
  if (/^(cancel|kill)/i.test(name)) return 'cancel';
  if (/^(login|verifyLogin)/.test(name)) return 'login';
  if (/^(restore)/.test(name)) return 'restore';
  if (/^(manualBackup|run)/.test(name)) return 'run';
  if (/^(deploy|dropDeployment)/.test(name)) return 'deploy';
  if (/^(create|add|duplicate|import|invite|generate|upload)/.test(name)) return 'create';
  if (/^(remove|delete|clean|clear)/.test(name)) return 'delete';
  return 'update';
}

/** The peer's resource type of a router: a workload kind's is service; a router the peer has no type for keeps its name. */
export function resourceTypeOf(router: string, workloadKinds: readonly string[]): string {
  return workloadKinds.includes(router) ? 'service' : (RESOURCE_OF[router] ?? router);
}

const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v.slice(0, 255) : null);

export class AuditLogSink implements AuditSink {
  readonly #em: () => EntityManager;
  readonly #workloadKinds: () => readonly string[];

  /** @param workloadKinds the registered workload kinds' names (their routers' records are the peer's services) */
  constructor(em: () => EntityManager, workloadKinds: () => readonly string[]) {
    this.#em = em;
    this.#workloadKinds = workloadKinds;
  }

  create(em: Parameters<AuditSink['create']>[0], context: AuditContext, outcome: AuditOutcome): object {
    return em.create(AuditEntry, this.entry(context, outcome), { persist: true });
  }

  async write(context: AuditContext, outcome: AuditOutcome): Promise<void> {
    await this.#em().insert(AuditEntry, this.entry(context, outcome));
  }

  /** An entry's fields. */
  entry(context: AuditContext, outcome: AuditOutcome) {
    const [router = '', name = ''] = context.procedure.split('.');
    const input = (context.input && typeof context.input === 'object' ? context.input : {}) as Record<string, unknown>;
    const idField = `${router}Id`;
    const principal = context.principal;
    return {
      id: newId(),
      organizationId: context.organizationId,
      userId: principal?.userId ?? null,
      userEmail: null,
      userRole: principal?.role ?? null,
      actor: context.actor,
      via: principal?.via ?? null,
      credentialId: principal?.credentialId || null,
      action: actionOf(name),
      resourceType: resourceTypeOf(router, this.#workloadKinds()),
      // The record the procedure is about: its own id field first, else the first id of the input.
      resourceId: context.targetIds[idField] ?? Object.values(context.targetIds)[0] ?? null,
      resourceName: text(input.name) ?? text(input.appName) ?? text(input.email) ?? null,
      procedure: context.procedure,
      targetIds: context.targetIds,
      input: context.input,
      outcome: outcome.outcome,
      errorCode: outcome.outcome === 'error' ? outcome.code : null,
      errorMessage: outcome.outcome === 'error' ? outcome.message.slice(0, 2000) : null,
      requestId: context.requestId,
      address: context.address,
      userAgent: context.userAgent,
      createdAt: context.at,
      chainIndex: null,
      hash: null,
    };
  }
}
