// What network.* takes and answers: the peer's fields, types and nullability. A network's name
// reaches the host, so it is held to Docker's own pattern, at most 63 characters.
import { Type, schema, type Static } from '@berth/core';

const { NonEmpty, Nullable } = schema;

/** A network name as the engine takes it: a letter or digit, then letters, digits, _ . - (63 at most). */
export const NETWORK_NAME_PATTERN = '^[a-zA-Z0-9][a-zA-Z0-9_.-]*$';
export const NetworkName = () =>
  Type.String({ minLength: 1, maxLength: 63, pattern: NETWORK_NAME_PATTERN, description: 'the network name on the host: a letter or digit, then letters, digits, _ . -' });

export const DRIVERS = ['bridge', 'overlay'] as const;
export const Driver = Type.Union([Type.Literal('bridge'), Type.Literal('overlay')], {
  description: 'bridge: one host, for containers (docker-compose stacks); overlay: the swarm, for services (applications, databases, stacks)',
});
export type Driver = (typeof DRIVERS)[number];

const ServerIdQuery = () => Type.Optional(Type.String({ maxLength: 255, description: "a server of the organization; absent or empty: this machine's engine" }));
const Range = (description: string) => Type.Optional(Type.String({ maxLength: 64, description }));

export const IpamConfigEntry = Type.Object({
  subnet: Range('a CIDR block, e.g. 10.42.0.0/24 (fd00:42::/64 for IPv6)'),
  gateway: Range('an address inside the subnet'),
  ipRange: Range('a CIDR block inside the subnet that containers get their addresses from'),
});
export type IpamConfigEntry = Static<typeof IpamConfigEntry>;

export const IpamInput = Type.Object({
  driver: Type.Optional(Type.String({ maxLength: 64, pattern: '^[a-zA-Z0-9][a-zA-Z0-9_./:-]*$', description: 'the IPAM driver (default: "default")' })),
  config: Type.Optional(Type.Array(IpamConfigEntry, { maxItems: 8 })),
});
export type IpamInput = Static<typeof IpamInput>;

export const CreateInput = Type.Object({
  name: NetworkName(),
  driver: Type.Optional(Driver),
  internal: Type.Optional(Type.Boolean({ description: 'no route outside the network' })),
  attachable: Type.Optional(Type.Boolean({ description: 'an overlay that plain containers may join, not only services' })),
  enableIPv4: Type.Optional(Type.Boolean({ description: 'default true; false needs Docker 28 or later (engine API 1.47)' })),
  enableIPv6: Type.Optional(Type.Boolean()),
  mtu: Type.Optional(Nullable(Type.Integer({ minimum: 68, maximum: 65535 }))),
  ipam: Type.Optional(Nullable(IpamInput)),
  serverId: Type.Optional(Nullable(Type.String({ maxLength: 255, description: "a server of the organization; null, absent or empty: this machine's engine" }))),
});
export type CreateInput = Static<typeof CreateInput>;

export const NetworkIdInput = Type.Object({ networkId: NonEmpty({ maxLength: 255 }) });
export const ServerInput = Type.Object({ serverId: ServerIdQuery() });
export type ServerInput = Static<typeof ServerInput>;

export const ImportInput = Type.Object({
  serverId: ServerIdQuery(),
  names: Type.Array(NetworkName(), { minItems: 1, maxItems: 100, description: 'networks Berth made for this organization on the host (network.networksToSync lists them)' }),
});
export type ImportInput = Static<typeof ImportInput>;

/** The ipam object as a record keeps it. */
export const IpamView = Type.Object({ driver: Type.Optional(Type.String()), config: Type.Optional(Type.Array(IpamConfigEntry)) });
export type IpamView = Static<typeof IpamView>;

/** A network record, as every procedure but inspect answers it (the peer's row). */
export const NetworkView = Type.Object({
  networkId: Type.String(),
  name: Type.String(),
  driver: Driver,
  internal: Type.Boolean(),
  attachable: Type.Boolean(),
  enableIPv4: Type.Boolean(),
  enableIPv6: Type.Boolean(),
  mtu: Nullable(Type.Integer()),
  ipam: Nullable(IpamView),
  createdAt: Type.String({ format: 'date-time' }),
  organizationId: Type.String(),
  serverId: Nullable(Type.String()),
});
export type NetworkView = Static<typeof NetworkView>;

export const SyncView = Type.Object({
  importable: Type.Array(Type.Object({ name: Type.String(), driver: Type.String(), internal: Type.Boolean(), attachable: Type.Boolean(), subnets: Type.Array(Type.String()) }), {
    description: 'networks Berth made for this organization on the host that no record names (network.import takes them)',
  }),
  missing: Type.Array(Type.Object({ networkId: Type.String(), name: Type.String() }), { description: 'records whose network is not on the host (network.recreate makes it again)' }),
});
export type SyncView = Static<typeof SyncView>;

export const ImportResult = Type.Object({
  imported: Type.Array(Type.String(), { description: 'the names imported' }),
  errors: Type.Array(Type.Object({ name: Type.String(), error: Type.String() }), { description: 'each name not imported, with why' }),
});
export type ImportResult = Static<typeof ImportResult>;

const Labels = () => Nullable(Type.Record(Type.String(), Type.String()));

/** The engine's network object (GET /networks/{id}), as the engine answers it. */
export const EngineNetwork = Type.Object(
  {
    Name: Type.String(),
    Id: Type.String(),
    Created: Type.String(),
    Scope: Type.String(),
    Driver: Type.String(),
    EnableIPv4: Type.Optional(Type.Boolean()),
    EnableIPv6: Type.Boolean(),
    IPAM: Type.Object(
      {
        Driver: Type.String(),
        Options: Labels(),
        Config: Nullable(
          Type.Array(
            Type.Object(
              { Subnet: Type.Optional(Type.String()), Gateway: Type.Optional(Type.String()), IPRange: Type.Optional(Type.String()), AuxiliaryAddresses: Type.Optional(Labels()) },
              { additionalProperties: true },
            ),
          ),
        ),
      },
      { additionalProperties: true },
    ),
    Internal: Type.Boolean(),
    Attachable: Type.Boolean(),
    Ingress: Type.Boolean(),
    ConfigFrom: Type.Optional(Type.Object({ Network: Type.String() })),
    ConfigOnly: Type.Optional(Type.Boolean()),
    Containers: Type.Optional(
      Nullable(
        Type.Record(
          Type.String(),
          Type.Object({ Name: Type.String(), EndpointID: Type.String(), MacAddress: Type.String(), IPv4Address: Type.String(), IPv6Address: Type.String() }, { additionalProperties: true }),
        ),
      ),
    ),
    Options: Labels(),
    Labels: Labels(),
    Peers: Type.Optional(Nullable(Type.Array(Type.Object({ Name: Type.String(), IP: Type.String() }, { additionalProperties: true })))),
  },
  { additionalProperties: true, description: "the engine's own answer for the record's network (docker network inspect)" },
);
export type EngineNetwork = Static<typeof EngineNetwork>;
