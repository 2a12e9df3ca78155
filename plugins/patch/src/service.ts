// The patches as the workload kit reads them (workloadPatches): applied to a workload's fresh
// checkout before its build, and dropped with the workload. Also what patch.* shares: the kinds
// patches may belong to, a patch as the API answers it, and the checkouts kept to read and edit
// patches on (dataDir/patch-repos/<kind>/<id>), fetched through the workload's own source. No
// Fastify types; patch.* for a caller is requests.ts.
import { randomBytes } from 'node:crypto';
import { mkdir, realpath, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { iso, type Cradle, type EntityManager } from '@berth/core';
import type { CheckoutIo, WorkloadPatches, WorkloadRef } from '@berth/plugin-workloads';
import { Patch, type PatchRow } from './entities.ts';
import { applyPatch, PatchFailure } from './paths.ts';
import type { PatchKind, PatchView } from './schemas.ts';

/** How long fetching a checkout for patch.ensureRepo may take. */
const FETCH_TIMEOUT_MS = 10 * 60_000;

export class PatchService implements WorkloadPatches {
  readonly #cradle: () => Cradle;
  /** The fetches under way, by workload. */
  readonly #fetching = new Map<string, Promise<string | null>>();

  constructor(cradle: () => Cradle) {
    this.#cradle = cradle;
  }

  /** The registered kinds whose deploys build a checkout and patch it first (WorkloadKind.checkout). */
  kinds(): PatchKind[] {
    return this.#cradle()
      .workloads.kinds()
      .filter(k => typeof k.checkout === 'function')
      .map(k => ({ kind: k.kind, idField: k.idField, label: k.label }));
  }

  /** The patch as the API answers it: its content opened, its workload under its kind's id field (null under the others'). */
  view(row: PatchRow): PatchView {
    const owners = Object.fromEntries(this.kinds().map(k => [k.idField, k.kind === row.serviceType ? row.serviceId : null]));
    return {
      patchId: row.patchId,
      type: row.type,
      filePath: row.filePath,
      enabled: row.enabled,
      content: this.#cradle().secrets.openText(row.content),
      createdAt: iso(row.createdAt)!,
      updatedAt: iso(row.updatedAt ?? null),
      ...owners,
    };
  }

  /** Where every checkout is kept. */
  get reposDir(): string {
    return path.join(this.#cradle().config.dataDir, 'patch-repos');
  }

  /** Where the workload's checkout is kept (kind: a registered wire name, id: its record's). */
  repoDir(kind: string, id: string): string {
    return path.join(this.reposDir, kind, id);
  }

  /**
   * A fresh checkout of the workload's repository, fetched by its kind as its deploys fetch it, in
   * place of the one before (which stays until the new one is complete); answers its path, or null
   * when the workload's source is no repository.
   */
  fetchRepo(workload: WorkloadRef): Promise<string | null> {
    // A fetch of the same workload already under way is joined: it is as fresh, and two would race to take the checkout's place.
    const key = `${workload.kind}/${workload.id}`;
    let fetching = this.#fetching.get(key);
    if (!fetching) {
      // Its own unit of work: a clone may take minutes, and holds no request's transaction open meanwhile.
      fetching = this.#fetch(workload, this.#cradle().orm.em.fork() as EntityManager).finally(() => this.#fetching.delete(key));
      this.#fetching.set(key, fetching);
    }
    return fetching;
  }

  async #fetch(workload: WorkloadRef, em: EntityManager): Promise<string | null> {
    const kind = this.#cradle().workloads.kind(workload.kind);
    if (!kind?.checkout) return null;
    const fetching = path.join(this.reposDir, '.fetching', randomBytes(12).toString('hex'));
    await mkdir(fetching, { recursive: true, mode: 0o700 });
    const redacted: string[] = [];
    const io: CheckoutIo = { em, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), log: () => {}, redact: value => void redacted.push(value) };
    try {
      if (!(await kind.checkout(workload.id, fetching, io))) return null;
      const target = this.repoDir(workload.kind, workload.id);
      await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      await rm(target, { recursive: true, force: true });
      await rename(fetching, target);
      return target;
    } catch (e) {
      // The source's message is fit for the deployment log; a value it was told to hide stays hidden here too.
      if (e instanceof Error) for (const value of redacted) if (value) e.message = e.message.split(value).join('******');
      throw e;
    } finally {
      await rm(fetching, { recursive: true, force: true });
    }
  }

  /** Removes what fetches cut short by a stop left behind (at start, when none runs). */
  async removeUnfinished(): Promise<void> {
    await rm(path.join(this.reposDir, '.fetching'), { recursive: true, force: true });
  }

  // ------------------------------------------------------------ WorkloadPatches
  async apply(workload: { kind: string; id: string }, checkoutDir: string, io: { em: EntityManager; log(line: string): void }): Promise<void> {
    const rows = await io.em.find(Patch, { serviceType: workload.kind, serviceId: workload.id, enabled: true }, { orderBy: { filePath: 'asc' } });
    if (!rows.length) return;
    io.log(`Applying ${rows.length} file patch(es)`);
    const root = await realpath(checkoutDir);
    for (const row of rows) {
      let done: string;
      try {
        done = await applyPatch(root, row.type, row.filePath, this.#cradle().secrets.openText(row.content));
      } catch (e) {
        const why = e instanceof PatchFailure ? e.message : ((e as NodeJS.ErrnoException).code ?? (e as Error).message);
        throw new Error(`The patch of ${row.filePath} (${row.type}) could not be applied: ${why}`);
      }
      io.log(`Patched ${row.filePath} (${row.type}): ${done === 'absent' ? 'not in the checkout, nothing to delete' : done}`);
    }
  }

  async removeForWorkload(kind: string, id: string, em: EntityManager): Promise<void> {
    await em.nativeDelete(Patch, { serviceType: kind, serviceId: id });
    await rm(this.repoDir(kind, id), { recursive: true, force: true });
  }
}
