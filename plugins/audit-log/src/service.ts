// auditLog.all: the caller's organization's entries, filtered and paged as the peer's, newest
// first. The chain is sealed first, so every committed entry is answered with its hash.
import { containing, invalidField, type EntityManager } from '@berth/core';
import { AuditEntry } from './entities.ts';
import type { AllInput, AllOutput } from './schemas.ts';
import type { AuditChain } from './chain.ts';

const when = (field: string, text: string | undefined): Date | undefined => {
  if (text === undefined) return undefined;
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) throw invalidField(field, 'must be an ISO 8601 date or date-time');
  return at;
};

export class AuditLogService {
  readonly #chain: AuditChain;

  constructor(chain: AuditChain) {
    this.#chain = chain;
  }

  async all(organizationId: string, input: AllInput, em: EntityManager): Promise<AllOutput> {
    const from = when('from', input.from);
    const to = when('to', input.to);
    await this.#chain.seal();
    const [rows, total] = await em.findAndCount(
      AuditEntry,
      {
        organizationId,
        ...(input.userId ? { userId: input.userId } : {}),
        ...(input.userEmail ? { userEmail: { $ilike: containing(input.userEmail) } } : {}),
        ...(input.resourceName ? { resourceName: { $ilike: containing(input.resourceName) } } : {}),
        ...(input.action ? { action: input.action } : {}),
        ...(input.resourceType ? { resourceType: input.resourceType } : {}),
        ...(from || to ? { createdAt: { ...(from ? { $gte: from } : {}), ...(to ? { $lte: to } : {}) } } : {}),
      },
      { orderBy: { createdAt: 'desc', chainIndex: 'desc' }, limit: input.limit, offset: input.offset },
    );
    return {
      logs: rows.map(r => ({
        id: r.id,
        organizationId: r.organizationId ?? null,
        userId: r.userId ?? null,
        userEmail: r.userEmail ?? '',
        userRole: r.userRole ?? '',
        action: r.action,
        resourceType: r.resourceType,
        resourceId: r.resourceId ?? null,
        resourceName: r.resourceName ?? null,
        metadata: JSON.stringify({
          procedure: r.procedure,
          outcome: r.outcome,
          ...(r.errorCode ? { error: { code: r.errorCode, message: r.errorMessage } } : {}),
          targetIds: r.targetIds,
          input: r.input,
          actor: r.actor,
          via: r.via,
          credentialId: r.credentialId,
          address: r.address,
          userAgent: r.userAgent,
          requestId: r.requestId,
          chainIndex: r.chainIndex,
          hash: r.hash,
        }),
        createdAt: r.createdAt.toISOString(),
      })),
      total,
    };
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The audit log's reads (auditLog.all). */
    auditLog: AuditLogService;
    /** The audit log's hash chain: seal, verify, prune. */
    auditChain: AuditChain;
  }
}
