// Domains, redirects, basic-auth users and uploaded certificates. Domains, redirects and users
// belong to a workload (its kind and id: the peer's applicationId/composeId fields are derived
// from the kind's id field) and carry its organization, so reads are confined without asking
// the workload's plugin. Secrets are sealed (SecretBox): a user's password (plus its bcrypt
// hash, what the proxy checks), a certificate's private key.
import { defineEntity, p, newId } from '@berth/core';

export const Domain = defineEntity({
  name: 'Domain',
  tableName: 'domains',
  properties: {
    domainId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
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
    serviceType: p.string(),
    serviceId: p.string().length(32),
    organizationId: p.string().length(32),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type DomainRow = InstanceType<typeof Domain.class>;

export const Redirect = defineEntity({
  name: 'Redirect',
  tableName: 'redirects',
  properties: {
    redirectId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    regex: p.text(),
    replacement: p.text(),
    permanent: p.boolean(),
    uniqueConfigKey: p.integer(),
    serviceType: p.string(),
    serviceId: p.string().length(32),
    organizationId: p.string().length(32),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type RedirectRow = InstanceType<typeof Redirect.class>;

export const Security = defineEntity({
  name: 'Security',
  tableName: 'securities',
  properties: {
    securityId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    username: p.string(),
    /** The password, sealed. */
    passwordSealed: p.text(),
    /** Its bcrypt hash, sealed too: what the proxy's config gets. */
    passwordHashSealed: p.text(),
    serviceType: p.string(),
    serviceId: p.string().length(32),
    organizationId: p.string().length(32),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type SecurityRow = InstanceType<typeof Security.class>;

export const Certificate = defineEntity({
  name: 'Certificate',
  tableName: 'certificates',
  properties: {
    certificateId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    name: p.string(),
    certificateData: p.text(),
    privateKeySealed: p.text(),
    certificatePath: p.string(),
    autoRenew: p.boolean().nullable(),
    expiresAt: p.datetime().nullable(),
    subjects: p.json<string[]>(),
    serverId: p.string().nullable(),
    organizationId: p.string().length(32),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type CertificateRow = InstanceType<typeof Certificate.class>;

export const domainEntities = [Domain, Redirect, Security, Certificate];
