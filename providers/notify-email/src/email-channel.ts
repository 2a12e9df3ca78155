// Email through SMTP with nodemailer. `tlsMode` is Berth's: `implicit` (TLS from the first byte,
// port 465's way), `starttls` (plain, then STARTTLS, which must succeed) or `none` (never TLS);
// absent, port 465 means implicit and any other port starttls. nodemailer is imported on the first
// send, so a Berth that sends no email never loads it. Its failures carry the SMTP reply code
// (535 for refused credentials) and reply line, which become the ChannelError's status and body.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { ChannelError, invalidField, Type, type NotificationChannel, type NotificationMessage, type SendContext, type Static } from '@berth/core';
import { htmlEscape as html, LIMIT, markedTitle, plainText } from '@berth/provider-notify-kit';

const Settings = Type.Object({
  smtpServer: Type.String({ minLength: 1, maxLength: LIMIT.host, description: "The SMTP server's host name or address" }),
  smtpPort: Type.Number({ minimum: 1, maximum: 65535, description: 'Its port (465: implicit TLS, 587 or 25: STARTTLS by default)' }),
  username: Type.String({ minLength: 1, maxLength: LIMIT.name }),
  password: Type.String({ minLength: 1, maxLength: LIMIT.secret }),
  fromAddress: Type.String({ minLength: 1, maxLength: LIMIT.address, description: 'The sender address' }),
  toAddresses: Type.Array(Type.String({ minLength: 1, maxLength: LIMIT.address }), { minItems: 1, maxItems: LIMIT.recipients, description: 'The recipients' }),
  tlsMode: Type.Optional(
    Type.Union([Type.Literal('implicit'), Type.Literal('starttls'), Type.Literal('none')], {
      description: "Berth's: implicit TLS, STARTTLS (required) or none; absent: implicit on port 465, starttls otherwise",
    }),
  ),
});
type Settings = Static<typeof Settings>;
type TlsMode = NonNullable<Settings['tlsMode']>;

/** The mode a record without tlsMode gets. */
export const defaultTlsMode = (port: number): TlsMode => (port === 465 ? 'implicit' : 'starttls');

const ADDRESS = /^[^\s@<>]+@[^\s@<>]+$/;

type Nodemailer = typeof import('nodemailer');
let nodemailer: Promise<Nodemailer> | undefined;

export class EmailChannel implements NotificationChannel<Settings> {
  readonly id = 'email';
  readonly label = 'Email';
  readonly procedureSuffix = 'Email';
  readonly settings = Settings;
  readonly addressFields = ['smtpServer'] as const;
  readonly secretFields = ['password'] as const;
  readonly #ca: string | undefined;

  constructor(o: { caFile: string }) {
    this.#ca = o.caFile ? readFileSync(o.caFile, 'utf8') : undefined;
  }

  validate(s: Settings): void {
    if (!Number.isInteger(s.smtpPort)) throw invalidField('smtpPort', 'must be a whole port number');
    if (!ADDRESS.test(s.fromAddress)) throw invalidField('fromAddress', 'must be an email address');
    s.toAddresses.forEach((a, i) => {
      if (!ADDRESS.test(a)) throw invalidField(`toAddresses.${i}`, 'must be an email address');
    });
  }

  async send(s: Settings, m: NotificationMessage, { signal, resolve }: SendContext) {
    const mode = s.tlsMode ?? defaultTlsMode(s.smtpPort);
    // The checked address, the name kept for TLS (SNI and the certificate's check).
    const host = resolve ? await resolve(s.smtpServer, s.smtpPort) : s.smtpServer;
    const { createTransport } = await (nodemailer ??= import('nodemailer'));
    const transport = createTransport({
      host,
      ...(host !== s.smtpServer && !isIP(s.smtpServer) ? { servername: s.smtpServer } : {}),
      port: s.smtpPort,
      secure: mode === 'implicit',
      requireTLS: mode === 'starttls',
      ignoreTLS: mode === 'none',
      auth: { user: s.username, pass: s.password },
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 30_000,
      ...(this.#ca ? { tls: { ca: this.#ca } } : {}),
    });
    const mail = {
      from: s.fromAddress,
      to: s.toAddresses,
      subject: markedTitle(m),
      text: plainText(m),
      html:
        `<h3>${html(m.title)}</h3><table>${m.fields.map(f => `<tr><th align="left">${html(f.name)}</th><td><pre style="margin:0;white-space:pre-wrap">${html(f.value)}</pre></td></tr>`).join('')}</table>` +
        (m.link ? `<p><a href="${html(m.link)}">Details</a></p>` : ''),
      headers: { 'X-Berth-Event': m.event },
      messageId: `<${m.id}@berth>`,
    };
    const aborted = new Promise<never>((_, reject) => {
      const stop = () => reject(new ChannelError('Email did not answer: no answer before the timeout'));
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
    try {
      const info = await Promise.race([transport.sendMail(mail), aborted]);
      return { status: Number.parseInt(String(info.response), 10) || 250, body: '' };
    } catch (e) {
      if (e instanceof ChannelError) throw e;
      const err = e as Error & { responseCode?: number; response?: string; code?: string };
      const reply = (err.response ?? '').replace(/\s+/g, ' ').slice(0, 200);
      const answer = { status: err.responseCode ?? null, body: reply };
      throw new ChannelError(
        err.responseCode ? `Email: the server answered ${err.responseCode}: ${reply || err.message.slice(0, 200)}` : `Email: ${err.code ? `${err.code}: ` : ''}${err.message}`,
        answer,
        { cause: e },
      );
    } finally {
      transport.close();
    }
  }
}
