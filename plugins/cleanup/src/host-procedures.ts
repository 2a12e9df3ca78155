// The peer's settings.* that read a host or care for its logs: the engine's disk usage and the
// infrastructure's health (this machine: its operators), the GPU status and setup of this machine
// or of a server of the caller's organization, and the access log cleanup's schedule.
import { Type, router, type ProcedureContext } from '@berth/core';
import { diskUsageRows, databaseHealth, gpuSetupAnswer, gpuStatus, proxyHealth, type EngineDf } from './host-status.ts';
import { readDf } from './plan.ts';
import { DiskUsageRow, GpuSetup, GpuStatus, InfrastructureHealth, LogCleanupInput, LogCleanupStatus } from './schemas.ts';

const settings = router('settings', 'instance');
const onHost = router('settings', { host: 'serverId' });
const ServerInput = Type.Object({ serverId: Type.Optional(Type.String({ maxLength: 255, description: "A server of the caller's organization; absent: Berth's own machine (its operators only)" })) });

/** The GPU status of the host the input names (after the organization check). */
async function gpuOf(serverId: string | undefined, ctx: ProcedureContext) {
  const { cleanup, hosts } = ctx.cradle;
  const id = await cleanup.authorize(serverId, ctx.principal);
  const where = id ? `server ${id}` : "Berth's own machine";
  const status = await gpuStatus(await hosts.of(id), await hosts.asIs(id), (what, fn) => hosts.call(what, fn));
  return { status, where };
}

export const hostProcedures = [
  settings.query('getDockerDiskUsage', {
    permission: 'organization.update',
    access: 'admin',
    summary:
      "The disk usage of Berth's own machine's engine, in the rows `docker system df` prints (Images, Containers, Local Volumes, Build Cache: counts, in use, size, reclaimable); sizeBytes is the exact byte count",
    input: Type.Object({}),
    output: Type.Array(DiskUsageRow),
    handler: async (_input, ctx) => {
      const { hosts } = ctx.cradle;
      const docker = await hosts.asIs(null);
      // Another df running on the engine (anyone's) is waited out, as the cleanups do.
      return diskUsageRows(await readDf<EngineDf>(docker, (what, fn) => hosts.call(what, fn), 'read the disk usage'));
    },
  }),
  settings.query('checkInfrastructureHealth', {
    permission: 'organization.update',
    access: 'admin',
    summary: "Whether Berth's database answers (postgres) and this machine's proxy service runs with a running task (traefik: the active proxy, whichever it is), each healthy or unhealthy with why",
    input: Type.Object({}),
    output: InfrastructureHealth,
    handler: async (_input, ctx) => {
      const [postgres, traefik] = await Promise.all([databaseHealth(ctx.cradle), proxyHealth(ctx.cradle)]);
      return { postgres, traefik };
    },
  }),
  onHost.query('checkGPUStatus', {
    permission: 'organization.update',
    access: 'admin',
    summary:
      'What the host says of its GPUs: the NVIDIA driver (nvidia-smi), the NVIDIA container runtime and whether Docker uses it by default, the GPUs its swarm node offers, CUDA. A host without a GPU answers so (driverInstalled false, availableGPUs 0)',
    input: ServerInput,
    output: GpuStatus,
    handler: async ({ serverId }, ctx) => (await gpuOf(serverId, ctx)).status,
  }),
  onHost.mutation('setupGPU', {
    permission: 'organization.update',
    access: 'admin',
    summary:
      "Check that the host can run GPU workloads: {success: true} when its driver, runtime and swarm GPU resources are in place; otherwise 409 naming what is missing (Berth does not rewrite the Docker daemon's configuration: the answer gives the steps)",
    input: ServerInput,
    output: GpuSetup,
    handler: async ({ serverId }, ctx) => {
      const { status, where } = await gpuOf(serverId, ctx);
      return gpuSetupAnswer(status, where);
    },
  }),
  settings.query('getLogCleanupStatus', {
    permission: 'member',
    summary: "The access log cleanup's schedule (cron, UTC): at each time the proxy's access log keeps its last 1000 lines; the peer's default is daily at midnight",
    input: Type.Object({}),
    output: LogCleanupStatus,
    handler: (_input, ctx) => ctx.cradle.accessLogCleanup.status(ctx.cradle.em),
  }),
  settings.mutation('updateLogCleanup', {
    permission: 'organization.update',
    access: 'admin',
    summary: 'Set the access log cleanup’s schedule (cron, UTC), or turn it off with null (or "")',
    input: LogCleanupInput,
    output: Type.Boolean(),
    handler: async ({ cronExpression }, ctx) => {
      await ctx.cradle.accessLogCleanup.update(cronExpression, ctx.cradle.em);
      return true;
    },
  }),
];
