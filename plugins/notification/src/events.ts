// Which bus events a channel hears, by the toggle that turns them on. Events whose emitters have
// not landed yet (servers, cleanup, schedules, runtime health, Berth's own-data backup) are
// declared here with the payload the notification needs; each moves to its emitter's plugin
// when that one comes.
import type { BerthEvents } from '@berth/core';

/** The toggles of a channel record; `platformRestart` is the older variant's name of the peer's `dokployRestart`. */
export const TOGGLES = ['appDeploy', 'appBuildError', 'databaseBackup', 'volumeBackup', 'dokployBackup', 'platformRestart', 'dockerCleanup', 'serverThreshold', 'appHealth'] as const;
export type Toggle = (typeof TOGGLES)[number];

/** Each notified event and the toggle that subscribes to it. */
export const EVENT_TOGGLE = {
  appDeploy: 'appDeploy',
  appBuildError: 'appBuildError',
  databaseBackup: 'databaseBackup',
  volumeBackup: 'volumeBackup',
  ownDataBackup: 'dokployBackup',
  platformStart: 'platformRestart',
  dockerCleanup: 'dockerCleanup',
  serverThreshold: 'serverThreshold',
  serverUnreachable: 'serverThreshold',
  serverReachable: 'serverThreshold',
  scheduleFailed: 'appHealth',
  certificateExpiring: 'appHealth',
  certificateRenewalFailed: 'appHealth',
  appHealth: 'appHealth',
} as const satisfies Partial<Record<keyof BerthEvents, Toggle>>;
export type NotifiedEvent = keyof typeof EVENT_TOGGLE;
export const NOTIFIED_EVENTS = Object.keys(EVENT_TOGGLE) as NotifiedEvent[];

declare module '@berth/core' {
  interface BerthEvents {
    /** A backup of Berth's own data ran (no organization: every channel with dokployBackup hears it). */
    ownDataBackup: { status: 'success' | 'error'; file: string | null; error: string | null; at: string };
    /** A docker cleanup finished on a host, with what it removed (organizationId null: Berth's own host, every organization hears it). */
    dockerCleanup: { organizationId: string | null; serverId: string | null; serverName: string; removed: { containers: number; images: number; volumes: number; reclaimedBytes: number }; at: string };
    /** A server crossed a threshold (CPU or memory), from Berth's collector or the peer's monitoring agent (receiveNotification). */
    serverThreshold: { organizationId: string | null; serverId: string | null; serverName: string; type: 'CPU' | 'Memory'; value: number; threshold: number; message: string; at: string };
    /** A scheduled job failed. */
    scheduleFailed: { organizationId: string; scheduleId: string; name: string; error: string; at: string };
    /** A workload's runtime health changed (the monitoring issue's events). */
    appHealth: { organizationId: string; kind: string; id: string; appName: string; state: string; message: string; at: string };
  }
}
