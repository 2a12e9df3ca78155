// A release of a workload kept to roll back to (the peer's rollback table): the image it ran, kept
// on its engine under a rollback tag (or pushed to the workload's rollback registry), and the whole
// service it rolled out — env included, so sealed at rest. The workload is (serviceType,
// serviceId), its kind's wire name and its record's id; organizationId confines every read.
import { columns, defineEntity, p } from '@berth/core';

export const Rollback = defineEntity({
  name: 'Rollback',
  tableName: 'rollbacks',
  properties: {
    rollbackId: columns.primaryId(),
    /** The deployment that made the release. */
    deploymentId: p.string().length(32),
    serviceType: p.string().length(32),
    serviceId: p.string().length(64),
    organizationId: columns.berthId(),
    /** The server whose engine keeps the image; null: this machine. */
    serverId: p.string().length(64).nullable(),
    /** The release's number: rising, never given twice (rollbacks_version_seq, one for every workload as the peer's serial). */
    version: p.integer(),
    /** The image reference a rollback rolls out: the rollback tag on the engine, or the rollback registry's reference. */
    image: p.text(),
    /** The rollback registry the image was pushed to (its credentials are read at rollback time); null: kept on the engine. */
    registryId: p.string().length(64).nullable(),
    /** SecretBox.sealText of the service the release rolled out (JSON, registry credentials left out). */
    release: p.text(),
    createdAt: columns.createdAt(),
  },
});

export type RollbackRow = InstanceType<typeof Rollback.class>;
export const rollbackEntities = [Rollback];
