import { asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { aiEntities } from './entities.ts';
import { aiMigrations } from './migrations.ts';
import { aiProcedures } from './procedures.ts';
import { AiService } from './service.ts';

export default definePlugin({
  name: 'ai',
  version: pkg.version,
  config,
  // suggest checks compose files and deploy makes stacks with domains and file mounts.
  dependencies: ['compose', 'domain', 'mounts'], // kind-names: the checks and the stacks are the compose plugin's
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const aiService = new AiService({ config: berth.config, secrets: () => cradle().secrets, providers: () => cradle().providers, outbound: () => cradle().outbound });
    berth.entities(...aiEntities);
    berth.migrations(...aiMigrations);
    berth.provide({ aiService: asValue(aiService) });
    berth.procedures(...aiProcedures);
  },
});

declare module '@berth/core' {
  interface Cradle {
    aiService: AiService;
  }
}
