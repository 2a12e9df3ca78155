// Database backups of a service of a compose stack (the peer's backupType "compose"): the engine
// in the service is a registered database driver (the backup's databaseType); its running
// container is found by the stack's labels and must carry the record's owner label; the
// credentials are the ones the container was started with (its environment, read through the
// engine's inspect), so nothing about them is stored with the backup. Dump, restore and the
// restore check then take the same path as the database kinds' (the workload kit's).
import type { Readable, Writable } from 'node:stream';
import { badRequest, notFound, type Cradle, type DatabaseDriver, type EntityManager } from '@berth/core';
import { dumpIn, ownerLabels, restoreIn, verifyCopy, type BackupIo, type BackupSource, type BackupTarget, type DatabaseInContainer } from '@berth/plugin-workloads';
import { Compose, type ComposeRow } from './entities.ts';
import type { ComposeDeployer } from './deployer.ts';
import { KIND } from './service.ts';

export class ComposeBackups implements BackupSource {
  readonly procedureSuffix = 'Compose';
  readonly backupType = KIND;
  readonly #deployer: ComposeDeployer;
  readonly #cradle: () => Cradle;

  constructor(deployer: ComposeDeployer, cradle: () => Cradle) {
    this.#deployer = deployer;
    this.#cradle = cradle;
  }

  /** The drivers that can say how a container of their image was started (credentialsFromEnv) and restore into a running server. */
  #drivers(): DatabaseDriver[] {
    return this.#cradle()
      .providers.all('database')
      .filter(d => d.credentialsFromEnv && !d.offlineRestore);
  }

  engines(): string[] {
    return this.#drivers().map(d => d.kind);
  }

  /** The stack's service as a database: its running container, the driver of databaseType, the credentials from the container's environment. */
  async #database(id: string, target: BackupTarget, em: EntityManager): Promise<{ row: ComposeRow; db: DatabaseInContainer; image: string | null }> {
    const row = await em.findOne(Compose, { composeId: id });
    if (!row) throw notFound('Compose');
    const driver = this.#drivers().find(d => d.kind === target.databaseType);
    if (!driver)
      throw badRequest(`databaseType "${target.databaseType}" cannot be backed up in a compose service`, [{ path: ['databaseType'], message: `must be one of: ${this.engines().join(', ')}` }]);
    if (!target.serviceName) throw badRequest('serviceName is required for a compose backup', [{ path: ['serviceName'], message: 'the service of the stack that runs the database' }]);
    const stack = await this.#deployer.stackOf(row);
    const containerId = await stack.runningContainer(target.serviceName);
    const name = `service ${target.serviceName} of ${row.appName}`;
    // Not running: the shared path fails the run and its output stream, saying so.
    const docker = await (await this.#cradle().hosts.of(row.serverId ?? null)).engine(); // the stack's host
    if (!containerId) return { row, db: { docker, containerId: null, driver, creds: driver.credentialsFromEnv!({}), name }, image: null };
    const inspected = await docker.getContainer(containerId).inspect();
    const env = Object.fromEntries((inspected.Config.Env ?? []).map(e => [e.slice(0, Math.max(0, e.indexOf('='))), e.slice(e.indexOf('=') + 1)]));
    return { row, db: { docker, containerId, driver, creds: driver.credentialsFromEnv!(env), name }, image: inspected.Image };
  }

  async dump(id: string, target: BackupTarget, out: Writable, io: BackupIo): Promise<void> {
    const { db } = await this.#database(id, target, io.em);
    await dumpIn(db, target.databaseName, out, io);
  }

  async restore(id: string, target: BackupTarget, input: Readable, io: BackupIo): Promise<void> {
    const { db } = await this.#database(id, target, io.em);
    await restoreIn(db, target.databaseName, input, io);
  }

  /** Restores into a throwaway container of the service's image, started with the service's credentials. */
  async verify(id: string, target: BackupTarget, input: Readable, io: BackupIo): Promise<string> {
    const { row, db, image } = await this.#database(id, target, io.em);
    if (!image) throw new Error(`${db.name} is not running: its image cannot be told`);
    return verifyCopy(
      db.docker,
      { image, driver: db.driver, creds: db.creds, labels: ownerLabels({ kind: KIND, id: row.composeId, organizationId: row.organizationId }), name: db.name },
      target.databaseName,
      input,
      io,
    );
  }
}
