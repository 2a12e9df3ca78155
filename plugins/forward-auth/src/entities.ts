// The auth domain of a proxy (the peer's forward_auth_settings): one for this machine (serverId
// null, the instance operators') and one per server (its organization's). And the role a domain
// with forward auth on asks of its members (none kept: any member).
import { columns, defineEntity, p } from '@berth/core';

export const ForwardAuthSettings = defineEntity({
  name: 'ForwardAuthSettings',
  tableName: 'forward_auth_settings',
  properties: {
    forwardAuthSettingsId: columns.primaryId(),
    /** null: this machine's proxy. */
    serverId: columns.berthId().nullable(),
    /** The server's organization; null for this machine's. */
    organizationId: columns.berthId().nullable(),
    authDomain: p.string(),
    /** Where the session cookie is scoped: the auth domain's parent (the peer's baseDomain, with its leading dot). */
    baseDomain: p.string(),
    https: p.boolean(),
    certificateType: p.string().length(16),
    customCertResolver: p.string().nullable(),
    /** Set by deployOnServer (the peer's SSO provider; Berth's own: `berth`); null: domains are not checked yet. */
    providerId: p.string().length(64).nullable(),
    createdAt: columns.createdAt(),
  },
});
export type ForwardAuthSettingsRow = InstanceType<typeof ForwardAuthSettings.class>;

export const ForwardAuthRole = defineEntity({ name: 'ForwardAuthRole', tableName: 'forward_auth_roles', properties: { domainId: p.string().length(32).primary(), role: p.string().length(16) } });

export const forwardAuthEntities = [ForwardAuthSettings, ForwardAuthRole];
