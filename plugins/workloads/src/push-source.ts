// The push side of a kind whose records keep `sourceType`, `refreshToken`, a sealed
// `webhookSecret` and their settings in `settings` (JSON), as applications and compose stacks do:
// the lookups the hooks make (by refresh token, by id, by the git provider connection a GitHub
// App's push names) and the deployment a push queues.
import type { Cradle, EntityManager } from '@berth/core';
import type { PushSource, PushTarget, WorkloadRef } from './registry.ts';

interface PushRow {
  sourceType: string;
  refreshToken?: string | null;
  webhookSecret?: string | null;
  settings: Record<string, unknown>;
}

export interface PushRecords<Row extends PushRow> {
  findRef(id: string, em: EntityManager): Promise<WorkloadRef | null>;
  /** The record's settings with their defaults. */
  settingsOf(row: Row): Record<string, unknown>;
}

export function recordPushSource<Row extends PushRow>(o: {
  kind: string;
  hookPath: string;
  /** The kind's entity and its id property. */
  entity: unknown;
  idKey: string;
  records: PushRecords<Row>;
  cradle: () => Cradle;
}): PushSource {
  // cast: the kind's entity is one of MikroORM's defined entities; the filters name its own columns.
  const find = (where: Record<string, unknown>, em: EntityManager) => em.findOne(o.entity as never, where as never) as Promise<Row | null>;
  const targetOf = async (row: Row, em: EntityManager): Promise<PushTarget | null> => {
    const ref = await o.records.findRef((row as unknown as Record<string, string>)[o.idKey]!, em); // cast: idKey is the row's id property
    if (!ref) return null;
    const webhookSecret = row.webhookSecret ? o.cradle().secrets.decrypt(row.webhookSecret) : null;
    return { workload: ref, fields: { sourceType: row.sourceType, ...o.records.settingsOf(row) }, webhookSecret, refreshToken: row.refreshToken ?? null };
  };
  return {
    hookPath: o.hookPath,
    byRefreshToken: async (refreshToken, em) => {
      const row = await find({ refreshToken }, em);
      return row && targetOf(row, em);
    },
    byId: async (id, em) => {
      const row = await find({ [o.idKey]: id }, em);
      return row && targetOf(row, em);
    },
    byConnection: async (sourceType, connectionField, connectionIds, em) => {
      if (!connectionIds.length) return [];
      // cast: as above
      const rows = (await em.find(o.entity as never, { sourceType, settings: { [connectionField]: { $in: connectionIds } } } as never)) as Row[];
      const targets = await Promise.all(rows.map(r => targetOf(r, em)));
      return targets.filter((t): t is PushTarget => t !== null);
    },
    setWebhookSecret: async (id, secret, em) => {
      const row = await find({ [o.idKey]: id }, em);
      if (!row) return;
      row.webhookSecret = o.cradle().secrets.encrypt(secret);
      await em.flush();
    },
    deploy: async (workload, run, em) => {
      const request = { targetType: o.kind, targetId: workload.id, organizationId: workload.organizationId, serverId: workload.serverId, action: 'deploy', ...run };
      return (await o.cradle().deployments.enqueue(request, em)).deploymentId;
    },
  };
}
