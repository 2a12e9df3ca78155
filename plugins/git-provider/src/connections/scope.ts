// What every connections service of a request starts from: the kernel's RequestScope (the caller,
// their organization and the request's transaction, from the request's scope: each service is
// registered asClass(...).scoped(), so a handler calls it with the input alone), and the
// connections as Berth uses them (gitProviders).
import { RequestScope, type Cradle, type EntityManager } from '@berth/core';
import { GitProviderRecord, type BitbucketRecord, type GitConnectionRecord, type GiteaRecord, type GithubRecord, type GitlabRecord, type GitProviderRow } from '../entities.ts';
import { usable, type GitCaller } from '../records.ts';

export abstract class ConnectionScope extends RequestScope {
  protected get git(): Cradle['gitProviders'] {
    return this.cradle.gitProviders;
  }

  /** The caller (an owner or admin uses every connection; a member, theirs and the shared ones), their organization, the request's transaction. */
  protected get scope(): { organizationId: string; userId: string; em: EntityManager; caller: GitCaller } {
    return { organizationId: this.organizationId, userId: this.principal.userId, em: this.em, caller: this.caller };
  }

  /** The organization's connections of a forge the caller may use, newest first, each with its forge's record (`entity`'s row). */
  protected async usableOf<R extends { gitProviderId: string }>(
    type: string,
    entity: typeof GithubRecord | typeof GitlabRecord | typeof BitbucketRecord | typeof GiteaRecord | typeof GitConnectionRecord,
  ): Promise<{ provider: GitProviderRow; record: R }[]> {
    const { organizationId, em, caller } = this.scope;
    const rows = (await em.find(GitProviderRecord, { organizationId, providerType: type }, { orderBy: { createdAt: 'desc', gitProviderId: 'asc' } })).filter(r => usable(r, caller));
    // cast: the forge records differ in their own columns; each has gitProviderId, which is all this reads.
    const records = rows.length ? ((await em.find(entity as typeof GithubRecord, { gitProviderId: { $in: rows.map(r => r.gitProviderId) } })) as unknown as R[]) : [];
    return rows.flatMap(provider => {
      const record = records.find(x => x.gitProviderId === provider.gitProviderId);
      return record ? [{ provider, record }] : [];
    });
  }
}
