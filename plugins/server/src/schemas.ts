// What server.* takes and answers. Field names follow the peer's API (its server table); Berth adds
// hostKeyFingerprint, the pinned host key. No answer carries a private key.
import { SshKeySummary, Type, schema, type Static, type TSchema } from '@berth/core';

const { Nullable, NonEmpty, Timestamp } = schema;

/** OpenSSH's SHA-256 form of a host key fingerprint, as `ssh-keygen -l -E sha256` prints it. */
export const Fingerprint = () => Type.String({ pattern: '^SHA256:[A-Za-z0-9+/]{43}$', maxLength: 64, description: "the host key's fingerprint as `ssh-keygen -l -E sha256` prints it (SHA256:…)" });
const ServerType = Type.Union([Type.Literal('deploy'), Type.Literal('build')]);
const ServerStatus = Type.Union([Type.Literal('active'), Type.Literal('inactive')]);
const Address = () => Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9.:\\[\\]_-]+$', description: 'an IP address or a DNS name' });
const Login = () => Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z_][a-z0-9_.-]*\\$?$', description: 'the login: root, or a user in the docker group' });
const Port = () => Type.Integer({ minimum: 1, maximum: 65535 });
const Id = () => NonEmpty({ maxLength: 255 });

export const CreateInput = Type.Object({
  name: NonEmpty({ maxLength: 255 }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  ipAddress: Address(),
  port: Port(),
  username: Type.Optional(Login()),
  sshKeyId: Type.Optional(
    Nullable(Type.String({ maxLength: 255, description: 'a key of sshKey.*; null: none of its own (it connects with the organization’s default key, settings.saveSSHPrivateKey, or not at all)' })),
  ),
  serverType: Type.Optional(ServerType),
  enableDockerCleanup: Type.Optional(Type.Boolean({ default: true })),
  hostKeyFingerprint: Type.Optional(Nullable(Fingerprint())),
});
export type CreateInput = Static<typeof CreateInput>;

export const ServerIdInput = Type.Object({ serverId: Id() });

export const UpdateInput = Type.Object({
  serverId: Id(),
  name: Type.Optional(NonEmpty({ maxLength: 255 })),
  description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  ipAddress: Type.Optional(Address()),
  port: Type.Optional(Port()),
  username: Type.Optional(Login()),
  sshKeyId: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  serverType: Type.Optional(ServerType),
  enableDockerCleanup: Type.Optional(Type.Boolean()),
  command: Type.Optional(Type.String({ maxLength: 100_000, description: 'the setup script server.setup runs (stored; run by the server-setup operations)' })),
  serverStatus: Type.Optional(ServerStatus),
  hostKeyFingerprint: Type.Optional(Nullable(Fingerprint())),
});
export type UpdateInput = Static<typeof UpdateInput>;

export const BuildsConcurrencyInput = Type.Object({ serverId: Id(), buildsConcurrency: Type.Integer({ minimum: 1, maximum: 100 }) });

const MetricsConfig = Type.Object({
  server: Type.Object({
    type: Type.String(),
    refreshRate: Type.Number(),
    port: Type.Number(),
    token: Type.String(),
    urlCallback: Type.String(),
    retentionDays: Type.Number(),
    cronJob: Type.String(),
    thresholds: Type.Object({ cpu: Type.Number(), memory: Type.Number() }),
  }),
  containers: Type.Object({ refreshRate: Type.Number(), services: Type.Object({ include: Type.Array(Type.String()), exclude: Type.Array(Type.String()) }) }),
});

/** The peer's default metrics configuration of a new server (setupMonitoring changes it). */
export const DEFAULT_METRICS_CONFIG = {
  server: { type: 'Remote', refreshRate: 60, port: 4500, token: '', urlCallback: '', cronJob: '', retentionDays: 2, thresholds: { cpu: 0, memory: 0 } },
  containers: { refreshRate: 60, services: { include: [], exclude: [] } },
};

/** A server record as create, update and the lists answer it (the peer's row, and the pinned host key). */
export const ServerView = Type.Object({
  serverId: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  ipAddress: Type.String(),
  port: Type.Integer(),
  username: Type.String(),
  appName: Type.String(),
  enableDockerCleanup: Type.Boolean(),
  buildsConcurrency: Type.Integer(),
  createdAt: Timestamp(),
  organizationId: Type.String(),
  serverStatus: ServerStatus,
  serverType: ServerType,
  command: Type.String(),
  sshKeyId: Nullable(Type.String()),
  metricsConfig: MetricsConfig,
  hostKeyFingerprint: Nullable(Type.String({ description: 'the pinned host key (SHA256:…); null until the first connection pins one' })),
});
export type ServerView = Static<typeof ServerView>;

/** server.all: each server with the number of workloads on it. */
export const ServerListItem = Type.Object({ ...ServerView.properties, totalSum: Type.Integer({ description: 'workloads (applications, databases, compose stacks) on the server' }) });

/** server.one and server.remove: the record with its deployments (setup runs) and its key (never its private key). */
export const ServerDetail = (deployment: TSchema) => Type.Object({ ...ServerView.properties, deployments: Type.Array(deployment), sshKey: Nullable(SshKeySummary) });

export const ServerForPermissions = Type.Object({ serverId: Type.String(), name: Type.String(), ipAddress: Type.String(), serverType: ServerType });
