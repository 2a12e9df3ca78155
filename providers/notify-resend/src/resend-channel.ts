// Resend's POST /emails with the API key as a bearer token: `{from, to, subject, text, html}`.
// It answers 200 `{"id": …}`, or 4xx JSON `{"statusCode", "name", "message"}` (401/403 for a bad
// key, 422 for a bad address). Plain HTTP: no SDK to load.
import { invalidField, Type, type NotificationMessage, type Static } from '@berth/core';
import { ApiUrlChannel, htmlEscape as html, LIMIT, markedTitle, plainText, type HttpSend } from '@berth/provider-notify-kit';

const Settings = Type.Object({
  apiKey: Type.String({ minLength: 1, maxLength: LIMIT.secret, description: 'A Resend API key (re_…)' }),
  fromAddress: Type.String({ minLength: 1, maxLength: LIMIT.address, description: 'The sender, on a domain verified at Resend' }),
  toAddresses: Type.Array(Type.String({ minLength: 1, maxLength: LIMIT.address }), { minItems: 1, maxItems: LIMIT.recipients }),
});
type Settings = Static<typeof Settings>;
const ADDRESS = /^([^<>]*<)?[^\s@<>]+@[^\s@<>]+>?$/;

export class ResendChannel extends ApiUrlChannel<Settings> {
  readonly id = 'resend';
  readonly label = 'Resend';
  readonly procedureSuffix = 'Resend';
  readonly settings = Settings;
  readonly secretFields = ['apiKey'] as const;

  validate(s: Settings): void {
    if (!ADDRESS.test(s.fromAddress)) throw invalidField('fromAddress', 'must be an email address');
    s.toAddresses.forEach((a, i) => {
      if (!ADDRESS.test(a)) throw invalidField(`toAddresses.${i}`, 'must be an email address');
    });
  }

  protected request(s: Settings, m: NotificationMessage): HttpSend {
    return {
      url: `${this.apiUrl}/emails`,
      headers: { authorization: `Bearer ${s.apiKey}`, 'idempotency-key': m.id },
      json: {
        from: s.fromAddress,
        to: s.toAddresses,
        subject: markedTitle(m),
        text: plainText(m),
        html: `<h3>${html(m.title)}</h3>${m.fields.map(f => `<p><b>${html(f.name)}:</b> ${html(f.value)}</p>`).join('')}${m.link ? `<p><a href="${html(m.link)}">Details</a></p>` : ''}`,
      },
    };
  }
}
