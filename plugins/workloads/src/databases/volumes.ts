// Where a database keeps its data: a named volume that belongs to its record, and its files (file
// mounts) in a directory of this host.
import path from 'node:path';

/** Where a database keeps its files on this host (file mounts); appName is already a strict slug. */
export const databaseDir = (dataDir: string, appName: string) => path.join(dataDir, 'databases', appName);

/**
 * The data volume of a database created since volumes are labelled: named after the record id,
 * so no appName can lead to another record's data, and `berth-*`, which users' mounts may not name.
 */
export const dataVolumeOf = (kind: string, id: string) => `berth-${kind}-${id}-data`;

/** Whether the record's volume was adopted at upgrade (made by Swarm, unlabelled) rather than created with labels. */
export const adoptedVolume = (row: { id: string; dataVolume: string }, kind: string) => row.dataVolume !== dataVolumeOf(kind, row.id);
