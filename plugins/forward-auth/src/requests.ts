// forwardAuth.* for the caller: the auth domain of a proxy (this machine's for the instance
// operators — the transport's { host: 'serverId' } scope refuses anyone else before this runs — or a
// server of the caller's organization, 404 otherwise), Berth as the provider answering its checks,
// and forward auth switched on and off per domain of the organization. Request-scoped.
import { BerthError, conflict, invalidField, notFound, optionalService, RequestScope } from '@berth/core';
import { ForwardAuthRole, ForwardAuthSettings, type ForwardAuthSettingsRow } from './entities.ts';
import type { DeployInput, DomainStatus, EnableInput, ServerStatus, SetAuthDomainInput } from './schemas.ts';
import { asciiHost, BERTH_PROVIDER, baseDomainOf, signInUrl } from './service.ts';

const OK = { ok: true } as const;
/** A host name of at least two labels, each a DNS label (the peer's rule, lower-case). */
const AUTH_DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** Registered asClass(...).scoped() as `forwardAuthRequests`. */
export class ForwardAuthRequests extends RequestScope {
  get #service() {
    return this.cradle.forwardAuth;
  }

  /** The proxy a serverId names: null for this machine, else one of the organization's servers (404 otherwise). */
  async #host(serverId: string | null | undefined): Promise<string | null> {
    // "" and "none" name this machine too, as the transport's { host } scope reads them.
    if (!serverId || serverId === 'none') return null;
    const owner = await optionalService(this.cradle, 'hostServers')?.organizationOf(serverId);
    if (owner !== this.organizationId) throw notFound(`Server ${serverId}`);
    return serverId;
  }

  async getAuthDomain(serverId: string | null | undefined) {
    const s = await this.#service.settings(await this.#host(serverId), this.em);
    return s ? { host: s.authDomain, https: s.https, certificateType: s.certificateType as 'none', customCertResolver: s.customCertResolver ?? null, callbackUrl: signInUrl(s) } : null;
  }

  async setAuthDomain(input: SetAuthDomainInput): Promise<{ callbackUrl: string }> {
    const serverId = await this.#host(input.serverId);
    const authDomain = asciiHost(input.authDomain);
    if (!AUTH_DOMAIN.test(authDomain)) throw invalidField('authDomain', `"${input.authDomain}" is not a host name of two labels or more`);
    const taken = await this.em.findOne(ForwardAuthSettings, { authDomain });
    if (taken && taken.serverId !== serverId) throw conflict(`authDomain: ${authDomain} is already the auth domain of another proxy`);
    const values = {
      authDomain,
      baseDomain: baseDomainOf(authDomain),
      https: input.https ?? true,
      certificateType: input.certificateType ?? 'letsencrypt',
      customCertResolver: input.customCertResolver || null,
    };
    let row = await this.#service.settings(serverId, this.em);
    if (row) Object.assign(row, values);
    else row = this.em.create(ForwardAuthSettings, { ...values, serverId, organizationId: serverId ? this.organizationId : null, providerId: null, createdAt: new Date() });
    await this.em.flush();
    await this.#service.applyAuthRoute(serverId, row);
    await this.#service.resync(this.em);
    return { callbackUrl: signInUrl(row) };
  }

  async removeAuthDomain(serverId: string | null | undefined) {
    const host = await this.#host(serverId);
    const row = await this.#service.settings(host, this.em);
    if (!row) return OK;
    this.em.remove(row);
    await this.em.flush();
    await this.#service.applyAuthRoute(host, null);
    // Its guarded domains are no longer served (no check can be made for them) until an auth domain comes back.
    await this.#service.resync(this.em);
    return OK;
  }

  /** Berth answers the checks itself: its one provider (the SSO providers the peer lists need an OIDC proxy). */
  listProviders() {
    return [{ providerId: BERTH_PROVIDER, issuer: this.cradle.config.serverIp ?? 'berth', domain: '' }];
  }

  /** This machine's proxy (for the instance operators) and each server of the organization, with its auth domain. */
  async serverStatus(): Promise<ServerStatus[]> {
    const servers = (await optionalService(this.cradle, 'servers')?.forPermissions(this.organizationId, this.em)) ?? [];
    const targets = [
      ...((await this.cradle.accounts.isInstanceOperator(this.principal)) ? [{ serverId: null, name: 'Berth (this machine)', ipAddress: null }] : []),
      ...servers.filter(s => s.serverType === 'deploy').map(s => ({ serverId: s.serverId, name: s.name, ipAddress: s.ipAddress })),
    ];
    return Promise.all(
      targets.map(async t => {
        const s = await this.#service.settings(t.serverId, this.em);
        return {
          ...t,
          status: s?.providerId ? ('running' as const) : ('stopped' as const),
          authDomain: s?.authDomain ?? null,
          https: s?.https ?? true,
          certificateType: (s?.certificateType ?? 'none') as 'none',
          customCertResolver: s?.customCertResolver ?? null,
          callbackUrl: s ? signInUrl(s) : null,
        };
      }),
    );
  }

  async deployOnServer(input: DeployInput) {
    const serverId = await this.#host(input.serverId);
    if (input.providerId !== BERTH_PROVIDER) throw invalidField('providerId', `Berth answers the checks itself: its provider is "${BERTH_PROVIDER}" (forwardAuth.listProviders)`);
    const row = await this.#settingsFirst(serverId);
    row.providerId = BERTH_PROVIDER;
    await this.em.flush();
    await this.#service.resync(this.em);
    return OK;
  }

  async removeOnServer(serverId: string | null | undefined) {
    const host = await this.#host(serverId);
    const row = await this.#service.settings(host, this.em);
    if (row?.providerId) {
      row.providerId = null;
      await this.em.flush();
      await this.#service.resync(this.em);
    }
    return OK;
  }

  async status(domainId: string): Promise<DomainStatus> {
    const row = await this.cradle.domainRequests.one(domainId);
    const role = row.forwardAuthEnabled ? ((await this.em.findOne(ForwardAuthRole, { domainId }))?.role ?? 'member') : null;
    return { enabled: row.forwardAuthEnabled, role: role as DomainStatus['role'] };
  }

  async enable(input: EnableInput) {
    const { row, workload } = await this.cradle.domainRequests.guardable(input.domainId);
    const settings = await this.#service.settings(workload.serverId, this.em);
    if (!settings?.providerId)
      throw new BerthError(
        'BAD_REQUEST',
        `domainId: the proxy of this domain's ${workload.serverId ? `server ${workload.serverId}` : 'machine'} has no auth domain served by Berth yet: forwardAuth.setAuthDomain, then forwardAuth.deployOnServer`,
        [{ path: ['domainId'], message: 'domainId: no auth domain is served for its proxy (forwardAuth.setAuthDomain and deployOnServer first)' }],
      );
    await this.em.upsert(ForwardAuthRole, { domainId: row.domainId, role: input.role ?? 'member' });
    await this.cradle.domainRequests.setForwardAuth(row, true);
    return OK;
  }

  async disable(domainId: string) {
    const { row } = await this.cradle.domainRequests.guardable(domainId);
    await this.cradle.domainRequests.setForwardAuth(row, false);
    await this.em.nativeDelete(ForwardAuthRole, { domainId: row.domainId });
    return OK;
  }

  async #settingsFirst(serverId: string | null): Promise<ForwardAuthSettingsRow> {
    const row = await this.#service.settings(serverId, this.em);
    if (!row)
      throw new BerthError('BAD_REQUEST', 'serverId: set the authentication domain of this proxy before deploying (forwardAuth.setAuthDomain)', [
        { path: ['serverId'], message: 'serverId: no auth domain is set for this proxy (forwardAuth.setAuthDomain)' },
      ]);
    return row;
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** forwardAuth.* for the current request's caller (request scope only). */
    forwardAuthRequests: ForwardAuthRequests;
  }
}
