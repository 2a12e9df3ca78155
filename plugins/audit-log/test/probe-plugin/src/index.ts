// Test fixture of plugins/audit-log: one mutation whose change and failure the test chooses — a row
// stored and then a 404 or a 400 (a partial change), a row stored in a transaction that rolls back,
// or no row at all (a call that changes only the engine).
import { Migration, Type, badRequest, defineEntity, definePlugin, newId, notFound, p, router } from '@berth/core';

const Probe = defineEntity({ name: 'AuditProbe', tableName: 'audit_probe', properties: { id: p.string().length(32).primary(), name: p.string() } });

class ProbeInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "audit_probe" ("id" varchar(32) not null, "name" varchar(255) not null, primary key ("id"));`);
  }
}

const probe = router('auditProbe', 'organization');

export default definePlugin({
  name: 'audit-probe',
  version: '0.0.1',
  setup(berth) {
    berth.entities(Probe);
    berth.migrations({ name: 'Migration20990101000000_audit_probe', class: ProbeInit });
    berth.procedures(
      probe.mutation('change', {
        permission: 'member',
        summary: 'Stores a row named `name`, then fails as `then` says',
        input: Type.Object({
          name: Type.String({ maxLength: 64 }),
          then: Type.Union([Type.Literal('succeed'), Type.Literal('notFound'), Type.Literal('badRequest'), Type.Literal('rollBack'), Type.Literal('storeNothing')]),
        }),
        output: Type.Object({ id: Type.Union([Type.String(), Type.Null()]) }),
        handler: async ({ name, then }, ctx) => {
          const em = ctx.cradle.em;
          if (then === 'storeNothing') return { id: null };
          if (then === 'rollBack') {
            await em.transactional(async tx => {
              tx.create(Probe, { id: newId(), name });
              await tx.flush();
              throw badRequest('rolled back after the row was stored');
            });
          }
          const row = em.create(Probe, { id: newId(), name });
          await em.flush();
          if (then === 'notFound') throw notFound('The probe after its row');
          if (then === 'badRequest') throw badRequest('refused after the row was stored');
          return { id: row.id };
        },
      }),
    );
  },
});
