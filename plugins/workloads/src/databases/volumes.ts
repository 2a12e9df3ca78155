// Where a database keeps its data: a named volume that belongs to its record.

/**
 * The data volume of a database created since volumes are labelled: named after the record id,
 * so no appName can lead to another record's data, and `berth-*`, which users' mounts may not name.
 */
export const dataVolumeOf = (kind: string, id: string) => `berth-${kind}-${id}-data`;

/** Whether the record's volume was adopted at upgrade (made by Swarm, unlabelled) rather than created with labels. */
export const adoptedVolume = (row: { id: string; dataVolume: string }, kind: string) => row.dataVolume !== dataVolumeOf(kind, row.id);
