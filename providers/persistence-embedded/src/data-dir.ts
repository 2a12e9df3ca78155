// The data directory of the embedded database: one Berth at a time on it, and the files of the
// earlier embedded engine (PGlite) never opened.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { EmbeddedDatabaseError } from './embedded-postgres.ts';

/**
 * Berth's embedded database used to be PGlite, in `<dataDir>/pg`. Its files are PostgreSQL 17's
 * on-disk format inside a WebAssembly build: no server of ours can open them, so they are left
 * untouched and the start stops, saying how to carry the data over.
 */
export function refusePglite(dataDir: string): void {
  const old = path.join(dataDir, 'pg');
  if (!existsSync(old)) return;
  const kept = path.join(dataDir, 'pglite-old');
  throw new EmbeddedDatabaseError(
    `${old} holds the database of Berth's earlier embedded engine (PGlite), which this version replaced by PostgreSQL; it was not opened or changed. ` +
      `To carry its data over: move it aside (mv ${old} ${kept}), serve it on a local port with the PGlite release that wrote it ` +
      `(npx @electric-sql/pglite-socket@0.2.17 --db=${kept} --port=5499), and with Berth stopped copy it into the new embedded database: ` +
      `bash scripts/berth.sh db copy --from postgresql://postgres:postgres@127.0.0.1:5499/postgres. ` +
      `To start afresh instead, move or remove ${old}.`,
  );
}

const lockedHere = new Set<string>();

/** The start time of a process (clock ticks since boot), which a reused PID does not share. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** One Berth per embedded data directory: two servers on one cluster would corrupt it. */
export function lockDataDir(dataDir: string) {
  const file = path.join(dataDir, 'berth.pid');
  if (lockedHere.has(file)) throw new Error(`The embedded database in ${dataDir} is in use by process ${process.pid} (this one); stop it first`);
  if (existsSync(file)) {
    const [pidText, started] = readFileSync(file, 'utf8').trim().split(' ');
    const pid = Number(pidText);
    const alive = Number.isInteger(pid) && pid > 0 && pid !== process.pid && startTime(pid) !== undefined && (started === undefined || startTime(pid) === started);
    if (alive) throw new Error(`The embedded database in ${dataDir} is in use by process ${pid}; stop it first or set DATABASE_URL`);
  }
  writeFileSync(file, `${process.pid} ${startTime(process.pid) ?? ''}`.trim());
  lockedHere.add(file);
  return {
    release: () => {
      lockedHere.delete(file);
      rmSync(file, { force: true });
    },
  };
}
