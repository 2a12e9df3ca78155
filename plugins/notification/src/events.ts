// Which bus events a channel hears, by the toggle that turns them on. Each event is declared by
// the plugin that emits it; those whose emitter has not landed yet are declared below, each with
// the issue that will emit it (and then declare it in its own plugin). Until then the channel ×
// event matrix emits them on the bus itself.
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
    /** Issue 36 (host care) emits it. A docker cleanup finished on a host, with what it removed (organizationId null: Berth's own host, only the instance operators' organization hears it). */
    dockerCleanup: {
      organizationId: string | null;
      serverId: string | null;
      serverName: string;
      removed: { containers: number; images: number; volumes: number; reclaimedBytes: number };
      error?: string;
      at: string;
    };
    /** Issue 37 (monitoring) emits it from Berth's collector; receiveNotification (here) from the peer's agent. A server crossed a threshold (CPU or memory). */
    serverThreshold: {
      organizationId: string | null;
      serverId: string | null;
      serverName: string;
      type: 'CPU' | 'Memory' | 'Disk';
      value: number;
      threshold: number;
      message: string;
      /** Berth's collector: `normal` when the value went back below the threshold after an alert (absent: an alert). */
      state?: 'alert' | 'normal';
      at: string;
    };
    /** The monitoring plugin emits it. A workload's runtime health changed: state crashLoop, oom, unhealthy or recovered. */
    appHealth: { organizationId: string; kind: string; id: string; appName: string; state: string; message: string; at: string };
  }
}
