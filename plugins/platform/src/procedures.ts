// settings.* about Berth itself: its version under both names, the update check under both names,
// updateServer, which refuses: Berth is upgraded by its operator on its machine; and reloadServer,
// which asks the process that started the kernel (`berth start`) to start it again.
import { badRequest, conflict, ConfigError, Type, router } from '@berth/core';
import { UpdateData } from './schemas.ts';
import type { ReleaseCheck } from './service.ts';

const settings = router('settings', 'organization');

export const UPGRADE_STEPS =
  "Berth does not upgrade itself from the API: on Berth's machine, stop it, bring its directory to the new release (git pull, or unpack the release), then run bash scripts/start.sh, which installs, compiles and migrates the database before it serves (a web-server backup first is wise: docs/backups.md)";

export const platformProcedures = (releases: ReleaseCheck) => {
  const version = (name: string, summary: string) => settings.query(name, { permission: 'member', summary, input: Type.Object({}), output: Type.String(), handler: () => releases.version });
  const updateCheck = (name: string, summary: string, access: 'member' | 'admin') =>
    settings.mutation(name, { access, permission: access === 'admin' ? 'organization.update' : 'member', summary, input: Type.Object({}), output: UpdateData, handler: () => releases.check() });
  return [
    version('getPlatformVersion', "Berth's running version (the older variant's name)"),
    version('getDokployVersion', "Berth's running version (the peer's current name)"),
    updateCheck(
      'getUpdateData',
      'Whether a newer release exists: the running version compared with the newest of the release feed (releaseFeedUrl); without one, no update and nothing asked',
      'member',
    ),
    updateCheck('checkAndUpdateImage', 'As getUpdateData (the older variant’s name; admins): nothing is pulled or replaced, Berth is upgraded by its operator', 'admin'),
    settings.mutation('reloadServer', {
      permission: 'organization.update',
      scope: 'instance',
      access: 'admin',
      summary:
        'Start Berth again with the configuration on disk (berth.config.json, the environment it was started with): it stops accepting, finishes the requests in flight, and serves again. The instance operators only; a configuration that fails is a 400 and changes nothing',
      input: Type.Object({}),
      output: Type.Boolean(),
      handler: async (_input, ctx) => {
        const { reload } = ctx.cradle;
        if (!reload) throw conflict('This instance was not started by `berth start` (scripts/start.sh), which alone can start it again: restart it through what started it');
        try {
          await reload();
        } catch (e) {
          if (e instanceof ConfigError) throw badRequest(`The configuration on disk fails, nothing was reloaded: ${e.message}`);
          throw e;
        }
        return true;
      },
    }),
    settings.mutation('updateServer', {
      permission: 'organization.update',
      access: 'admin',
      summary: 'Refused (409) with the upgrade steps: Berth is upgraded by its operator on its machine, not from the API',
      input: Type.Object({}),
      output: Type.Boolean(),
      handler: () => {
        throw conflict(UPGRADE_STEPS);
      },
    }),
  ];
};

declare module '@berth/core' {
  interface Cradle {
    /** Set by `berth start`: validates the configuration on disk, then stops the kernel and starts it again. */
    reload?: () => Promise<void>;
  }
}
