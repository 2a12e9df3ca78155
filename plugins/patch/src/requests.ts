// patch.*: the file patches of the caller's organization's workloads, and the checkout of a
// workload's repository to read and edit them on. A patch or workload of another organization is
// NOT_FOUND, never FORBIDDEN. Request-scoped: the caller's organization and the request's unit of
// work come from the container.
import { existsSync } from 'node:fs';
import { readdir, realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import { BerthError, badRequest, conflict, invalidField, notFound, RequestScope } from '@berth/core';
import type { WorkloadRef } from '@berth/plugin-workloads';
import { Patch, type PatchRow, type PatchType } from './entities.ts';
import { filePathProblem, PatchFailure, readRepoFile, repoTree } from './paths.ts';
import type { PatchService } from './service.ts';
import { MAX_CONTENT, type CreateInput, type PatchView, type RepoEntry, type SaveFileInput, type UpdateInput } from './schemas.ts';

/** The most files readRepoDirectories lists. */
const MAX_FILES = 50_000;

/** Registered asClass(...).scoped() as `patchRequests`; the workload kit applies patches through the singleton `workloadPatches`. */
export class PatchRequests extends RequestScope {
  get #patches() {
    return this.cradle.patches;
  }

  async create(input: CreateInput): Promise<PatchView> {
    const given = this.#patches.kinds().filter(k => input[k.idField] !== undefined && input[k.idField] !== null && input[k.idField] !== '');
    if (!given.length)
      throw badRequest(
        `Either ${this.#patches
          .kinds()
          .map(k => k.idField)
          .join(' or ')} must be provided`,
      );
    if (given.length > 1) throw invalidField(given[0]!.idField, `give one of ${given.map(k => k.idField).join(', ')}, not both`);
    const workload = await this.#workload(given[0]!.kind, String(input[given[0]!.idField]));
    return this.#patches.view(await this.#insert(workload, checkedPath(input.filePath), input.type ?? 'update', input.content, input.enabled ?? true));
  }

  async one(patchId: string): Promise<PatchView> {
    return this.#patches.view(await this.#find(patchId));
  }

  /** The workload's patches in the order a deploy applies them (by path). */
  async byEntityId(id: string, type: string): Promise<PatchView[]> {
    const workload = await this.#workload(type, id);
    const rows = await this.em.find(Patch, { serviceType: workload.kind, serviceId: workload.id, organizationId: this.organizationId }, { orderBy: { filePath: 'asc' } });
    return rows.map(r => this.#patches.view(r));
  }

  /** Changes what is given; the peer's createdAt and updatedAt are accepted and ignored. New content gets a final newline, as the peer's updates do. */
  async update(input: UpdateInput): Promise<PatchView> {
    const row = await this.#find(input.patchId);
    if (input.filePath !== undefined && input.filePath !== row.filePath) {
      await this.#assertFileFree(row.serviceType, row.serviceId, checkedPath(input.filePath));
      row.filePath = input.filePath;
    }
    if (input.type !== undefined) row.type = input.type;
    if (input.enabled !== undefined) row.enabled = input.enabled;
    if (input.content !== undefined) row.content = this.#seal(withFinalNewline(input.content));
    row.updatedAt = new Date();
    await this.em.flush();
    return this.#patches.view(row);
  }

  /** Deletes the patch; answers it as it was. */
  async remove(patchId: string): Promise<PatchView> {
    const row = await this.#find(patchId);
    const view = this.#patches.view(row);
    await this.em.nativeDelete(Patch, { patchId: row.patchId, organizationId: this.organizationId });
    return view;
  }

  async toggleEnabled(patchId: string, enabled: boolean): Promise<PatchView> {
    const row = await this.#find(patchId);
    row.enabled = enabled;
    row.updatedAt = new Date();
    await this.em.flush();
    return this.#patches.view(row);
  }

  /** Fetches the workload's repository afresh into its checkout; answers the checkout's path (what readRepoDirectories takes). */
  async ensureRepo(id: string, type: string): Promise<string> {
    const workload = await this.#workload(type, id);
    let repo: string | null;
    try {
      repo = await this.#patches.fetchRepo(workload);
    } catch (e) {
      if (e instanceof BerthError) throw e;
      throw badRequest(`The repository of ${workload.name} could not be fetched: ${(e as Error).message}`);
    }
    if (repo === null) throw badRequest(`${this.#label(type)} ${workload.name} has no repository to patch: it deploys an image or a stored file`);
    return repo;
  }

  /** The checkout's files as a tree; repoPath must be the path ensureRepo answered for this workload. */
  async readRepoDirectories(id: string, type: string, repoPath: string): Promise<RepoEntry[]> {
    const workload = await this.#workload(type, id);
    return this.#onCheckout(workload, root => {
      if (repoPath.replace(/\/+$/, '') !== this.#patches.repoDir(workload.kind, workload.id))
        throw invalidField('repoPath', 'is not the checkout of this workload: give the path patch.ensureRepo answered');
      return repoTree(root, MAX_FILES);
    });
  }

  /** The file as its patch leaves it: a patch's content, else (a delete, or an empty patch) the checkout's file. */
  async readRepoFile(id: string, type: string, filePath: string): Promise<string> {
    const workload = await this.#workload(type, id);
    const patch = await this.#byPath(workload, checkedPath(filePath));
    if (patch && patch.type !== 'delete') {
      const content = this.cradle.secrets.openText(patch.content);
      if (content) return content;
    }
    const text = await this.#onCheckout(workload, root => readRepoFile(root, filePath, MAX_CONTENT));
    if (text !== null) return text;
    if (patch?.type === 'delete') return '(not in the repository: the patch deletes it if a later commit adds it)';
    throw notFound(`File ${filePath} of the repository`);
  }

  /** Makes the file's patch, or changes the one it has (its content and type). */
  async saveFileAsPatch(input: SaveFileInput): Promise<PatchView> {
    const workload = await this.#workload(input.type, input.id);
    const filePath = checkedPath(input.filePath);
    const type = input.patchType ?? 'update';
    const existing = await this.#byPath(workload, filePath);
    if (!existing) return this.#patches.view(await this.#insert(workload, filePath, type, input.content, true));
    existing.content = this.#seal(withFinalNewline(input.content));
    existing.type = type;
    existing.updatedAt = new Date();
    await this.em.flush();
    return this.#patches.view(existing);
  }

  /** Makes the file's patch a delete (its content emptied), or a new delete patch. */
  async markFileForDeletion(id: string, type: string, filePath: string): Promise<PatchView> {
    const workload = await this.#workload(type, id);
    const existing = await this.#byPath(workload, checkedPath(filePath));
    if (!existing) return this.#patches.view(await this.#insert(workload, filePath, 'delete', '', true));
    existing.type = 'delete';
    existing.content = '';
    existing.updatedAt = new Date();
    await this.em.flush();
    return this.#patches.view(existing);
  }

  /**
   * Removes the checkouts of the organization's workloads (those on the server serverId names, with
   * one; all of them, and those whose workload is gone, without); patches stay, and a deploy needs
   * no checkout. Answers true.
   */
  async cleanPatchRepos(serverId?: string): Promise<boolean> {
    if (serverId) await this.cradle.workloads.assertServer(serverId, this.organizationId);
    for (const { kind } of this.#patches.kinds()) {
      const dir = path.join(this.#patches.reposDir, kind);
      const ids = existsSync(dir) ? await readdir(dir) : [];
      for (const id of ids) {
        const workload = await this.cradle.workloads.kind(kind)?.find(id, this.em);
        const ours = workload ? workload.organizationId === this.organizationId && (!serverId || workload.serverId === serverId) : !serverId;
        if (ours) await rm(path.join(dir, id), { recursive: true, force: true });
      }
    }
    return true;
  }

  // ------------------------------------------------------------ helpers
  /** One of the organization's patches (NOT_FOUND otherwise). */
  #find(patchId: string): Promise<PatchRow> {
    return this.owned(Patch, { patchId }, 'Patch');
  }

  /** The workload of a kind patches may belong to, if it is the organization's (NOT_FOUND otherwise, as for a kind not served). */
  #workload(type: string, id: string): Promise<WorkloadRef> {
    if (!this.#patches.kinds().some(k => k.kind === type)) throw notFound(type);
    return this.cradle.workloads.owner(type, id, this.organizationId, this.em);
  }

  #label(type: string): string {
    return this.#patches.kinds().find(k => k.kind === type)?.label ?? type;
  }

  #byPath(workload: WorkloadRef, filePath: string): Promise<PatchRow | null> {
    return this.em.findOne(Patch, { serviceType: workload.kind, serviceId: workload.id, filePath, organizationId: this.organizationId });
  }

  async #insert(workload: WorkloadRef, filePath: string, type: PatchType, content: string, enabled: boolean): Promise<PatchRow> {
    await this.#assertFileFree(workload.kind, workload.id, filePath);
    const row = this.em.create(Patch, {
      type,
      filePath,
      enabled,
      content: this.#seal(type === 'delete' ? '' : content),
      serviceType: workload.kind,
      serviceId: workload.id,
      organizationId: this.organizationId,
      createdAt: new Date(),
      updatedAt: null,
    });
    await this.em.flush();
    return row;
  }

  /** A file has one patch per workload (a race past this check is the unique index: 409 too). */
  async #assertFileFree(kind: string, id: string, filePath: string): Promise<void> {
    if (await this.em.count(Patch, { serviceType: kind, serviceId: id, filePath })) throw conflict(`${filePath} already has a patch in this workload: change that one`);
  }

  #seal(content: string): string {
    return this.cradle.secrets.sealText(content);
  }

  /** Runs `read` on the workload's checkout (its real path); NOT_FOUND before ensureRepo made it, 400 for what the checkout refuses. */
  async #onCheckout<T>(workload: WorkloadRef, read: (root: string) => Promise<T>): Promise<T> {
    const repo = this.#patches.repoDir(workload.kind, workload.id);
    if (!existsSync(repo)) throw new BerthError('NOT_FOUND', `${workload.name} has no checkout yet: patch.ensureRepo fetches it`);
    try {
      return await read(await realpath(repo));
    } catch (e) {
      if (e instanceof PatchFailure) throw badRequest(e.message);
      // What the file system refuses in a repository's own files (a name or link it cannot follow): the checkout's, not Berth's.
      const code = (e as NodeJS.ErrnoException).code;
      if (code && !(e instanceof BerthError)) throw badRequest(`The checkout could not be read there (${code})`);
      throw e;
    }
  }
}

/** The path, if it names a file of a repository (400 naming filePath otherwise). */
function checkedPath(filePath: string): string {
  const problem = filePathProblem(filePath);
  if (problem) throw invalidField('filePath', problem);
  return filePath;
}

/** The peer's updates end the content with a newline. */
const withFinalNewline = (content: string) => (content && !content.endsWith('\n') ? `${content}\n` : content);

declare module '@berth/core' {
  interface Cradle {
    /** patch.* for the current request's caller (request scope only). */
    patchRequests: PatchRequests;
    /** The patch plugin's service (kinds, views, checkouts); the kit sees it as workloadPatches. */
    patches: PatchService;
  }
}
