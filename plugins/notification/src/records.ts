// A channel record as stored (secret settings sealed in one column) and as answered (the peer's
// notification with its channel's record; secrets masked; both names of the restart toggle).
import type { NotificationChannel, SecretBox } from '@berth/core';
import { iso } from '@berth/core';
import type { NotificationRow } from './entities.ts';
import { TOGGLES } from './events.ts';
import { mask } from './redact.ts';

/** Splits settings into the plain ones and the sealed secrets. */
export function sealSettings(channel: NotificationChannel, settings: Record<string, unknown>, box: SecretBox): { settings: Record<string, unknown>; secrets: string } {
  const plain: Record<string, unknown> = {};
  const secret: Record<string, unknown> = {};
  for (const key of Object.keys(channel.settings.properties)) {
    if (settings[key] === undefined) continue;
    (channel.secretFields.includes(key) ? secret : plain)[key] = settings[key];
  }
  return { settings: plain, secrets: box.encrypt(JSON.stringify(secret)) };
}

/** Every setting of the record, secrets unsealed: only for sending. */
export function settingsOf(row: NotificationRow, box: SecretBox): Record<string, unknown> {
  return { ...row.settings, ...(JSON.parse(box.decrypt(row.secrets)) as Record<string, unknown>) };
}

/** The record as answered; `relations` as in notificationView. */
/** A channel's record as answered: the fields every channel has, and each channel's id and record by its name. */
export interface NotificationView {
  notificationId: string;
  name: string;
  dokployRestart: boolean;
  notificationType: string;
  createdAt: string;
  organizationId: string;
  [field: string]: unknown;
}

export function toView(row: NotificationRow, channels: NotificationChannel[], box: SecretBox, relations: string[] | 'all' = 'all'): NotificationView {
  const joined = (c: NotificationChannel) => relations === 'all' || relations.includes(c.id);
  const own = channels.find(c => c.id === row.notificationType);
  const view: NotificationView = {
    notificationId: row.notificationId,
    name: row.name,
    ...Object.fromEntries(TOGGLES.map(t => [t, row[t]])),
    dokployRestart: row.platformRestart,
    notificationType: row.notificationType,
    createdAt: iso(row.createdAt)!,
    organizationId: row.organizationId,
  };
  for (const c of channels) {
    view[`${c.id}Id`] = c === own ? row.channelId : null;
    if (joined(c)) view[c.id] = null;
  }
  if (own && joined(own)) {
    const all = settingsOf(row, box);
    const record: Record<string, unknown> = { [`${own.id}Id`]: row.channelId };
    for (const key of Object.keys(own.settings.properties)) {
      const value = all[key] ?? (own.settings.properties[key] as { default?: unknown }).default ?? null;
      record[key] = own.secretFields.includes(key) ? mask(value) : value;
    }
    view[own.id] = record;
  }
  return view;
}
