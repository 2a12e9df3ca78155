// The monitoring operations, on the peer's routers: admin.setupMonitoring (this machine),
// server.setupMonitoring and server.getServerMetrics, user.getContainerMetrics,
// settings.cleanMonitoring. Made once every plugin is set up: server.setupMonitoring answers the
// server record as the server plugin declares it.
import { Type, router, schema, type Principal } from '@berth/core';
import { AppMonitoring } from './app-monitoring.ts';
import { ContainerMetric, ContainerMetricsInput, LocalMonitoring, LocalSetupInput, MetricsTokenView, ServerMetric, ServerMetricsInput, ServerSetupInput } from './schemas.ts';

/** The peer's router of readAppMonitoring. */
const APP_MONITORING_ROUTER = 'application'; // kind-names: the peer serves readAppMonitoring on this router

const org = (ctx: { cradle: { principal?: { organizationId: string } | null } }) => ctx.cradle.principal!.organizationId;
/** This machine's figures are the instance operators' alone (docs/security.md). */
const owner = (ctx: { cradle: { principal?: Principal | null; accounts: { isInstanceOperator(principal: Principal): Promise<boolean> } } }) =>
  ctx.cradle.accounts.isInstanceOperator(ctx.cradle.principal!);

export const monitoringProcedures = (serverView: () => ReturnType<typeof Type.Object>) => () => [
  router('admin', 'instance').mutation('setupMonitoring', {
    permission: 'organization.update',
    access: 'admin',
    summary:
      'Monitor this machine: Berth samples its host and containers every refreshRate seconds (no agent), keeps them retentionDays, alerts on its thresholds; getServerMetrics reads them at http://localhost:<port>/metrics with the token',
    input: LocalSetupInput,
    output: LocalMonitoring,
    handler: async ({ metricsConfig }, ctx) => ctx.cradle.monitoring.setupLocal(metricsConfig, ctx.principal.organizationId, ctx.cradle.em),
  }),
  router('server', 'organization').mutation('setupMonitoring', {
    permission: 'server.create',
    summary: 'Monitor a server: its metricsConfig stored, Berth samples it over its connection (no agent); getServerMetrics reads it at http://<ipAddress>:<port>/metrics with the token',
    input: ServerSetupInput,
    output: serverView(),
    handler: ({ serverId, metricsConfig }, ctx) => ctx.cradle.monitoring.setupServer(serverId, metricsConfig, org(ctx), ctx.cradle.em),
  }),
  router('server', 'organization').query('getServerMetrics', {
    permission: 'monitoring.read',
    summary: "A host's latest samples, oldest first, in the peer agent's shape: url names one of the organization's monitored hosts (never fetched), token is its metricsConfig.server.token",
    input: ServerMetricsInput,
    output: Type.Array(ServerMetric),
    handler: async (input, ctx) => ctx.cradle.monitoring.serverMetrics(input, org(ctx), await owner(ctx), ctx.cradle.em),
  }),
  router('user', 'organization').query('getContainerMetrics', {
    permission: 'monitoring.read',
    summary: "An application's latest container samples on a monitored host, oldest first, in the peer agent's shape (url: http://<ipAddress>:<port>, as for getServerMetrics)",
    input: ContainerMetricsInput,
    output: Type.Array(ContainerMetric),
    handler: async (input, ctx) => ctx.cradle.monitoring.containerMetrics(input, org(ctx), await owner(ctx), ctx.cradle.em),
  }),
  router(APP_MONITORING_ROUTER, 'organization').query('readAppMonitoring', {
    permission: 'monitoring.read',
    summary:
      'The latest figures (up to 288 samples: CPU, memory, network, block I/O) of the organization\'s workload named appName, on this machine or one of its servers, as the peer answers them; "dokploy" answers this machine\'s (CPU, memory, disk, network), to the instance operators only',
    input: Type.Object({ appName: schema.NonEmpty({ maxLength: 255, description: "the workload's appName, or dokploy for this machine" }) }),
    output: AppMonitoring,
    handler: async ({ appName }, ctx) => ctx.cradle.monitoring.appMonitoring(appName, org(ctx), await owner(ctx), ctx.cradle.em),
  }),
  router('user', 'organization').query('getMetricsToken', {
    permission: 'monitoring.read',
    summary:
      "This machine's monitoring as the peer's clients read it before getServerMetrics: its address and metricsConfig (its token for the instance's operators only, \"\" for anyone else); enabledFeatures false, as a self-hosted peer answers",
    input: Type.Object({}),
    output: MetricsTokenView,
    handler: async (_input, ctx) => ctx.cradle.monitoring.metricsToken(await owner(ctx), ctx.cradle.em),
  }),
  router('settings', 'organization').mutation('cleanMonitoring', {
    permission: 'organization.update',
    access: 'admin',
    summary: "Drop the stored samples of the organization's servers (and this machine's, for the instance's operators)",
    input: Type.Object({}),
    output: schema.Ok(),
    handler: async (_input, ctx) => ctx.cradle.monitoring.clean(org(ctx), await owner(ctx), ctx.cradle.em),
  }),
];
