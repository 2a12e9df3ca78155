// A notification channel (Slack, Telegram, email, a signed webhook, a third party's): one
// provider each. The notification plugin owns the records, the toggles, the outbox and the
// retries; a channel only knows its settings and how to send one message. A new channel is a
// provider: `export default defineProvider({ contract: 'notify', id, options, create: () => new MyChannel() })`;
// the plugin then serves `notification.create<Suffix>`, `update<Suffix>` and `test<Suffix>Connection` for it.
import type { TObject } from 'typebox';

/** What happened, rendered once by the notification plugin, sent as each channel formats it. */
export interface NotificationMessage {
  /** The delivery's id: the same on every retry, so receivers can drop duplicates (the webhook's `webhook-id`). */
  id: string;
  /** The bus event (appDeploy, appBuildError, databaseBackup, ...), or `test` for a test*Connection. */
  event: string;
  /** How channels colour it. */
  level: 'success' | 'error' | 'warning' | 'info';
  /** One line saying what happened ("Build failed: web"). */
  title: string;
  /** What it concerns and where to look, in order (Project, Environment, Application, Error, ...). */
  fields: { name: string; value: string }[];
  /** Where to read more (Berth's log operation of the deployment), or null. */
  link: string | null;
  /** When it happened (ISO 8601). */
  at: string;
  /** The event's payload as it was emitted (a webhook sends it as `data`). */
  data: Record<string, unknown>;
}

/** What the provider's service answered (status null when nothing came back, e.g. SMTP's reply line only). */
export interface ChannelAnswer {
  status: number | null;
  /** The vendor's documented error message (Slack `error`, Telegram `description`...), truncated; '' for a success or an answer without one. Never an arbitrary body. */
  body: string;
}

/** What a send may use besides the record's settings. */
export interface SendContext {
  /** Aborted when the delivery's timeout (notifyTimeoutSeconds) passes: stop waiting then. */
  signal: AbortSignal;
  /** The record's signing secret (`whsec_…`), for channels with `signed`. */
  signingSecret?: string;
  /** fetch to the checked address of a URL (outboundAllow rules; refused: a 400 naming the field). The plugin always gives it: use it for every HTTP request. */
  fetch?: (input: string, init?: RequestInit) => Promise<Response>;
  /** The checked address to connect to for a host (a non-HTTP client's, e.g. SMTP). The plugin always gives it. */
  resolve?: (host: string, port: number) => Promise<string>;
}

export interface NotificationChannel<S extends Record<string, unknown> = Record<string, any>> {
  /** The wire value of `notificationType` and the key of its record in answers (`slack` → `slackId`, `slack: {...}`). */
  readonly id: string;
  /** What users call it ("Slack"), for messages and the OpenAPI summaries. */
  readonly label: string;
  /** The suffix of its operations: `notification.create<Suffix>`, `update<Suffix>`, `test<Suffix>Connection`. */
  readonly procedureSuffix: string;
  /** Its settings as create and test take them (TypeBox); update takes each of them optionally. */
  readonly settings: TObject;
  /** Settings that are secrets (tokens, passwords, webhook URLs that carry a token): sealed at rest, answered redacted. */
  readonly secretFields: readonly string[];
  /** Settings holding a URL or host name the channel connects to: checked on save and on every send (outboundAllow). */
  readonly addressFields?: readonly string[];
  /** The channel signs what it sends: the plugin makes a signing secret on create, answers it once, rotates it on request. */
  readonly signed?: boolean;
  /** Checks settings beyond their schema (a URL that parses...); throws an invalidField error naming the field. */
  validate?(settings: S): void;
  /** Sends one message; resolves with the provider's answer, or throws a ChannelError (never a raw vendor error). */
  send(settings: S, message: NotificationMessage, context: SendContext): Promise<ChannelAnswer>;
}

declare module '../provider.ts' {
  interface ProviderContracts {
    /** `notify.<id>`: a notification channel (slack, telegram, email, custom...). */
    notify: NotificationChannel;
  }
}
