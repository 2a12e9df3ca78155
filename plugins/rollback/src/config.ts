// The rollback plugin's configuration keys.
import { Type, type Static } from '@berth/core';

const RollbackConfig = Type.Object({
  rollbacksKept: Type.Integer({
    env: 'BERTH_ROLLBACKS_KEPT',
    minimum: 0,
    maximum: 100,
    default: 5,
    description: "Releases kept per application to roll back to (rollback.rollback): each keeps its image on the application's engine until it falls out; 0 keeps none",
  }),
});
export default RollbackConfig;
export type RollbackSettings = Static<typeof RollbackConfig>;

declare module '@berth/core' {
  interface BerthConfig extends RollbackSettings {}
}
