// What every connections service of a request starts from: the kernel's RequestScope (the caller,
// their organization and the request's transaction, from the request's scope: each service is
// registered asClass(...).scoped(), so a handler calls it with the input alone), and the
// connections as Berth uses them (gitProviders).
import { RequestScope, type Cradle, type EntityManager } from '@berth/core';
import { GitConnectionRecord, GitProviderRecord, type GitConnectionRow, type GitProviderRow } from '../entities.ts';
import { usable, type GitCaller } from '../records.ts';

export abstract class ConnectionScope extends RequestScope {
  protected get git(): Cradle['gitProviders'] {
    return this.cradle.gitProviders;
  }

  /** The caller (an owner or admin uses every connection; a member, theirs and the shared ones), their organization, the request's transaction. */
  protected get scope(): { organizationId: string; userId: string; em: EntityManager; caller: GitCaller } {
    return { organizationId: this.organizationId, userId: this.principal.userId, em: this.em, caller: this.caller };
  }

  /** The organization's connections of a forge the caller may use, newest first, each with its record. */
  protected async usableOf(type: string): Promise<{ provider: GitProviderRow; record: GitConnectionRow }[]> {
    const { organizationId, em, caller } = this.scope;
    const rows = (await em.find(GitProviderRecord, { organizationId, providerType: type }, { orderBy: { createdAt: 'desc', gitProviderId: 'asc' } })).filter(r => usable(r, caller));
    const records = rows.length ? await em.find(GitConnectionRecord, { gitProviderId: { $in: rows.map(r => r.gitProviderId) } }) : [];
    return rows.flatMap(provider => {
      const record = records.find(x => x.gitProviderId === provider.gitProviderId);
      return record ? [{ provider, record }] : [];
    });
  }
}
