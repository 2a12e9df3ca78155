// The push hooks' configuration keys (section "deploy-hook").
import { Type, type Static } from '@berth/core';

const DeployHookConfig = Type.Object({
  webhookToleranceSeconds: Type.Integer({
    env: 'BERTH_WEBHOOK_TOLERANCE',
    minimum: 1,
    maximum: 86400,
    default: 300,
    description: "How old a signed delivery's timestamp (Standard Webhooks: GitLab's signing token) may be; an older one is refused with 401",
  }),
  webhookDeliveriesKept: Type.Integer({
    env: 'BERTH_WEBHOOK_DELIVERIES_KEPT',
    minimum: 1,
    maximum: 10000,
    default: 100,
    description: 'Hook deliveries kept in the delivery log per workload; older ones are removed',
  }),
});
export default DeployHookConfig;
export type DeployHookSettings = Static<typeof DeployHookConfig>;

declare module '@berth/core' {
  interface BerthConfig extends DeployHookSettings {}
}
