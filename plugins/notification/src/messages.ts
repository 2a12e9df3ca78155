// What each event says: a title, the fields that say what it concerns and where to look
// (workload, environment, project, the error) and a link to Berth's log operation. Rendered once
// per event, before its deliveries are stored; every channel shows the same message.
import { optionalService, type BerthConfig, type BerthEvents, type Cradle, type EntityManager, type NotificationMessage } from '@berth/core';
import type { NotifiedEvent } from './events.ts';

export type RenderedMessage = Omit<NotificationMessage, 'id'>;
type Field = NotificationMessage['fields'][number];

/** How much of an error a message quotes (the deployment's log has all of it). */
const ERROR_MAX = 1_500;
const cut = (s: string) => (s.length > ERROR_MAX ? `${s.slice(0, ERROR_MAX)}…` : s);
const bytes = (n: number) => (n >= 1 << 30 ? `${(n / (1 << 30)).toFixed(1)} GiB` : n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${Math.round(n / 1024)} KiB`);

export class MessageRenderer {
  readonly #cradle: () => Cradle;
  readonly #config: BerthConfig;

  constructor(cradle: () => Cradle, config: BerthConfig) {
    this.#cradle = cradle;
    this.#config = config;
  }

  /** Where a reader reaches this Berth (BERTH_PUBLIC_URL, else this host's port). */
  get #base(): string {
    return (this.#config.publicUrl ?? `http://localhost:${this.#config.port}`).replace(/\/+$/, '');
  }

  #logLink(deploymentId: string): string {
    return `${this.#base}/api/deployment.readLogs?deploymentId=${encodeURIComponent(deploymentId)}`;
  }

  /**
   * Project, environment and workload of the workload an event names: by the kind whose id field
   * the payload carries (applicationId, composeId, ...), or by `kind` and `id`; empty when the kit
   * does not know it.
   */
  async #placeOf(data: Record<string, unknown>, em: EntityManager): Promise<Field[]> {
    const cradle = this.#cradle();
    const workloads = optionalService(cradle, 'workloads');
    const kind = workloads?.kinds().find(k => typeof data[k.idField] === 'string' || (data.kind === k.kind && typeof data.id === 'string'));
    if (!kind) return [];
    const id = (typeof data[kind.idField] === 'string' ? data[kind.idField] : data.id) as string;
    const ref = await kind.find(id, em).catch(() => null);
    if (!ref) return [];
    const place = await optionalService(cradle, 'environments')
      ?.placement(ref.environmentId, ref.organizationId, em)
      .catch(() => null);
    return [
      ...(place
        ? [
            { name: 'Project', value: place.project.name },
            { name: 'Environment', value: place.name },
          ]
        : []),
      { name: kind.label, value: `${ref.name} (${ref.appName})` },
    ];
  }

  async render<K extends NotifiedEvent>(event: K, payload: BerthEvents[K], em: EntityManager): Promise<RenderedMessage> {
    const data = payload as Record<string, unknown>;
    const at = typeof data.at === 'string' ? data.at : new Date().toISOString();
    const base = { event, at, data };
    switch (event) {
      case 'appDeploy': {
        const p = payload as BerthEvents['appDeploy'];
        return {
          ...base,
          level: 'success',
          title: `Deployed: ${p.appName}`,
          link: this.#logLink(p.deploymentId),
          fields: [...(await this.#placeOf(data, em)), ...(p.image ? [{ name: 'Image', value: p.image }] : []), { name: 'Action', value: p.action }],
        };
      }
      case 'appBuildError': {
        const p = payload as BerthEvents['appBuildError'];
        return {
          ...base,
          level: 'error',
          title: `Build failed: ${p.appName}`,
          link: this.#logLink(p.deploymentId),
          fields: [...(await this.#placeOf(data, em)), { name: 'Error', value: cut(p.error) }],
        };
      }
      case 'databaseBackup': {
        const p = payload as BerthEvents['databaseBackup'];
        const ok = p.status === 'success';
        return {
          ...base,
          level: ok ? 'success' : 'error',
          title: `Database backup ${ok ? 'succeeded' : 'failed'} (${p.databaseType})`,
          link: null,
          fields: [{ name: 'Backup', value: p.backupId }, ...(p.file ? [{ name: 'File', value: p.file }] : []), ...(p.error ? [{ name: 'Error', value: cut(p.error) }] : [])],
        };
      }
      case 'volumeBackup': {
        const p = payload as BerthEvents['volumeBackup'];
        const ok = p.status === 'success';
        return {
          ...base,
          level: ok ? 'success' : 'error',
          title: `Volume backup ${ok ? 'succeeded' : 'failed'}: ${p.volumeName}`,
          link: null,
          fields: [{ name: 'Volume backup', value: p.volumeBackupId }, ...(p.file ? [{ name: 'File', value: p.file }] : []), ...(p.error ? [{ name: 'Error', value: cut(p.error) }] : [])],
        };
      }
      case 'ownDataBackup': {
        const p = payload as BerthEvents['ownDataBackup'];
        const ok = p.status === 'success';
        return {
          ...base,
          level: ok ? 'success' : 'error',
          title: `Backup of Berth's own data ${ok ? 'succeeded' : 'failed'}`,
          link: null,
          fields: [...(p.file ? [{ name: 'File', value: p.file }] : []), ...(p.error ? [{ name: 'Error', value: cut(p.error) }] : [])],
        };
      }
      case 'platformStart':
        return { ...base, level: 'info', title: 'Berth started', link: null, fields: [{ name: 'Address', value: this.#base }] };
      case 'dockerCleanup': {
        const p = payload as BerthEvents['dockerCleanup'];
        return {
          ...base,
          level: p.error ? 'error' : 'info',
          title: p.error ? `Docker cleanup failed on ${p.serverName}` : `Docker cleanup done on ${p.serverName}`,
          link: null,
          fields: [
            { name: 'Containers removed', value: String(p.removed.containers) },
            { name: 'Images removed', value: String(p.removed.images) },
            { name: 'Volumes removed', value: String(p.removed.volumes) },
            { name: 'Space reclaimed', value: bytes(p.removed.reclaimedBytes) },
            ...(p.error ? [{ name: 'Error', value: cut(p.error) }] : []),
          ],
        };
      }
      case 'serverThreshold': {
        const p = payload as BerthEvents['serverThreshold'];
        return {
          ...base,
          level: p.state === 'normal' ? 'success' : 'warning',
          title: p.state === 'normal' ? `${p.type} back to normal on ${p.serverName}` : `${p.type} above ${p.threshold}% on ${p.serverName}`,
          link: null,
          fields: [
            { name: 'Server', value: p.serverName },
            { name: p.type, value: `${p.value}%` },
            { name: 'Threshold', value: `${p.threshold}%` },
            ...(p.message ? [{ name: 'Message', value: cut(p.message) }] : []),
          ],
        };
      }
      case 'serverUnreachable': {
        const p = payload as BerthEvents['serverUnreachable'];
        return {
          ...base,
          level: 'error',
          title: `Server unreachable: ${p.serverName}`,
          link: null,
          fields: [
            { name: 'Server', value: p.serverName },
            { name: 'Reason', value: cut(p.reason) },
          ],
        };
      }
      case 'serverReachable': {
        const p = payload as BerthEvents['serverReachable'];
        return { ...base, level: 'success', title: `Server reachable again: ${p.serverName}`, link: null, fields: [{ name: 'Server', value: p.serverName }] };
      }
      case 'scheduleFailed': {
        const p = payload as BerthEvents['scheduleFailed'];
        return {
          ...base,
          level: 'error',
          title: `Scheduled job failed: ${p.name}`,
          link: null,
          fields: [
            { name: 'Schedule', value: p.scheduleId },
            { name: 'Error', value: cut(p.error) },
          ],
        };
      }
      case 'certificateExpiring': {
        const p = payload as BerthEvents['certificateExpiring'];
        return {
          ...base,
          level: 'warning',
          title: p.daysLeft < 0 ? `Certificate expired: ${p.name}` : `Certificate expiring in ${p.daysLeft} days: ${p.name}`,
          link: null,
          fields: [
            { name: 'Certificate', value: p.name },
            { name: 'Expires', value: p.expiresAt },
          ],
        };
      }
      case 'certificateRenewalFailed': {
        const p = payload as BerthEvents['certificateRenewalFailed'];
        return {
          ...base,
          level: 'error',
          title: `Certificate not renewed: ${p.host}`,
          link: null,
          fields: [
            { name: 'Domain', value: p.host },
            { name: 'Reason', value: cut(p.reason) },
          ],
        };
      }
      case 'appHealth': {
        const p = payload as BerthEvents['appHealth'];
        return {
          ...base,
          level: p.state === 'healthy' || p.state === 'recovered' ? 'success' : 'warning',
          title: `${p.appName}: ${p.state}`,
          link: null,
          fields: [...(await this.#placeOf(data, em)), { name: 'State', value: p.state }, { name: 'Message', value: cut(p.message) }],
        };
      }
    }
    throw new Error(`No message for event ${String(event)}`);
  }
}
