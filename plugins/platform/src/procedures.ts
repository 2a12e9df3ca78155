// settings.* about Berth itself: its version under both names, the update check under both names,
// and updateServer, which refuses: Berth is upgraded by its operator on its machine.
import { conflict, Type, router } from '@berth/core';
import { UpdateData } from './schemas.ts';
import type { ReleaseCheck } from './service.ts';

const settings = router('settings');

export const UPGRADE_STEPS =
  "Berth does not upgrade itself from the API: on Berth's machine, stop it, bring its directory to the new release (git pull, or unpack the release), then run bash scripts/start.sh, which installs, compiles and migrates the database before it serves (a web-server backup first is wise: docs/backups.md)";

export const platformProcedures = (releases: ReleaseCheck) => {
  const version = (name: string, summary: string) => settings.query(name, { summary, input: Type.Object({}), output: Type.String(), handler: () => releases.version });
  const updateCheck = (name: string, summary: string, access: 'member' | 'admin') =>
    settings.mutation(name, { access, summary, input: Type.Object({}), output: UpdateData, handler: () => releases.check() });
  return [
    version('getPlatformVersion', "Berth's running version (the older variant's name)"),
    version('getDokployVersion', "Berth's running version (the peer's current name)"),
    updateCheck(
      'getUpdateData',
      'Whether a newer release exists: the running version compared with the newest of the release feed (releaseFeedUrl); without one, no update and nothing asked',
      'member',
    ),
    updateCheck('checkAndUpdateImage', 'As getUpdateData (the older variant’s name; admins): nothing is pulled or replaced, Berth is upgraded by its operator', 'admin'),
    settings.mutation('updateServer', {
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
