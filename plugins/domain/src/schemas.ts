// What domain.*, redirects.*, security.* and certificates.* take and answer: the peer's field
// names and nullability. A domain belongs to a workload named by its kind's id field
// (applicationId, composeId: the peer's wire fields); the workload must support domains.
import { Type, schema, type Static } from '@berth/core';

const { Nullable, NonEmpty } = schema;

/** A record's id (or a name stored in a varchar(255) column) as an input. */
const Id = (opts: object = {}) => NonEmpty({ maxLength: 255, ...opts });
/** A PEM text (a certificate chain or a private key): a long chain stays well below it. */
const Pem = (description: string) => NonEmpty({ maxLength: 65_536, description });

const Port = () => Type.Integer({ minimum: 1, maximum: 65535, description: 'the container port the workload listens on (default 3000)' });
const DomainType = () => Type.Enum(['compose', 'application', 'preview']); // kind-names: the peer's wire enum of domainType
export const CertificateType = () =>
  Type.Enum(['letsencrypt', 'none', 'custom'], { description: "letsencrypt: ACME; none: the proxy's own certificate (Caddy: its internal CA); custom: an uploaded certificate or customCertResolver" });
const PathField = (what: string) => Nullable(Type.String({ minLength: 1, maxLength: 255, pattern: '^/', description: `${what} (starts with "/")` }));

const domainFields = {
  host: NonEmpty({ maxLength: 253, description: 'the host name (an internationalised name is served in punycode)' }),
  path: Type.Optional(PathField('the public path prefix; default "/"')),
  port: Type.Optional(Nullable(Port())),
  customEntrypoint: Type.Optional(Nullable(Type.String({ maxLength: 255, pattern: '^[a-zA-Z0-9_-]+$', description: 'a proxy entry point other than web/websecure' }))),
  https: Type.Optional(Type.Boolean({ description: 'serve over TLS and redirect http to https' })),
  certificateType: Type.Optional(CertificateType()),
  customCertResolver: Type.Optional(Nullable(Type.String({ maxLength: 255, pattern: '^[a-zA-Z0-9_-]+$' }))),
  serviceName: Type.Optional(Nullable(Type.String({ maxLength: 255, pattern: '^[a-zA-Z0-9][a-zA-Z0-9_.-]*$', description: 'compose: the service within the stack' }))),
  domainType: Type.Optional(Nullable(DomainType())),
  internalPath: Type.Optional(PathField('the path prefix the workload expects; default "/"')),
  stripPath: Type.Optional(Type.Boolean({ description: 'remove path before the request reaches the workload' })),
  middlewares: Type.Optional(Nullable(Type.Array(Type.String({ maxLength: 255, pattern: '^[a-zA-Z0-9@_.-]+$' }), { maxItems: 100 }))),
  enabled: Type.Optional(Type.Boolean({ description: "false switches the domain off: its routes (and a compose stack's labels, at its next deploy) go, the record stays; default true" })),
  forwardAuthEnabled: Type.Optional(Type.Boolean()),
};

export const CreateDomainInput = Type.Object({
  ...domainFields,
  applicationId: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  composeId: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  previewDeploymentId: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
});
export type CreateDomainInput = Static<typeof CreateDomainInput>;

export const UpdateDomainInput = Type.Object({ ...domainFields, domainId: Id() });
export type UpdateDomainInput = Static<typeof UpdateDomainInput>;

export const DomainIdInput = Type.Object({ domainId: Id() });

const Check = Type.Object({
  check: Type.Enum(['dns', 'proxyPort', 'workload', 'certificate']),
  ok: Nullable(Type.Boolean({ description: 'null: could not be told' })),
  reason: Type.String({ description: 'what was found, and what to do when it is not ok' }),
});
export const Preflight = Type.Object(
  { ok: Type.Boolean({ description: 'every check that could be told passed' }), checks: Type.Array(Check) },
  { description: "Berth's own: why a domain would not answer" },
);
export type Preflight = Static<typeof Preflight>;

const domainView = {
  domainId: Type.String(),
  host: Type.String(),
  https: Type.Boolean(),
  port: Nullable(Type.Number()),
  path: Nullable(Type.String()),
  serviceName: Nullable(Type.String()),
  domainType: Nullable(DomainType()),
  uniqueConfigKey: Type.Integer(),
  createdAt: Type.String(),
  composeId: Nullable(Type.String()),
  customCertResolver: Nullable(Type.String()),
  applicationId: Nullable(Type.String()),
  previewDeploymentId: Nullable(Type.String()),
  certificateType: CertificateType(),
  internalPath: Nullable(Type.String()),
  stripPath: Type.Boolean(),
  customEntrypoint: Nullable(Type.String()),
  middlewares: Nullable(Type.Array(Type.String())),
  enabled: Type.Boolean({ description: 'whether the domain is routed (false: switched off, the record kept)' }),
  forwardAuthEnabled: Type.Boolean({
    description: 'whether a signed-in member of the organization is required (forwardAuth.enable and disable change it; the input field of domain.create and update is accepted and ignored)',
  }),
};
export const DomainView = Type.Object(domainView);
export type DomainView = Static<typeof DomainView>;
/** The owning application as the peer's domain reads join it; null when a workload of another kind owns the domain. */
const DomainApplication = Nullable(Type.Object({ applicationId: Type.String(), appName: Type.String(), name: Type.String() }));
export const DomainWithApplication = Type.Object({ ...domainView, application: DomainApplication });
export type DomainWithApplication = Static<typeof DomainWithApplication>;
/** The owning compose stack as the peer's byComposeId joins it; null when a workload of another kind owns the domain. */
const DomainCompose = Nullable(Type.Object({ composeId: Type.String(), appName: Type.String(), name: Type.String() }));
export const DomainWithCompose = Type.Object({ ...domainView, compose: DomainCompose });
export type DomainWithCompose = Static<typeof DomainWithCompose>;
export const DomainWithPreflight = Type.Object({ ...domainView, application: DomainApplication, preflight: Preflight });

export const GenerateDomainInput = Type.Object({ appName: NonEmpty({ maxLength: 63, pattern: '^[a-zA-Z0-9][a-zA-Z0-9-]*$' }), serverId: Type.Optional(Type.String({ maxLength: 255 })) });
export const ValidateDomainInput = Type.Object({ domain: NonEmpty({ maxLength: 253 }), serverIp: Type.Optional(Type.String({ minLength: 1, maxLength: 45 })) });
export const ValidateDomainView = Type.Object({
  isValid: Type.Boolean(),
  resolvedIp: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  isCloudflare: Type.Optional(Type.Boolean()),
  preflight: Preflight,
});

// ------------------------------------------------------------------ redirects.*
const redirectFields = {
  regex: NonEmpty({ maxLength: 2048, description: 'matched against the full URL (scheme://host/path?query)' }),
  replacement: NonEmpty({ maxLength: 2048, description: "$1 or ${1} name the regex's groups" }),
  permanent: Type.Boolean({ description: '301 when true, 302 otherwise' }),
};
export const CreateRedirectInput = Type.Object({ ...redirectFields, applicationId: Id() });
export const UpdateRedirectInput = Type.Object({ ...redirectFields, redirectId: Id() });
export const RedirectIdInput = Type.Object({ redirectId: Id() });
export const RedirectView = Type.Object({
  redirectId: Type.String(),
  regex: Type.String(),
  replacement: Type.String(),
  permanent: Type.Boolean(),
  uniqueConfigKey: Type.Integer(),
  createdAt: Type.String(),
  applicationId: Type.String(),
});
export type RedirectView = Static<typeof RedirectView>;

// ------------------------------------------------------------------ security.*
const securityFields = {
  username: NonEmpty({ maxLength: 255, pattern: '^[^:\\s]+$', description: 'no ":" or spaces' }),
  password: NonEmpty({ maxLength: 72, description: 'stored sealed; the proxy gets its bcrypt hash' }),
};
export const CreateSecurityInput = Type.Object({ ...securityFields, applicationId: Id() });
export const UpdateSecurityInput = Type.Object({ ...securityFields, securityId: Id() });
export const SecurityIdInput = Type.Object({ securityId: Id() });
export const SecurityView = Type.Object({ securityId: Type.String(), username: Type.String(), password: Type.String(), createdAt: Type.String(), applicationId: Type.String() });
export type SecurityView = Static<typeof SecurityView>;

// ------------------------------------------------------------------ certificates.*
export const CreateCertificateInput = Type.Object({
  certificateId: Type.Optional(Type.String({ maxLength: 255 })),
  name: Id(),
  certificateData: Pem('the PEM chain, leaf first'),
  privateKey: Pem('the PEM private key of the leaf; stored sealed, never answered'),
  certificatePath: Type.Optional(Type.String({ maxLength: 255 })),
  autoRenew: Type.Optional(Nullable(Type.Boolean())),
  organizationId: Type.Optional(Type.String({ maxLength: 255 })),
  serverId: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
});
export type CreateCertificateInput = Static<typeof CreateCertificateInput>;
export const UpdateCertificateInput = Type.Object({
  certificateId: Id(),
  name: Type.Optional(Id()),
  certificateData: Type.Optional(Pem('the PEM chain, leaf first')),
  privateKey: Type.Optional(Pem('the PEM private key of the leaf; stored sealed, never answered')),
  autoRenew: Type.Optional(Nullable(Type.Boolean())),
});
export type UpdateCertificateInput = Static<typeof UpdateCertificateInput>;
export const CertificateIdInput = Type.Object({ certificateId: Id() });
export const CertificateView = Type.Object({
  certificateId: Type.String(),
  name: Type.String(),
  certificateData: Type.String(),
  certificatePath: Type.String(),
  autoRenew: Nullable(Type.Boolean()),
  organizationId: Type.String(),
  serverId: Nullable(Type.String()),
  expiresAt: Nullable(Type.String({ description: "the leaf's notAfter" })),
  subjects: Type.Array(Type.String(), { description: 'the names the leaf covers' }),
  createdAt: Type.String(),
});
export type CertificateView = Static<typeof CertificateView>;
/** certificates.all: each with its server, as the peer joins it (null: Berth runs on one host) */
export const CertificateWithServer = Type.Object({ ...CertificateView.properties, server: Type.Null() });
