// The user networks (network.*) a workload's record names by id: an application's or database's
// networkIds, a compose service's serviceNetworks. Checked when the record is saved (records of its
// organization, on its host, of a driver it can join) and resolved to the engine's names again at
// deploy, where each network must still be on the host carrying its record's labels. The records
// are the network plugin's, reached through the hosts plugin's `userNetworks` seam.
import type Docker from 'dockerode';
import { BerthError, optionalService, type Cradle, type EntityManager } from '@berth/core';
import type { NetworkJoiner } from '@berth/plugin-hosts';

/** The ids a networkIds field holds (null and absent are none). */
export const networkIdsOf = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/**
 * The engine names of the networks `ids` name, for a workload of `joiner` (see
 * UserNetworkDirectory.joinable: every refusal names `${field}.<index>` and the id), each once.
 * `swarm`: a swarm service joins (overlay only); `docker`: deploy time, the host's engine is read.
 */
export async function joinableNetworks(cradle: Cradle, ids: unknown, joiner: NetworkJoiner, opts: { field: string; swarm: boolean; docker?: Docker }, em: EntityManager): Promise<string[]> {
  const list = networkIdsOf(ids);
  if (!list.length) return [];
  const directory = optionalService(cradle, 'userNetworks');
  if (!directory) {
    const message = `${opts.field}: user networks (network.*) are not enabled on this instance`;
    throw new BerthError('BAD_REQUEST', message, [{ path: opts.field.split('.'), message }]);
  }
  return [...new Set(await directory.joinable(list, joiner, opts, em))];
}
