// Which workload kind a backup belongs to. A database kind backs itself up (backupType
// "database", its databaseType is the kind); a kind that runs databases in its services
// (compose) owns the backups of its own backupType, whose databaseType names the engine.
import type { WorkloadKind } from '@berth/plugin-workloads';

export const DATABASE_BACKUP = 'database';

/** The backupType of a kind's backups. */
export const backupTypeOf = (k: WorkloadKind): string => k.backups?.backupType ?? DATABASE_BACKUP;

/** The databaseTypes a kind backs up: the engines of its services, or itself. */
export const enginesOf = (k: WorkloadKind): string[] => k.backups?.engines?.() ?? [k.kind];

/** The kind that owns a backup (or restore) of this backupType and databaseType, if one is registered with backups. */
export function ownerKindOf(kinds: WorkloadKind[], backupType: string, databaseType: string): WorkloadKind | undefined {
  return backupType === DATABASE_BACKUP ? kinds.find(k => k.kind === databaseType && backupTypeOf(k) === DATABASE_BACKUP) : kinds.find(k => backupTypeOf(k) === backupType);
}

/** Every databaseType some kind backs up, each once. */
export const databaseTypesOf = (kinds: WorkloadKind[]): string[] => [...new Set(kinds.flatMap(enginesOf))];
