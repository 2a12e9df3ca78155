// An organization's SSO records, as its admins manage them: providers (their configuration sealed
// with the SecretBox, answered with the secrets masked), trusted origins and enforced SSO. Every
// read and write is confined to the caller's organization (RequestScope).
import { CustomRole, RequestScope, SECRET_MASK, forbidden, invalidField, notFound, type Cradle, type EntityManager } from '@berth/core';
import { SsoProvider, SsoSettings } from './entities.ts';
import type { OidcConfig, ProviderInput, ProviderView, SamlConfig } from './schemas.ts';

type ProviderRow = InstanceType<typeof SsoProvider.class>;

const DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,}$/;
/** The fields of a configuration that are secrets: stored sealed with the rest, answered masked. */
const OIDC_SECRETS = ['clientSecret'] as const;
const SAML_SECRETS = ['privateKey', 'decryptionPvk'] as const;
const SAML_METADATA_SECRETS = ['privateKey', 'privateKeyPass', 'encPrivateKey', 'encPrivateKeyPass'] as const;

/** An http(s) URL's origin (scheme, host, port), or a 400 naming `field`. */
export function originOf(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw invalidField(field, 'must be an http:// or https:// URL or origin');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidField(field, 'must be an http:// or https:// URL or origin');
  return url.origin;
}

/** The provider's stored configuration, opened. */
export function openConfig<T>(secrets: Cradle['secrets'], stored: string | null | undefined): T | null {
  return stored ? (JSON.parse(secrets.decrypt(stored)) as T) : null;
}

const masked = (config: Record<string, any> | null, fields: readonly string[], nested?: [string, readonly string[]]) => {
  if (!config) return null;
  const out: Record<string, any> = { ...config };
  for (const f of fields) if (out[f]) out[f] = SECRET_MASK;
  if (nested && out[nested[0]]) out[nested[0]] = masked(out[nested[0]], nested[1]);
  return out;
};

/** A masked secret sent back (an update from what listProviders answered) keeps the stored one. */
const keepMasked = (given: Record<string, any> | undefined, stored: Record<string, any> | null, fields: readonly string[], nested?: [string, readonly string[]]) => {
  if (!given) return given;
  const out: Record<string, any> = { ...given };
  for (const f of fields) if (out[f] === SECRET_MASK) out[f] = stored?.[f];
  if (nested && out[nested[0]]) out[nested[0]] = keepMasked(out[nested[0]], stored?.[nested[0]] ?? null, nested[1]);
  return out;
};

export async function settingsOf(em: EntityManager, organizationId: string): Promise<{ enforceSso: boolean; trustedOrigins: string[] }> {
  const row = await em.findOne(SsoSettings, { organizationId });
  return { enforceSso: row?.enforceSso ?? false, trustedOrigins: row?.trustedOrigins ?? [] };
}

export class SsoAdmin extends RequestScope {
  async list(): Promise<ProviderView[]> {
    const rows = await this.em.find(SsoProvider, { organizationId: this.organizationId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    return rows.map(r => this.#view(r));
  }

  async one(providerId: string): Promise<ProviderView> {
    return this.#view(await this.owned(SsoProvider, { providerId }, 'SSO provider'));
  }

  async register(input: ProviderInput): Promise<void> {
    this.#ownOrganization(input);
    const domains = this.#domains(input.domains);
    this.#oneKind(input);
    await this.#domainsFree(domains, null);
    if (await this.em.count(SsoProvider, { providerId: input.providerId })) throw invalidField('providerId', `${input.providerId} is already taken`);
    this.em.create(SsoProvider, {
      providerId: input.providerId,
      organizationId: this.organizationId,
      userId: this.principal.userId,
      issuer: input.issuer,
      domain: domains.join(','),
      oidcConfig: this.#seal(input.oidcConfig),
      samlConfig: this.#seal(input.samlConfig),
      defaultRole: await this.#defaultRole(input.defaultRole),
      createdAt: new Date(),
    });
    await this.em.flush();
  }

  async update(input: ProviderInput): Promise<void> {
    this.#ownOrganization(input);
    const row = await this.owned(SsoProvider, { providerId: input.providerId }, 'SSO provider');
    const domains = this.#domains(input.domains);
    await this.#domainsFree(domains, row.id);
    if (originOf(row.issuer, 'issuer') !== originOf(input.issuer, 'issuer')) {
      const { trustedOrigins } = await settingsOf(this.em, this.organizationId);
      if (!trustedOrigins.includes(originOf(input.issuer, 'issuer')))
        throw invalidField('issuer', "is not among the organization's trusted origins: add it (sso.addTrustedOrigin) before changing the issuer");
    }
    row.issuer = input.issuer;
    row.domain = domains.join(',');
    if (input.defaultRole !== undefined) row.defaultRole = await this.#defaultRole(input.defaultRole);
    row.userId = this.principal.userId;
    if (input.oidcConfig) row.oidcConfig = this.#seal(keepMasked(input.oidcConfig, this.#open(row.oidcConfig), OIDC_SECRETS));
    if (input.samlConfig) row.samlConfig = this.#seal(keepMasked(input.samlConfig, this.#open(row.samlConfig), SAML_SECRETS, ['spMetadata', SAML_METADATA_SECRETS]));
    await this.em.flush();
  }

  async remove(providerId: string): Promise<void> {
    const row = await this.owned(SsoProvider, { providerId }, 'SSO provider');
    this.em.remove(row);
    await this.em.flush();
  }

  async trustedOrigins(): Promise<string[]> {
    return (await settingsOf(this.em, this.organizationId)).trustedOrigins;
  }

  /** Replaces the organization's trusted origins with what `change` makes of them. */
  async changeOrigins(change: (origins: string[]) => string[]): Promise<void> {
    const current = await settingsOf(this.em, this.organizationId);
    await this.em.upsert(SsoSettings, { organizationId: this.organizationId, enforceSso: current.enforceSso, trustedOrigins: [...new Set(change(current.trustedOrigins))] });
  }

  async setEnforced(enforceSso: boolean): Promise<void> {
    const current = await settingsOf(this.em, this.organizationId);
    if (enforceSso && !(await this.em.count(SsoProvider, { organizationId: this.organizationId })))
      throw invalidField('enforceSSO', 'cannot be turned on before the organization has an SSO provider (sso.register): its members could not sign in');
    await this.em.upsert(SsoSettings, { organizationId: this.organizationId, enforceSso, trustedOrigins: current.trustedOrigins });
  }

  /** The caller's organization's enforcement (public: the instance's organization for a caller without credentials). */
  async enforced(): Promise<boolean> {
    const organizationId = this.cradle.principal?.organizationId ?? (await this.cradle.accounts.instanceOrganizationId());
    return organizationId ? (await settingsOf(this.em, organizationId)).enforceSso : false;
  }

  #view(r: ProviderRow): ProviderView {
    const json = (v: Record<string, any> | null) => (v ? JSON.stringify(v) : null);
    return {
      id: r.id,
      providerId: r.providerId,
      issuer: r.issuer,
      domain: r.domain,
      oidcConfig: json(masked(this.#open(r.oidcConfig), OIDC_SECRETS)),
      samlConfig: json(masked(this.#open(r.samlConfig), SAML_SECRETS, ['spMetadata', SAML_METADATA_SECRETS])),
      organizationId: r.organizationId,
      defaultRole: r.defaultRole,
    };
  }

  /** The role a provider's new members get: member unless given; owner never; a custom role of this organization's. */
  async #defaultRole(given: string | undefined): Promise<string> {
    if (given === undefined || given === 'member' || given === 'admin') return given ?? 'member';
    if (given === 'owner') throw invalidField('defaultRole', 'cannot be owner: an organization has one owner, and no sign-in makes another');
    if (!(await this.em.count(CustomRole, { organizationId: this.organizationId, role: given })))
      throw invalidField('defaultRole', `${given} is no role of this organization: member, admin or a custom role's name (customRole.all)`);
    return given;
  }

  #seal(config: OidcConfig | SamlConfig | Record<string, any> | undefined): string | null {
    return config ? this.cradle.secrets.encrypt(JSON.stringify(config)) : null;
  }

  #open(stored: string | null | undefined): Record<string, any> | null {
    return openConfig(this.cradle.secrets, stored);
  }

  #domains(given: string[]): string[] {
    const domains = [...new Set(given.map(d => d.trim().toLowerCase()).filter(Boolean))];
    domains.forEach((d, i) => {
      if (!DOMAIN.test(d)) throw invalidField(`domains.${i}`, `${JSON.stringify(d.slice(0, 64))} is not a domain name`);
    });
    return domains;
  }

  /** The peer's organizationId, when given, can only be the caller's (a provider is always its organization's). */
  #ownOrganization(input: ProviderInput): void {
    if (input.organizationId && input.organizationId !== this.organizationId) throw notFound('Organization');
  }

  #oneKind(input: ProviderInput): void {
    if (!input.oidcConfig === !input.samlConfig) throw invalidField('oidcConfig', 'give either oidcConfig (OpenID Connect) or samlConfig (SAML 2.0), one of the two');
  }

  /** A domain signs in through one provider of the whole instance (as the peer has it). */
  async #domainsFree(domains: string[], except: string | null): Promise<void> {
    const others = await this.em.find(SsoProvider, except ? { id: { $ne: except } } : {}, { fields: ['domain'] });
    const taken = new Set(others.flatMap(o => o.domain.split(',').map(d => d.trim().toLowerCase())));
    const i = domains.findIndex(d => taken.has(d));
    if (i >= 0) throw invalidField(`domains.${i}`, `${domains[i]} is already registered for another provider`);
  }
}

/** Password logins refused for members of an organization that enforces SSO; the instance owner keeps hers (break-glass). */
export class EnforcedSsoPolicy {
  readonly #cradle: Cradle;
  constructor(cradle: Cradle) {
    this.#cradle = cradle;
  }

  async check(userId: string): Promise<void> {
    if (await this.#cradle.accounts.isInstanceOwner(userId)) return;
    const [row] = await this.#cradle.orm.em
      .fork()
      .getConnection()
      .execute<{ organization_id: string }[]>('select s.organization_id from sso_settings s join members m on m.organization_id = s.organization_id where m.user_id = ? and s.enforce_sso limit 1', [
        userId,
      ]);
    if (row) throw forbidden('Your organization signs in with single sign-on only: password login is turned off (sign in through /api/sso/<providerId>/sign-in)');
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The caller's organization's SSO providers, trusted origins and enforcement (sso.*). */
    ssoAdmin: SsoAdmin;
  }
}
