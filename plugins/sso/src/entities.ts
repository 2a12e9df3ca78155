// An organization's identity providers, and its sign-in settings (trusted origins, enforced SSO).
// A provider's OIDC or SAML configuration is kept as the peer keeps it (JSON text), sealed with the
// SecretBox: it holds the client secret or the SP's private key.
import { columns, defineEntity, p } from '@berth/core';

export const SsoProvider = defineEntity({
  name: 'SsoProvider',
  tableName: 'sso_providers',
  properties: {
    id: columns.primaryId(),
    providerId: p.string().unique(),
    organizationId: columns.berthId().index(),
    /** Who registered or last changed it (the peer's userId). */
    userId: columns.berthId().nullable(),
    issuer: p.text(),
    /** The e-mail domains it signs in, comma-separated (the peer's `domain`). */
    domain: p.text(),
    /** The OIDC configuration as JSON text, sealed; null for a SAML provider. */
    oidcConfig: p.text().nullable(),
    /** The SAML configuration as JSON text, sealed; null for an OIDC provider. */
    samlConfig: p.text().nullable(),
    /** The role of the members it brings in (member, admin or a custom role's name). */
    defaultRole: p.string().length(50).default('member'),
    createdAt: columns.createdAt(),
  },
});

export const SsoSettings = defineEntity({
  name: 'SsoSettings',
  tableName: 'sso_settings',
  properties: {
    organizationId: columns.berthId().primary(),
    /** Password logins refused for the organization's members (the instance owner excepted). */
    enforceSso: p.boolean().default(false),
    /** Where a sign-in may send its caller back to (origins, no trailing slash). */
    trustedOrigins: p.json<string[]>(),
  },
});

export const ssoEntities = [SsoProvider, SsoSettings];
