// What port.* takes and answers. Field names follow the peer's API.
import { Type, schema, type Static } from '@berth/core';

const { NonEmpty } = schema;

const PortNumber = (description: string) => Type.Integer({ minimum: 1, maximum: 65535, description });
// Defaults only where a port is created: on update an absent field keeps its value.
const PublishMode = (opts: { default?: string } = {}) =>
  Type.Enum(['ingress', 'host'], { description: 'ingress: the routing mesh answers on every node; host: only the node running the task', ...opts });
const Protocol = (opts: { default?: string } = {}) => Type.Enum(['tcp', 'udp'], opts);

const publishedPort = () => PortNumber('the port on the host (1-65535); one ingress owner per port and protocol on a host');
const targetPort = () => PortNumber('the port inside the container (1-65535)');

export const CreateInput = Type.Object({
  publishedPort: publishedPort(),
  publishMode: Type.Optional(PublishMode({ default: 'ingress' })),
  targetPort: targetPort(),
  protocol: Type.Optional(Protocol({ default: 'tcp' })),
  applicationId: NonEmpty({ description: 'the application that publishes the port' }),
});
export type CreateInput = Static<typeof CreateInput>;

export const UpdateInput = Type.Object({
  portId: NonEmpty(),
  publishedPort: Type.Optional(publishedPort()),
  publishMode: Type.Optional(PublishMode()),
  targetPort: Type.Optional(targetPort()),
  protocol: Type.Optional(Protocol()),
});
export type UpdateInput = Static<typeof UpdateInput>;

export const PortIdInput = Type.Object({ portId: NonEmpty() });

/** A stored port, as every operation answers it (the contract's PortRecord). */
export const PortView = Type.Object({
  portId: Type.String(),
  publishedPort: Type.Integer(),
  publishMode: PublishMode(),
  targetPort: Type.Integer(),
  protocol: Protocol(),
  applicationId: Type.String(),
});
export type PortView = Static<typeof PortView>;
