// The deployment queue's configuration keys (section "deployment").
import { Type, type Static } from '@berth/core';

const DeploymentConfig = Type.Object({
  deployConcurrency: Type.Integer({
    env: 'BERTH_DEPLOY_CONCURRENCY',
    minimum: 1,
    maximum: 32,
    default: 1,
    description: "Deployments that run at once per host; one workload's deployments always run in order",
  }),
  deployTimeoutSeconds: Type.Integer({
    env: 'BERTH_DEPLOY_TIMEOUT',
    minimum: 1,
    default: 1800,
    description: 'Hard limit of one deployment job, build included; past it the job is stopped and marked error',
  }),
  deploymentsKept: Type.Integer({ env: 'BERTH_DEPLOYMENTS_KEPT', minimum: 1, maximum: 1000, default: 10, description: 'Deployments (records and logs) kept per workload; older ones are removed' }),
});
export default DeploymentConfig;
export type DeploymentSettings = Static<typeof DeploymentConfig>;

declare module '@berth/core' {
  interface BerthConfig extends DeploymentSettings {}
}
