// The peer's whitelabelingConfig (its web-server settings column), field for field: every field a
// string or null. Berth bounds what the peer leaves open: URLs are http(s) only (the peer's own
// rule) and at most 2048 characters, texts and CSS have a length limit each.
import { Type, schema, type Static } from '@berth/core';

const { Nullable } = schema;

const Url = (what: string) => Nullable(Type.String({ format: 'uri', pattern: '^[hH][tT][tT][pP][sS]?://', maxLength: 2048, description: `${what}: an http:// or https:// URL` }));
const Text = (maxLength: number, what: string) => Nullable(Type.String({ maxLength, description: what }));

export const WhitelabelingConfig = Type.Object({
  appName: Text(255, 'the name shown in place of the peer’s'),
  appDescription: Text(2000, 'a line under the name'),
  logoUrl: Url('the logo'),
  faviconUrl: Url('the favicon'),
  customCss: Text(65_536, 'CSS added to every page of the client'),
  loginLogoUrl: Url('the logo of the sign-in page'),
  supportUrl: Url('where users ask for help'),
  docsUrl: Url('the documentation'),
  errorPageTitle: Text(255, 'the title of the error page'),
  errorPageDescription: Text(2000, 'the text of the error page'),
  metaTitle: Text(255, "the pages' title"),
  footerText: Text(2000, 'the footer'),
});
export type WhitelabelingConfig = Static<typeof WhitelabelingConfig>;

/** What getPublic answers: what the pages without a session show (the peer leaves the support and docs links out). */
export const PublicWhitelabelingConfig = Type.Omit(WhitelabelingConfig, ['supportUrl', 'docsUrl']);
export type PublicWhitelabelingConfig = Static<typeof PublicWhitelabelingConfig>;

export const UpdateInput = Type.Object({ whitelabelingConfig: WhitelabelingConfig });
export type UpdateInput = Static<typeof UpdateInput>;

export const Success = Type.Object({ success: Type.Boolean({ description: 'true when done' }) });
