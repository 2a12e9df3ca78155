// gitProvider.*: every connection of the organization the caller may use, newest first with its
// forge's record (a forge without a record of its own: its type's fields null, <forge>.one has its
// settings); sharing one (its owner only); removing one no workload deploys from.
import { conflict, forbidden } from '@berth/core';
import { GitConnectionRecord, GitProviderRecord, GithubRecord, GitlabRecord, BitbucketRecord, GiteaRecord } from '../entities.ts';
import { providerView, githubRowView, gitlabRowView, bitbucketRowView, giteaRowView, usable, notShared, configured } from '../records.ts';
import type { GitProviderListed, GitProviderView } from '../schemas.ts';
import { ConnectionScope } from './scope.ts';

/** Request-scoped (asClass(...).scoped()): confined to the caller's organization and, for a member, to the connections they may use. */
export class GitConnections extends ConnectionScope {
  /** Newest first, each with its type's record. */
  async all(): Promise<GitProviderListed[]> {
    const { organizationId, em, caller } = this.scope;
    const userId = caller.userId;
    const rows = (await em.find(GitProviderRecord, { organizationId }, { orderBy: { createdAt: 'desc', gitProviderId: 'asc' } })).filter(r => usable(r, caller));
    const ids = { gitProviderId: { $in: rows.map(r => r.gitProviderId) } };
    const [githubs, gitlabs, bitbuckets, giteas] = rows.length
      ? await Promise.all([em.find(GithubRecord, ids), em.find(GitlabRecord, ids), em.find(BitbucketRecord, ids), em.find(GiteaRecord, ids)])
      : [[], [], [], []];
    return rows.map(r => {
      const g = githubs.find(x => x.gitProviderId === r.gitProviderId);
      const l = gitlabs.find(x => x.gitProviderId === r.gitProviderId);
      const b = bitbuckets.find(x => x.gitProviderId === r.gitProviderId);
      const e = giteas.find(x => x.gitProviderId === r.gitProviderId);
      return {
        ...providerView(r),
        isOwner: r.userId === userId,
        github: g ? { ...githubRowView(g), isConfigured: configured(g) } : null,
        gitlab: l ? gitlabRowView(l) : null,
        bitbucket: b ? bitbucketRowView(b) : null,
        gitea: e ? giteaRowView(e) : null,
      };
    });
  }

  async toggleShare(gitProviderId: string, shared: boolean): Promise<GitProviderView> {
    const { organizationId, userId, em } = this.scope;
    const row = await this.git.providerRow(gitProviderId, organizationId, em);
    if (row.userId !== userId) throw forbidden('Only the owner can share this provider');
    row.sharedWithOrganization = shared;
    await em.flush();
    return providerView(row);
  }

  /** Deletes the connection, unless a workload deploys from it: then the refusal lists them. */
  async remove(gitProviderId: string): Promise<{ success: boolean }> {
    const { organizationId, em, caller } = this.scope;
    const row = await this.git.providerRow(gitProviderId, organizationId, em);
    if (!usable(row, caller)) throw notShared('gitProviderId');
    // The record of the connection's type, and the workload field that names it.
    const kinds = [
      ['githubId', GithubRecord],
      ['gitlabId', GitlabRecord],
      ['bitbucketId', BitbucketRecord],
      ['giteaId', GiteaRecord],
    ] as const;
    const found = await Promise.all(kinds.map(async ([field, entity]) => [field, (await em.findOne(entity as typeof GithubRecord, { gitProviderId })) as Record<string, unknown> | null] as const));
    const hit = found.find(([, r]) => r);
    let named: [string, string] | null = hit ? [hit[0], String(hit[1]![hit[0]])] : null;
    // A forge without a record of its own: the field its sourceFields name (while it is enabled).
    const forge = hit ? null : await em.findOne(GitConnectionRecord, { gitProviderId });
    const forgeField = forge && this.cradle.providers.has('git', row.providerType) ? this.cradle.providers.get('git', row.providerType).sourceFields?.id : undefined;
    if (forge && forgeField) named = [forgeField, forge.connectionId];
    const users = named ? await this.#usersOf(named[0], named[1]) : [];
    if (users.length) throw conflict(`The provider is in use by ${users.join(', ')}: point them at another source first`);
    await em.nativeDelete(GitProviderRecord, { gitProviderId: row.gitProviderId, organizationId });
    return { success: true };
  }

  /** The applications and compose stacks whose `field` names the record (their appNames). */
  async #usersOf(field: string, id: string): Promise<string[]> {
    const { em } = this.scope;
    const out: string[] = [];
    // kind-names: the kinds whose records carry a git provider's fields (their settings JSON), read by table.
    const tables = { applications: 'application', compose_stacks: 'compose stack' }; // kind-names: as above
    for (const [table, what] of Object.entries(tables)) {
      const present = await em.getConnection().execute(`select to_regclass(?) as t`, [table]);
      if (!present[0]?.t) continue;
      const rows = await em.getConnection().execute(`select app_name from "${table}" where settings->>? = ?`, [field, id]);
      out.push(...rows.map(r => `${what} ${String(r.app_name)}`));
    }
    return out;
  }
}
