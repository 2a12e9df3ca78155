// notification.* for one request: the caller's organization's channels. A record of another
// organization is NOT_FOUND. Secrets are sealed when stored and masked when answered; a signed
// channel's signing secret is answered once, by the create (or rotation) that made it.
import { randomBytes } from 'node:crypto';
import { badRequest, invalidField, newId, type Cradle, type NotificationChannel, type NotificationMessage, type Static, findOwned } from '@berth/core';
import { Value } from 'typebox/value';
import { Delivery, Notification, type DeliveryRow, type NotificationRow } from './entities.ts';
import { TOGGLES, type Toggle } from './events.ts';
import type { RenderedMessage } from './messages.ts';
import { sealSettings, settingsOf, toView } from './records.ts';
import { mask } from './redact.ts';
import type { DeliveriesInput, DeliveryView } from './schemas.ts';
import { checkAddresses, sendOnce } from './send.ts';

type Input = Record<string, unknown>;

/** A new Standard Webhooks secret: `whsec_` and 24 random bytes in base64. */
const newSigningSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** The channels' messages when a user tests a connection. */
const testMessage = (c: NotificationChannel) => ({
  id: `test_${newId(16)}`,
  event: 'test',
  level: 'info' as const,
  title: 'Test notification from Berth',
  fields: [{ name: 'Channel', value: c.label }],
  link: null,
  at: new Date().toISOString(),
  data: {},
});

/** The toggles an input sets: both names of the restart toggle are one; appHealth follows appBuildError when absent on create. */
function togglesOf(input: Input, creating: boolean): Partial<Record<Toggle, boolean>> {
  const out: Partial<Record<Toggle, boolean>> = {};
  for (const t of TOGGLES) if (typeof input[t] === 'boolean') out[t] = input[t] as boolean;
  const older = input.platformRestart as boolean | undefined;
  const current = input.dokployRestart as boolean | undefined;
  if (older !== undefined && current !== undefined && older !== current) throw invalidField('platformRestart', 'differs from dokployRestart: they are one toggle (give either)');
  if (older !== undefined || current !== undefined) out.platformRestart = (older ?? current)!;
  else if (creating) throw invalidField('dokployRestart', 'is required (or its older name, platformRestart)');
  if (creating && out.appHealth === undefined) out.appHealth = out.appBuildError ?? false;
  return out;
}

export class NotificationService {
  readonly #c: Cradle;

  constructor(cradle: Cradle) {
    this.#c = cradle;
  }

  get #org() {
    return this.#c.principal!.organizationId;
  }

  /** The guard's rule for the caller's organization. */
  get #target() {
    return { outbound: this.#c.outbound, organizationId: this.#org };
  }

  get #channels(): NotificationChannel[] {
    return this.#c.providers.all('notify');
  }

  #view(row: NotificationRow, relations: string[] | 'all' = 'all') {
    return toView(row, this.#channels, this.#c.secrets, relations);
  }

  /** The channel's settings among the input's fields; with `defaults`, unset ones with a default get it (create). */
  #settingsIn(channel: NotificationChannel, input: Input, defaults = false): Input {
    const given = Object.fromEntries(
      Object.keys(channel.settings.properties)
        .filter(k => input[k] !== undefined)
        .map(k => [k, input[k]]),
    );
    return defaults ? (Value.Default(channel.settings, given) as Input) : given;
  }

  #find(notificationId: string): Promise<NotificationRow> {
    return findOwned(this.#c.em, Notification, { notificationId }, this.#org, 'Notification');
  }

  async create(channel: NotificationChannel, input: Input) {
    const toggles = togglesOf(input, true);
    const settings = this.#settingsIn(channel, input, true);
    channel.validate?.(settings);
    await checkAddresses(channel, settings, this.#target);
    const signingSecret = channel.signed ? newSigningSecret() : null;
    const { em, secrets } = this.#c;
    const row = em.create(Notification, {
      notificationId: newId(),
      organizationId: this.#org,
      name: String(input.name),
      notificationType: channel.id,
      channelId: newId(),
      ...sealSettings(channel, settings, secrets),
      signingSecret: signingSecret ? secrets.encrypt(signingSecret) : null,
      ...Object.fromEntries(TOGGLES.map(t => [t, toggles[t] ?? false])),
      createdAt: new Date(),
    }) as NotificationRow;
    await em.flush();
    return { ...this.#view(row), ...(signingSecret ? { signingSecret } : {}) };
  }

  async update(channel: NotificationChannel, input: Input) {
    const row = await this.#find(String(input.notificationId));
    if (row.notificationType !== channel.id) throw invalidField('notificationId', `is a ${row.notificationType} channel, not ${channel.id}`);
    const idField = `${channel.id}Id`;
    if (input[idField] !== row.channelId) throw invalidField(idField, "is not this notification's channel record");
    const { em, secrets } = this.#c;
    const current = settingsOf(row, secrets);
    const given = this.#settingsIn(channel, input);
    // A secret answered masked and sent back unchanged keeps its stored value.
    for (const f of channel.secretFields) {
      if (given[f] !== undefined && JSON.stringify(given[f]) === JSON.stringify(mask(current[f]))) delete given[f];
    }
    const settings = { ...current, ...given };
    channel.validate?.(settings);
    await checkAddresses(channel, settings, this.#target);
    Object.assign(row, sealSettings(channel, settings, secrets), togglesOf(input, false));
    if (typeof input.name === 'string') row.name = input.name;
    const signingSecret = channel.signed && input.rotateSecret === true ? newSigningSecret() : null;
    if (signingSecret) row.signingSecret = secrets.encrypt(signingSecret);
    await em.flush();
    return { ...this.#view(row), ...(signingSecret ? { signingSecret } : {}) };
  }

  /** Sends a test message for real; a failure is BAD_REQUEST with the provider's status and error message (never Berth's own 401/403). */
  async test(channel: NotificationChannel, settings: Input): Promise<boolean> {
    channel.validate?.(settings);
    await checkAddresses(channel, settings, this.#target);
    const outcome = await sendOnce(channel, settings, testMessage(channel), {
      timeoutMs: this.#c.notificationOutbox.timeoutSeconds * 1000,
      ...(channel.signed ? { signingSecret: newSigningSecret() } : {}),
      to: this.#target,
    });
    if (outcome.refused) throw outcome.refused;
    if (!outcome.ok) throw badRequest(outcome.body);
    return true;
  }

  async one(notificationId: string) {
    return this.#view(await this.#find(notificationId));
  }

  /** Newest first; `types`: only those channels, each joined with its record only among them. */
  async all(types?: string[]) {
    const rows = await this.#c.em.find(Notification, { organizationId: this.#org, ...(types ? { notificationType: { $in: types } } : {}) }, { orderBy: { createdAt: 'desc', notificationId: 'asc' } });
    return rows.map(r => this.#view(r, types ?? 'all'));
  }

  /** Deletes the channel and its delivery log; answers it as it was. */
  async remove(notificationId: string) {
    const row = await this.#find(notificationId);
    const view = this.#view(row, []);
    await this.#c.em.nativeDelete(Notification, { notificationId: row.notificationId, organizationId: this.#org });
    return view;
  }

  /**
   * Sends one message through one of the organization's channels that mail (those whose settings
   * have recipients, toAddresses: email, resend, a third party's) to `to` in place of its own
   * recipients, as a test*Connection sends: a failure is BAD_REQUEST with the provider's reason.
   * A channel that does not mail is BAD_REQUEST naming notificationId.
   */
  async mail(notificationId: string, message: NotificationMessage, to: string[]): Promise<void> {
    const row = await this.#find(notificationId);
    const channel = this.#channels.find(c => c.id === row.notificationType);
    if (!channel?.settings.properties.toAddresses)
      throw invalidField('notificationId', `is a ${row.notificationType} channel: only a channel that mails (with toAddresses, such as email or resend) can send to an address`);
    const settings = { ...settingsOf(row, this.#c.secrets), toAddresses: to };
    const outcome = await sendOnce(channel, settings, message, { timeoutMs: this.#c.notificationOutbox.timeoutSeconds * 1000, to: this.#target });
    if (outcome.refused) throw outcome.refused;
    if (!outcome.ok) throw badRequest(outcome.body);
  }

  /** The channel's deliveries, newest first. */
  async deliveries(input: Static<typeof DeliveriesInput>): Promise<Static<typeof DeliveryView>[]> {
    const row = await this.#find(input.notificationId);
    const rows = await this.#c.em.find(Delivery, { notificationId: row.notificationId }, { orderBy: { createdAt: 'desc', deliveryId: 'desc' }, limit: input.limit ?? 50 });
    return rows.map(deliveryView);
  }
}

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

export function deliveryView(d: DeliveryRow): Static<typeof DeliveryView> {
  const finished = d.state === 'sent' || d.state === 'dead';
  return {
    deliveryId: d.deliveryId,
    notificationId: d.notificationId,
    event: d.event,
    title: (d.message as RenderedMessage).title,
    state: d.state as Static<typeof DeliveryView>['state'],
    tries: d.tries,
    createdAt: iso(d.createdAt)!,
    lastAttemptAt: iso(d.lastAttemptAt),
    nextAttemptAt: finished ? null : iso(d.nextAttemptAt),
    sentAt: iso(d.sentAt),
    answer: d.answer === null || d.answer === undefined ? null : { status: d.answerStatus ?? null, body: d.answer },
  };
}
