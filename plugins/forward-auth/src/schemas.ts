// What forwardAuth.* takes and answers: the peer's inputs (serverId null = this machine's proxy) and
// its answers, which its OpenAPI document leaves untyped (written from its router and service).
import { Type, schema, type Static } from '@berth/core';

const { Nullable, NonEmpty } = schema;

// The peer requires it (null for its own machine); left out it names this machine too, as every { host } scope reads it.
const ServerId = Type.Optional(Nullable(Type.String({ maxLength: 255, description: "a server of the organization; null (or left out): this machine's proxy (the instance operators')" })));
const CertificateType = Type.Enum(['none', 'letsencrypt', 'custom'], { description: "the auth domain's certificate: letsencrypt (ACME), none (the proxy's own), custom (customCertResolver)" });
/** The roles a domain may ask of a member, weakest first. */
export const ROLES = ['member', 'admin', 'owner'] as const;

export const ServerTarget = Type.Object({ serverId: ServerId });
export type ServerTarget = Static<typeof ServerTarget>;

export const SetAuthDomainInput = Type.Object({
  serverId: ServerId,
  authDomain: NonEmpty({
    maxLength: 253,
    description: 'the host of the sign-in page (e.g. auth.example.com); the session cookie is scoped to its parent (example.com), so the guarded domains must be below it',
  }),
  https: Type.Optional(Type.Boolean({ default: true })),
  certificateType: Type.Optional(CertificateType),
  customCertResolver: Type.Optional(Type.String({ maxLength: 255, pattern: '^[a-zA-Z0-9_-]*$' })),
});
export type SetAuthDomainInput = Static<typeof SetAuthDomainInput>;

export const DeployInput = Type.Object({ serverId: ServerId, providerId: NonEmpty({ maxLength: 255, description: 'who answers the checks: `berth` (forwardAuth.listProviders)' }) });
export type DeployInput = Static<typeof DeployInput>;

export const DomainTarget = Type.Object({ domainId: NonEmpty({ maxLength: 255 }) });
export const EnableInput = Type.Object({
  domainId: NonEmpty({ maxLength: 255 }),
  role: Type.Optional(Type.Enum([...ROLES], { description: "Berth's own: the least role a member needs (default member: every member of the domain's organization)" })),
});
export type EnableInput = Static<typeof EnableInput>;

export const AuthDomain = Nullable(
  Type.Object({
    host: Type.String(),
    https: Type.Boolean(),
    certificateType: CertificateType,
    customCertResolver: Nullable(Type.String()),
    callbackUrl: Type.String({ description: "Berth's sign-in page on the auth domain" }),
  }),
);
export const CallbackUrl = Type.Object({ callbackUrl: Type.String({ description: "Berth's sign-in page on the auth domain" }) });
export const Ok = Type.Object({ ok: Type.Boolean() });
export const Provider = Type.Object({ providerId: Type.String(), issuer: Type.String(), domain: Type.String() });
export const ServerStatus = Type.Object({
  serverId: Nullable(Type.String()),
  name: Type.String(),
  ipAddress: Nullable(Type.String()),
  status: Type.Enum(['running', 'stopped', 'unknown'], { description: 'running: Berth answers the checks of this proxy (deployOnServer)' }),
  authDomain: Nullable(Type.String()),
  https: Type.Boolean(),
  certificateType: CertificateType,
  customCertResolver: Nullable(Type.String()),
  callbackUrl: Nullable(Type.String()),
});
export type ServerStatus = Static<typeof ServerStatus>;
export const DomainStatus = Type.Object({ enabled: Type.Boolean(), role: Nullable(Type.Enum([...ROLES], { description: "Berth's own: the least role asked of a member (null while off)" })) });
export type DomainStatus = Static<typeof DomainStatus>;
