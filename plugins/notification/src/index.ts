import { asClass, asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { notificationEntities } from './entities.ts';
import { MessageRenderer } from './messages.ts';
import { notificationMigrations } from './migrations.ts';
import { NotificationOutbox } from './outbox.ts';
import { notificationProcedures } from './procedures.ts';
import { NotificationService } from './service.ts';

export type { MetricsToken, MetricsTokenDirectory } from './receive.ts';

export default definePlugin({
  name: 'notification',
  version: pkg.version,
  uses: ['monitoring', 'workloads'], // used when enabled (optionalService)
  config,
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const outbox = new NotificationOutbox({
      config: berth.config,
      orm: () => cradle().orm,
      logger: () => cradle().logger,
      secrets: cradle().secrets,
      providers: () => cradle().providers,
      renderer: new MessageRenderer(cradle, berth.config),
      outbound: () => cradle().outbound,
    });
    berth.entities(...notificationEntities);
    berth.migrations(...notificationMigrations);
    berth.provide({ notificationOutbox: asValue(outbox), notificationService: asClass(NotificationService).scoped() });
    berth.procedures(notificationProcedures(() => cradle().providers.all('notify')));
    // Subscribed before the server listens, so platformStart is heard.
    outbox.listen(berth.events);
    berth.http(app => {
      app.addHook('onClose', async () => outbox.shutdown());
    });
    berth.onStart(() => {
      if (berth.config.jobs) outbox.start();
    });
  },
});

declare module '@berth/core' {
  interface Cradle {
    notificationOutbox: NotificationOutbox;
    notificationService: NotificationService;
  }
}
