// gitProvider.*: every connection of the organization the caller may use, newest first with its
// forge's record under the forge's name (for a forge that answers every field of a record, as the
// peer's tables do; <forge>.one has the others' settings); sharing one (its owner only); removing
// one no workload deploys from.
import { conflict, forbidden } from '@berth/core';
import { GitConnectionRecord, GitProviderRecord } from '../entities.ts';
import { connectionRecord, forgeIdField, providerView, usable, notShared } from '../records.ts';
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
    const connections = rows.length ? await em.find(GitConnectionRecord, ids) : [];
    // The forges that answer a record of their own here (the peer's github, gitlab, bitbucket, gitea).
    const recordForges = this.cradle.providers.all('git').filter(p => p.connection?.wire?.record);
    return rows.map(r => {
      const c = connections.find(x => x.gitProviderId === r.gitProviderId);
      const forgeRecords = Object.fromEntries(
        recordForges.map(p => {
          if (!c || r.providerType !== p.id) return [p.id, null];
          const form = p.connection!;
          const flag = form.wire?.configured;
          const set = (k: string) => (c.settings[k] ?? c.secrets[k] ?? null) !== null;
          const record = connectionRecord(p, c);
          return [p.id, flag ? { ...record, [flag.field]: flag.when.every(set) } : record];
        }),
      );
      return { ...providerView(r), isOwner: r.userId === userId, ...forgeRecords };
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
    // The workload field that names the connection: its forge's sourceFields.id (while it is enabled).
    const record = await em.findOne(GitConnectionRecord, { gitProviderId });
    const forge = this.cradle.providers.has('git', row.providerType) ? this.cradle.providers.get('git', row.providerType) : null;
    const field = record && forge?.sourceFields ? forgeIdField(forge) : undefined;
    const named: [string, string] | null = record && field ? [field, record.connectionId] : null;
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
