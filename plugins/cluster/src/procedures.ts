// swarm.* (the peer's node listings) and cluster.* (the peer's operations on the swarm, and Berth's
// joinServer). This machine's swarm (no serverId) is the instance operators'; a server's is its
// organization's: reads are any member's, changing the swarm is an admin's.
import { Type, router } from '@berth/core';
import { EngineNode, JoinCommand, JoinInput, Joined, NodeApp, NodeInput, NodeLine, Removed, ServerInput } from './schemas.ts';

const swarm = router('swarm', { host: 'serverId' });
const cluster = router('cluster', { host: 'serverId' });

export const clusterProcedures = [
  swarm.query('getNodes', {
    permission: 'docker.read',
    summary: "The nodes of this machine's swarm or a server's (serverId), as `docker node ls` lists them; an engine that is no swarm manager is refused with its reason",
    input: ServerInput,
    output: Type.Array(NodeLine),
    handler: ({ serverId }, ctx) => ctx.cradle.clusterRequests.nodeLines(serverId),
  }),
  swarm.query('getNodeInfo', {
    permission: 'docker.read',
    summary: 'One node of the swarm as the engine describes it (`docker node inspect`)',
    input: NodeInput,
    output: EngineNode,
    handler: ({ nodeId, serverId }, ctx) => ctx.cradle.clusterRequests.node(nodeId, serverId),
  }),
  swarm.query('getNodeApps', {
    permission: 'docker.read',
    // Lists only the caller's own services (and the nodes they run on), wherever they run.
    scope: 'organization',
    summary: "The organization's services on the swarm as `docker service ls` lists them, each with the nodes its running tasks are on (nodes: nodeId, hostname, state)",
    input: ServerInput,
    output: Type.Array(NodeApp),
    handler: ({ serverId }, ctx) => ctx.cradle.clusterRequests.apps(serverId),
  }),
  cluster.query('getNodes', {
    permission: 'docker.read',
    summary: "The nodes of this machine's swarm or a server's, as the engine answers them",
    input: ServerInput,
    output: Type.Array(EngineNode),
    handler: ({ serverId }, ctx) => ctx.cradle.clusterRequests.nodes(serverId),
  }),
  cluster.query('addWorker', {
    permission: 'server.create',
    summary: 'The command that joins a worker to the swarm, with the token replaced by <use cluster.joinServer>: Berth joins servers itself and answers no token',
    input: ServerInput,
    output: JoinCommand,
    handler: ({ serverId }, ctx) => ctx.cradle.clusterRequests.joinCommand(serverId),
  }),
  cluster.query('addManager', {
    permission: 'server.create',
    summary: 'The command that joins a manager to the swarm, with the token replaced by <use cluster.joinServer>: Berth joins servers itself and answers no token',
    input: ServerInput,
    output: JoinCommand,
    handler: ({ serverId }, ctx) => ctx.cradle.clusterRequests.joinCommand(serverId),
  }),
  cluster.mutation('joinServer', {
    permission: 'server.create',
    // Joining this machine's swarm (no managerServerId), in either role, is its operators' alone.
    scope: { host: 'managerServerId' },
    summary:
      "Joins a server to the swarm of another server (managerServerId) or of this machine (null) as a worker or a manager, over the server's own connection, advertising the address of its interface that routes to the manager; the join token is never answered or logged and is rotated after the join. Refused (409, with the reason) when the manager advertises a loopback address",
    input: JoinInput,
    output: Joined,
    handler: (input, ctx) => ctx.cradle.clusterRequests.join(input),
  }),
  cluster.mutation('removeWorker', {
    permission: 'server.delete',
    summary: 'Drains a worker node, waits until its tasks run on other nodes, then removes it from the swarm; answers where each task went. Its server record stays',
    input: NodeInput,
    output: Removed,
    handler: ({ nodeId, serverId }, ctx) => ctx.cradle.clusterRequests.removeWorker(nodeId, serverId),
  }),
];
