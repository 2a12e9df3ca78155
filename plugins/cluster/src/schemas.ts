// What swarm.* and cluster.* take and answer. The listings are the peer's: swarm.getNodes and
// getNodeApps answer the Docker CLI's `node ls` / `service ls` JSON lines (Berth adds `nodes` to
// each service), getNodeInfo and cluster.getNodes the engine's node objects. No answer carries a
// join token.
import { Type, schema, type Static } from '@berth/core';

const { NonEmpty, Nullable } = schema;

const Id = () => NonEmpty({ maxLength: 255 });
/** The peer's optional serverId: absent (or empty) means this machine's engine. */
const ServerId = () => Type.Optional(Type.String({ maxLength: 255, description: "a server of the organization; absent: this machine's engine" }));
/** A swarm node id as the engine answers it (or a unique prefix of one). */
const NodeId = () => NonEmpty({ maxLength: 64, pattern: '^[a-zA-Z0-9]+$', description: 'a swarm node id' });

export const ServerInput = Type.Object({ serverId: ServerId() });
export const NodeInput = Type.Object({ nodeId: NodeId(), serverId: ServerId() });
export const JoinInput = Type.Object({
  serverId: Id(),
  managerServerId: Type.Optional(Nullable(Type.String({ maxLength: 255, description: "the server whose swarm it joins; null or absent: this machine's" }))),
  role: Type.Union([Type.Literal('worker'), Type.Literal('manager')]),
  shared: Type.Optional(
    Type.Boolean({
      description:
        "this machine's swarm only: true (the default) — every organization's tasks may run on the node; false — the instance operators' organization's alone. A server's swarm is its organization's own: true is refused there",
    }),
  ),
});
export type JoinInput = Static<typeof JoinInput>;

/** One line of `docker node ls --format '{{json .}}'`. */
export const NodeLine = Type.Object({
  Availability: Type.String(),
  EngineVersion: Type.String(),
  Hostname: Type.String(),
  ID: Type.String(),
  ManagerStatus: Type.String(),
  Self: Type.Boolean(),
  Status: Type.String(),
  TLSStatus: Type.String(),
});
export type NodeLine = Static<typeof NodeLine>;

/** The engine's node object (GET /nodes/{id}), as the engine answers it. */
export const EngineNode = Type.Object(
  {
    ID: Type.String(),
    Version: Type.Object({ Index: Type.Integer() }),
    CreatedAt: Type.String(),
    UpdatedAt: Type.String(),
    Spec: Type.Object({}, { additionalProperties: true }),
    Description: Type.Object({}, { additionalProperties: true }),
    Status: Type.Object({}, { additionalProperties: true }),
    ManagerStatus: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true },
);

/** Where a service's task runs (Berth's addition to each getNodeApps entry). */
export const TaskNode = Type.Object({ nodeId: Type.String(), hostname: Type.String(), state: Type.String() });

/** One line of `docker service ls --format '{{json .}}'`, with the nodes its tasks run on. */
export const NodeApp = Type.Object({ ID: Type.String(), Image: Type.String(), Mode: Type.String(), Name: Type.String(), Ports: Type.String(), Replicas: Type.String(), nodes: Type.Array(TaskNode) });
export type NodeApp = Static<typeof NodeApp>;

/** The peer's addWorker/addManager answer; the token is never in it. */
export const JoinCommand = Type.Object({
  command: Type.String({ description: 'docker swarm join with the token replaced by <use cluster.joinServer>' }),
  version: Type.String({ description: "the manager engine's version" }),
});

export const Joined = Type.Object({
  nodeId: Type.String({ description: 'the swarm node id of the joined server' }),
  serverId: Type.String(),
  managerServerId: Nullable(Type.String()),
  role: Type.Union([Type.Literal('worker'), Type.Literal('manager')]),
  advertiseAddr: Type.String({ description: 'the address the server advertises, taken from its own interfaces (the route to the manager)' }),
});
export type Joined = Static<typeof Joined>;

/** Where a drained task went. */
export const MovedTask = Type.Object({
  service: Type.String(),
  taskId: Type.String({ description: 'the task that ran on the removed node' }),
  to: Nullable(Type.Object({ taskId: Type.String(), nodeId: Type.String(), hostname: Type.String() })),
});
export const Removed = Type.Object({
  removed: Type.Boolean(),
  nodeId: Type.String(),
  hostname: Type.String(),
  moved: Type.Array(MovedTask, { description: "each task that ran on the node, and the task that replaced it on another node (null for a global service's task, which is not replaced)" }),
});
export type Removed = Static<typeof Removed>;
