// server.* — the remote servers of the caller's organization. No answer carries a private key.
// (setup, validate, security, publicIp, getServerTime, getDefaultCommand, setupMonitoring and
// getServerMetrics come with the server-setup operations.)
import { Type, router, type TSchema } from '@berth/core';
import { BuildsConcurrencyInput, CreateInput, ServerDetail, ServerForPermissions, ServerIdInput, ServerListItem, ServerView, UpdateInput } from './schemas.ts';

const server = router('server', 'organization');

/** Made once every plugin is set up: server.one joins the deployments as deployment.* answers them. */
export const serverProcedures = (deploymentView: () => TSchema) => () => {
  const Detail = ServerDetail(deploymentView());
  return [
    server.mutation('create', {
      permission: 'server.create',
      summary: 'Add a server: its address, SSH port, login and key (sshKeyId, null for none yet); hostKeyFingerprint pins its host key before first use, else the first key it presents is pinned',
      input: CreateInput,
      output: ServerView,
      handler: (input, ctx) => ctx.cradle.serverRequests.create(input),
    }),
    server.query('one', {
      permission: 'server.read',
      summary: 'A server of the organization with its own deployments and its key (never the private half), and the pinned host key',
      input: ServerIdInput,
      output: Detail,
      handler: ({ serverId }, ctx) => ctx.cradle.serverRequests.one(serverId),
    }),
    server.query('all', {
      permission: 'server.read',
      summary: 'Every server of the organization, newest first, each with the number of workloads on it (totalSum)',
      input: Type.Object({}),
      output: Type.Array(ServerListItem),
      handler: (_input, ctx) => ctx.cradle.serverRequests.all(),
    }),
    server.query('count', {
      permission: 'member',
      summary: 'How many servers the organization has',
      input: Type.Object({}),
      output: Type.Integer(),
      handler: (_input, ctx) => ctx.cradle.serverRequests.count(),
    }),
    server.query('withSSHKey', {
      permission: 'server.read',
      summary: 'The deploy servers that have a key, newest first',
      input: Type.Object({}),
      output: Type.Array(ServerView),
      handler: (_input, ctx) => ctx.cradle.serverRequests.ofType('deploy'),
    }),
    server.query('buildServers', {
      permission: 'server.read',
      summary: 'The build servers that have a key, newest first',
      input: Type.Object({}),
      output: Type.Array(ServerView),
      handler: (_input, ctx) => ctx.cradle.serverRequests.ofType('build'),
    }),
    server.query('allForPermissions', {
      permission: 'member.update',
      summary: 'Every server of the organization (id, name, address, type), for granting members access',
      input: Type.Object({}),
      output: Type.Array(ServerForPermissions),
      handler: (_input, ctx) => ctx.cradle.serverRequests.forPermissions(),
    }),
    server.mutation('update', {
      permission: 'server.create',
      summary: 'Change a server; a new address, port, login, key or hostKeyFingerprint closes its connection (pinning hostKeyFingerprint accepts a changed host key)',
      input: UpdateInput,
      output: ServerView,
      handler: (input, ctx) => ctx.cradle.serverRequests.update(input),
    }),
    server.mutation('updateBuildsConcurrency', {
      permission: 'server.create',
      summary: 'How many deployments run at once on the server (1 to 100)',
      input: BuildsConcurrencyInput,
      output: ServerView,
      handler: ({ serverId, buildsConcurrency }, ctx) => ctx.cradle.serverRequests.updateBuildsConcurrency(serverId, buildsConcurrency),
    }),
    server.mutation('remove', {
      permission: 'server.delete',
      summary: 'Delete a server; refused (409, listing them) while workloads live on it; answers it as it was',
      input: ServerIdInput,
      output: Detail,
      handler: ({ serverId }, ctx) => ctx.cradle.serverRequests.remove(serverId),
    }),
  ];
};
