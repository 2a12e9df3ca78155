// An organization's SCIM providers: each one bearer token, shown once and stored as its SHA-256
// hash (as core's API keys), which /scim/v2 resolves to the organization that made it. Provider ids
// are the organization's own names: another organization may use the same one.
import { hashToken, newId, newToken, notFound, type EntityManager } from '@berth/core';
import { ScimProvider } from './entities.ts';
import type { ProviderView } from './schemas.ts';

/** The prefix that tells a SCIM token apart in a configuration (the rest is 32 random bytes). */
const TOKEN_PREFIX = 'berth_scim_';

export class ScimProviders {
  /**
   * A new token for the organization's provider: made with its first token, or given a new one that
   * replaces the old at once (the old one is refused from then on).
   */
  async generateToken(organizationId: string, providerId: string, em: EntityManager): Promise<{ scimToken: string; providerId: string }> {
    const scimToken = `${TOKEN_PREFIX}${newToken(32)}`;
    const existing = await em.findOne(ScimProvider, { organizationId, providerId });
    if (existing) existing.tokenHash = hashToken(scimToken);
    else em.create(ScimProvider, { id: newId(), organizationId, providerId, tokenHash: hashToken(scimToken), createdAt: new Date() });
    await em.flush();
    return { scimToken, providerId };
  }

  /** The organization's providers by name (never a token). */
  async list(organizationId: string, em: EntityManager): Promise<ProviderView[]> {
    const rows = await em.find(ScimProvider, { organizationId }, { orderBy: { providerId: 'asc' } });
    return rows.map(r => ({ id: r.id, providerId: r.providerId, organizationId: r.organizationId }));
  }

  /** Removes a provider of the organization: its token is refused from then on. */
  async remove(organizationId: string, providerId: string, em: EntityManager): Promise<void> {
    if (!(await em.nativeDelete(ScimProvider, { organizationId, providerId }))) throw notFound('SCIM provider');
  }

  /** The organization a bearer token provisions, or null when it is no provider's. Read at every request: a removed or replaced token is refused at once. */
  async organizationOf(token: string, em: EntityManager): Promise<string | null> {
    if (!token.startsWith(TOKEN_PREFIX) || token.length > 128) return null;
    return (await em.findOne(ScimProvider, { tokenHash: hashToken(token) }))?.organizationId ?? null;
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The organizations' SCIM providers and their tokens (scim.*). */
    scimProviders: ScimProviders;
  }
}
