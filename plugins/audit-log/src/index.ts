// The audit-log plugin: the table every mutating call is recorded in (through the kernel's capture,
// core/src/audit/capture.ts), its hash chain sealed after commit by a repeating job, retention with
// an anchor, auditLog.all and `berth audit verify`.
import { asValue, definePlugin, optionalService } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { AuditChain } from './chain.ts';
import { auditCommand } from './command.ts';
import { auditLogEntities } from './entities.ts';
import { auditLogMigrations } from './migrations.ts';
import { auditLogProcedures } from './procedures.ts';
import { AuditLogService } from './service.ts';
import { AuditLogSink } from './sink.ts';

const DAY_MS = 86_400_000;

export default definePlugin({
  name: 'audit-log',
  version: pkg.version,
  uses: ['workloads'], // its kinds name the peer's services (optionalService), when enabled
  config,
  commands: [auditCommand],
  setup(berth) {
    berth.entities(...auditLogEntities);
    berth.migrations(...auditLogMigrations);
    const em = () => berth.container.cradle.orm.em.fork();
    const chain = new AuditChain(em, berth.container.cradle.secrets.deriveKey('audit-log-chain'));
    let kinds: readonly string[] | undefined;
    const workloadKinds = () =>
      (kinds ??=
        optionalService(berth.container.cradle, 'workloads')
          ?.kinds()
          .map(k => k.kind) ?? []);
    berth.provide({ auditSink: asValue(new AuditLogSink(em, workloadKinds)), auditChain: asValue(chain), auditLog: asValue(new AuditLogService(chain)) });
    berth.procedures(...auditLogProcedures);
    // One process seals at a time (an advisory lock); every process may run the job.
    berth.jobs.define('audit-log.seal', async () => void (await chain.seal()), { lockLifetimeMs: 60_000 });
    berth.jobs.every('1 minute', 'audit-log.seal');
    berth.jobs.define('audit-log.prune', async () => void (await chain.prune(new Date(berth.container.cradle.clock.now() - berth.config.auditRetentionDays * DAY_MS))), { lockLifetimeMs: 600_000 });
    berth.jobs.every('1 day', 'audit-log.prune');
  },
});
