// The cleanup operations' input and answers (TypeBox).
import { Type, type Static, type TSchema } from '@berth/core';
import { STEPS } from './plan.ts';

const Bytes = () => Type.Integer({ minimum: 0 });

export const CleanupInput = Type.Object({
  serverId: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "The server to clean; absent: Berth's own machine (its operators only)" })),
  dryRun: Type.Optional(Type.Boolean({ description: 'Answer what the cleanup would remove, per step, and remove nothing' })),
});
export type CleanupInput = Static<typeof CleanupInput>;

export const DockerCleanupInput = Type.Object({ enableDockerCleanup: Type.Boolean(), serverId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) });

export const CleanupReport = Type.Object(
  {
    serverId: Type.Union([Type.String(), Type.Null()]),
    steps: Type.Array(Type.Object({ step: Type.Enum([...STEPS]), objects: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), bytes: Bytes() })), bytes: Bytes() })),
    bytes: Bytes(),
    diskUsage: Type.Object(
      { images: Bytes(), containers: Bytes(), volumes: Bytes(), builder: Bytes() },
      { description: 'docker system df now: bytes of the layers, the containers, the volumes, the build cache' },
    ),
  },
  { description: 'The dry run: per step what would be removed and the bytes it holds' },
);

/** The peer's answer, or the report when dryRun. */
export const orReport = <T extends TSchema>(peer: T) => Type.Union([peer, CleanupReport]);

export const Scheduled = Type.Object({ status: Type.String(), message: Type.String() });

/** One row of `docker system df`, with the peer's names. */
export const DiskUsageRow = Type.Object({
  type: Type.Enum(['Images', 'Containers', 'Local Volumes', 'Build Cache']),
  totalCount: Type.Integer({ minimum: 0 }),
  active: Type.Integer({ minimum: 0 }),
  size: Type.String({ description: 'as the Docker CLI prints it (decimal units): "765.7MB"' }),
  reclaimable: Type.String({ description: 'what a prune would free, with its share of size: "512MB (66%)"' }),
  sizeBytes: Bytes(),
});

const ServiceHealth = Type.Object({ status: Type.Enum(['healthy', 'unhealthy']), message: Type.Optional(Type.String({ description: 'why it is unhealthy' })) });
export const InfrastructureHealth = Type.Object({
  postgres: ServiceHealth,
  traefik: Type.Object(ServiceHealth.properties, { description: "this machine's proxy, whichever provider is active (the peer's name)" }),
});

export const GpuStatus = Type.Object({
  driverInstalled: Type.Boolean(),
  driverVersion: Type.Optional(Type.String()),
  gpuModel: Type.Optional(Type.String()),
  runtimeInstalled: Type.Boolean({ description: 'nvidia-container-runtime is on the host' }),
  runtimeConfigured: Type.Boolean({ description: 'Docker knows the nvidia runtime and uses it by default' }),
  cudaSupport: Type.Boolean(),
  cudaVersion: Type.Optional(Type.String()),
  memoryInfo: Type.Optional(Type.String()),
  availableGPUs: Type.Integer({ minimum: 0 }),
  swarmEnabled: Type.Boolean({ description: "the host's swarm node offers GPUs (its generic resources)" }),
  gpuResources: Type.Integer({ minimum: 0 }),
});
export const GpuSetup = Type.Object({ success: Type.Boolean() });

export const LogCleanupStatus = Type.Object({ enabled: Type.Boolean(), cronExpression: Type.Union([Type.String(), Type.Null()]) });
export const LogCleanupInput = Type.Object({
  cronExpression: Type.Union([Type.String({ maxLength: 100, description: 'cron (minute hour day-of-month month day-of-week), UTC' }), Type.Null()], { description: 'null (or ""): no cleanup' }),
});
