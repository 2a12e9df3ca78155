// The workload kit's configuration keys (section "workloads"): what workloads may reach of the
// host and how long a new task must keep running (swarm mode and the platform network are the
// hosts plugin's). Other plugins read them from the configuration in the container, never from
// this file.
import { Type, type Static } from '@berth/core';

export const HostAccessSchema = Type.Object(
  {
    bindMountRoots: Type.Array(Type.String({ pattern: '^/' }), {
      default: [],
      description: "Host directories below which the instance owner may bind mount (symlinks resolved; never Berth's data or install directory or a parent of them); empty = no bind mounts",
    }),
    hostNetworks: Type.Boolean({ default: false, description: 'Let the instance owner attach workloads to the host, ingress and none networks' }),
    localGit: Type.Boolean({ default: false, description: 'Let the instance owner deploy git repositories of this host (file:// URLs and paths)' }),
    // No default: a configuration written before this key resolves as it did (absent = off).
    hostSchedules: Type.Optional(
      Type.Boolean({ description: "Let the instance operators schedule scripts on this machine (the peer's dokploy-server schedules), run as Berth's own user; absent: off" }),
    ),
  },
  {
    env: 'BERTH_HOST_ACCESS',
    default: {},
    additionalProperties: false,
    description: 'What workloads may reach of the host: off unless granted, and then only to the instance owner (JSON in the environment)',
  },
);

export const WorkloadsConfig = Type.Object({
  hostAccess: HostAccessSchema,
  deploySettleSeconds: Type.Number({
    env: 'BERTH_DEPLOY_SETTLE',
    minimum: 0,
    maximum: 300,
    default: 2,
    description:
      'How long a new task must keep running before a deployment is done: a container that exits at once fails the deploy instead of passing it; 0 = done as soon as Swarm reports the task running',
  }),
});
export default WorkloadsConfig;
export type WorkloadsSettings = Static<typeof WorkloadsConfig>;
export type HostAccessPolicy = Static<typeof HostAccessSchema>;

declare module '@berth/core' {
  interface BerthConfig extends WorkloadsSettings {}
}
