// network.* — user networks of the caller's organization, on this machine or one of its servers:
// the peer's router. Every procedure acts on the organization's own records and networks
// (organization scope); this machine's engine is shared, and what is on it is told apart by labels.
import { router, Type } from '@berth/core';
import { CreateInput, EngineNetwork, ImportInput, ImportResult, NetworkIdInput, NetworkView, ServerInput, SyncView } from './schemas.ts';

const network = router('network', 'organization');

export const networkProcedures = [
  network.query('all', {
    permission: 'member',
    summary: "The organization's networks on this machine, or on the server serverId names, newest first",
    input: ServerInput,
    output: Type.Array(NetworkView),
    handler: ({ serverId }, ctx) => ctx.cradle.networkRequests.all(serverId),
  }),
  network.query('one', {
    permission: 'member',
    summary: 'A network of the organization',
    input: NetworkIdInput,
    output: NetworkView,
    handler: ({ networkId }, ctx) => ctx.cradle.networkRequests.one(networkId),
  }),
  network.mutation('create', {
    permission: 'member',
    summary: 'A bridge or overlay network on this machine or a server of the organization, made with Berth’s labels; workloads join it by name (networkSwarm, a compose file’s external network)',
    description:
      'On this machine only the instance operators may choose its addresses (ipam.config) or IPAM driver. A name the engine or Berth keeps (bridge, host, none, ingress, docker_gwbridge, the platform network, berth-org-*) is refused, and so is a name already taken on the host (409).',
    input: CreateInput,
    output: NetworkView,
    handler: (input, ctx) => ctx.cradle.networkRequests.create(input),
  }),
  network.mutation('remove', {
    permission: 'member',
    summary: "Removes the record and its network from its host (409 while services or containers use it); a network of that name that is not the record's is left alone",
    input: NetworkIdInput,
    output: NetworkView,
    handler: ({ networkId }, ctx) => ctx.cradle.networkRequests.remove(networkId),
  }),
  network.query('inspect', {
    permission: 'member',
    summary: "The engine's own answer for the record's network (404 when it is not on its host, 409 when that name is another network's)",
    input: NetworkIdInput,
    output: EngineNetwork,
    handler: ({ networkId }, ctx) => ctx.cradle.networkRequests.inspect(networkId),
  }),
  network.mutation('import', {
    permission: 'member',
    summary: 'Takes back networks Berth made for this organization on the host that no record names (network.networksToSync lists them); each other name is answered with why not',
    input: ImportInput,
    output: ImportResult,
    handler: (input, ctx) => ctx.cradle.networkRequests.import(input),
  }),
  network.mutation('recreate', {
    permission: 'member',
    summary: 'Makes the record’s network again on its host when it is gone; answers the record (nothing changes when the network is there)',
    input: NetworkIdInput,
    output: NetworkView,
    handler: ({ networkId }, ctx) => ctx.cradle.networkRequests.recreate(networkId),
  }),
  network.query('networksToSync', {
    permission: 'member',
    summary: 'What to sync on a host: networks Berth made for this organization that no record names (importable), and records whose network is gone (missing)',
    input: ServerInput,
    output: SyncView,
    handler: ({ serverId }, ctx) => ctx.cradle.networkRequests.networksToSync(serverId),
  }),
];
