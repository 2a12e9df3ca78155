// The backups plugin's configuration keys (section "backups").
import { Type, type Static } from '@berth/core';

const BackupsConfig = Type.Object({
  backupVerify: Type.Enum(['always', 'schedule', 'never'], {
    env: 'BERTH_BACKUP_VERIFY',
    default: 'always',
    description:
      "Prove backups restorable: restore a file into a throwaway container of the same kind and record the driver's check with it — after each backup (always), or on backupVerifySchedule for each backup's newest file not checked yet (schedule)",
  }),
  backupVerifySchedule: Type.String({
    env: 'BERTH_BACKUP_VERIFY_SCHEDULE',
    minLength: 1,
    maxLength: 100,
    default: '0 4 * * 0',
    description: 'With backupVerify "schedule": when the newest unchecked file of each backup is restored into a throwaway container (cron, 5 or 6 fields; default Sundays at 04:00)',
  }),
  backupTickSeconds: Type.Integer({
    env: 'BERTH_BACKUP_TICK',
    minimum: 1,
    maximum: 3600,
    default: 60,
    description: 'How often backup schedules are checked; a backup runs at the first check after its cron time',
  }),
  backupPassphrase: Type.Optional(
    Type.String({
      env: 'BERTH_BACKUP_PASSPHRASE',
      minLength: 16,
      maxLength: 1024,
      description:
        "Passphrase that encrypts the archive of Berth's own data (web-server backups: its database and the data directory's keys); never logged, never stored; absent = no web-server backups",
    }),
  ),
  backupHelperImage: Type.Optional(
    Type.String({
      env: 'BERTH_BACKUP_HELPER_IMAGE',
      minLength: 1,
      maxLength: 255,
      description:
        'Image of the container a volume is copied out of and back into (volume backups and restores); absent = the image of a workload using the volume, or else any image on the host; never pulled, never started',
    }),
  ),
});
export default BackupsConfig;
export type BackupsSettings = Static<typeof BackupsConfig>;

declare module '@berth/core' {
  interface BerthConfig extends BackupsSettings {}
}
