// The relations a workload's `one` (and the peer's other record answers) carries, in the peer's
// shapes: where it lives (its environment and project), what hangs off it (mounts, ports,
// deployments: item schemas from their plugins, an empty list when a plugin is disabled) and
// the relations of namespaces Berth does not serve yet (always an empty list or null).
import Type from 'typebox';
import { Placement, optionalService, type Cradle } from '@berth/core';

/** A list of a namespace no plugin serves yet: always empty. */
export const NotServedList = (what: string) => Type.Array(Type.Object({}), { maxItems: 0, description: `${what}: empty until a plugin serves them` });
/** A relation to a namespace no plugin serves yet: always null. */
export const NotServedOne = (what: string) => Type.Null({ description: `${what}: null until a plugin serves it` });

/** The schemas of a workload's relations (made once every plugin is set up). */
export function relationSchemas(cradle: Cradle) {
  const mounts = optionalService(cradle, 'mounts');
  const ports = optionalService(cradle, 'ports');
  const deployments = optionalService(cradle, 'deployments');
  return {
    environment: Placement,
    mounts: mounts ? Type.Array(mounts.viewSchema()) : NotServedList('mounts'),
    ports: ports ? Type.Array(ports.viewSchema()) : NotServedList('ports'),
    deployments: deployments ? Type.Array(deployments.viewSchema()) : NotServedList('deployments'),
    server: NotServedOne('the remote server'),
  };
}
