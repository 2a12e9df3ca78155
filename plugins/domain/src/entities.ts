// Domains, redirects, basic-auth users and uploaded certificates. Domains, redirects and users
// belong to a workload (its kind and id: the peer's applicationId/composeId fields are derived
// from the kind's id field) and carry its organization, so reads are confined without asking
// the workload's plugin. Secrets are sealed (SecretBox): a user's password (plus its bcrypt
// hash, what the proxy checks), a certificate's private key.
import { columns, defineEntity, p } from '@berth/core';

/** The columns of a record that belongs to a workload: the workload's kind and id, its organization (routing.ts reads a workload's records by them). */
const ownedByWorkload = () => ({ serviceType: p.string(), serviceId: columns.berthId(), organizationId: columns.berthId(), createdAt: columns.createdAt() });

export const Domain = defineEntity({
  name: 'Domain',
  tableName: 'domains',
  properties: {
    domainId: columns.primaryId(),
    host: p.string(),
    https: p.boolean(),
    port: p.integer().nullable(),
    path: p.string().nullable(),
    internalPath: p.string().nullable(),
    stripPath: p.boolean(),
    serviceName: p.string().nullable(),
    domainType: p.string().nullable(),
    uniqueConfigKey: p.integer(),
    certificateType: p.string(),
    customCertResolver: p.string().nullable(),
    customEntrypoint: p.string().nullable(),
    middlewares: p.json<string[]>().nullable(),
    previewDeploymentId: p.string().nullable(),
    /** Off: the record is kept, its routes (and a compose stack's labels, at its next deploy) are not made. */
    enabled: p.boolean().default(true),
    /** Each request is first asked of Berth (the forward-auth plugin's forwardAuth.enable): served only to a signed-in member. */
    forwardAuthEnabled: p.boolean().default(false),
    ...ownedByWorkload(),
  },
});
export type DomainRow = InstanceType<typeof Domain.class>;

export const Redirect = defineEntity({
  name: 'Redirect',
  tableName: 'redirects',
  properties: { redirectId: columns.primaryId(), regex: p.text(), replacement: p.text(), permanent: p.boolean(), uniqueConfigKey: p.integer(), ...ownedByWorkload() },
});
export type RedirectRow = InstanceType<typeof Redirect.class>;

export const Security = defineEntity({
  name: 'Security',
  tableName: 'securities',
  properties: {
    securityId: columns.primaryId(),
    username: p.string(),
    /** The password, sealed. */
    passwordSealed: p.text(),
    /** Its bcrypt hash, sealed too: what the proxy's config gets. */
    passwordHashSealed: p.text(),
    ...ownedByWorkload(),
  },
});
export type SecurityRow = InstanceType<typeof Security.class>;

export const Certificate = defineEntity({
  name: 'Certificate',
  tableName: 'certificates',
  properties: {
    certificateId: columns.primaryId(),
    name: p.string(),
    certificateData: p.text(),
    privateKeySealed: p.text(),
    certificatePath: p.string(),
    autoRenew: p.boolean().nullable(),
    expiresAt: p.datetime().nullable(),
    subjects: p.json<string[]>(),
    serverId: p.string().nullable(),
    organizationId: columns.berthId(),
    createdAt: columns.createdAt(),
  },
});
export type CertificateRow = InstanceType<typeof Certificate.class>;

export const domainEntities = [Domain, Redirect, Security, Certificate];
