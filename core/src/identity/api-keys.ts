// API keys: a credential of one user acting in one organization. Only the key's hash is stored;
// the key itself is shown once, when it is made.
import { notFound } from '../errors.ts';
import { hashToken, newId, newToken } from '../crypto.ts';
import type { Principal } from '../procedure.ts';
import { ApiKey, Member } from './entities.ts';
import { iso, type ApiKeyView } from './views.ts';
import { IdentityStore } from './shared.ts';

export class ApiKeyService extends IdentityStore<'sessions'> {
  /** A new key of the caller acting in `input.organizationId`; the plain key is in `key`. */
  async createApiKey(
    principal: Principal,
    input: { name: string; prefix?: string; expiresIn?: number; organizationId: string; metadata?: Record<string, unknown> },
  ): Promise<ApiKeyView & { key: string }> {
    const em = this.em();
    // A key acts in one organization: the caller must belong to it (404 otherwise, like any foreign record).
    if (!(await em.count(Member, { userId: principal.userId, organizationId: input.organizationId }))) throw notFound('Organization');
    const key = `${input.prefix ?? ''}${newToken(32)}`;
    const row = em.create(ApiKey, {
      id: newId(),
      name: input.name,
      prefix: input.prefix ?? null,
      start: key.slice(0, 8),
      keyHash: hashToken(key),
      userId: principal.userId,
      organizationId: input.organizationId,
      metadata: input.metadata ?? null,
      expiresAt: input.expiresIn ? new Date(Date.now() + input.expiresIn * 1000) : null,
      lastUsedAt: null,
      createdAt: new Date(),
    });
    await em.flush();
    return { ...toApiKeyView(row), key };
  }

  /** A user's keys, oldest first (never the keys themselves). */
  async listApiKeys(userId: string): Promise<ApiKeyView[]> {
    return (await this.em().find(ApiKey, { userId }, { orderBy: { createdAt: 'asc' } })).map(toApiKeyView);
  }

  /** Revokes one of the caller's keys; NOT_FOUND for anyone else's. */
  async deleteApiKey(principal: Principal, apiKeyId: string): Promise<void> {
    const deleted = await this.em().nativeDelete(ApiKey, { id: apiKeyId, userId: principal.userId });
    if (!deleted) throw notFound('API key');
    this.deps.sessions.invalidate();
  }
}

const toApiKeyView = (k: InstanceType<typeof ApiKey.class>): ApiKeyView => ({
  id: k.id,
  apiKeyId: k.id,
  name: k.name,
  prefix: k.prefix ?? null,
  start: k.start,
  userId: k.userId,
  organizationId: k.organizationId,
  metadata: k.metadata ?? null,
  expiresAt: iso(k.expiresAt),
  lastUsedAt: iso(k.lastUsedAt),
  createdAt: iso(k.createdAt)!,
});

declare module '../container.ts' {
  interface Cradle {
    apiKeys: ApiKeyService;
  }
}
