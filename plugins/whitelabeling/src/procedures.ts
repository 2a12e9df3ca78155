// whitelabeling.* — the instance's name, logos, links, texts and CSS (the peer's whitelabelingConfig).
// Served for everyone, with no licence: every signed-in member reads it (get), anyone reads what the
// pages without a session show (getPublic), and only the instance operators change it (update,
// reset): it is the instance's, not an organization's (the peer: its owner).
import { Type, router } from '@berth/core';
import { PublicWhitelabelingConfig, Success, UpdateInput, WhitelabelingConfig } from './schemas.ts';

const whitelabeling = router('whitelabeling', 'instance');
/** The peer's answer to a change, once it is stored. */
const done = (change: Promise<void>) => change.then(() => ({ success: true }));

export const whitelabelingProcedures = [
  whitelabeling.query('get', {
    permission: 'member',
    scope: 'organization',
    summary: "The instance's whitelabeling, every field (null where not set); any signed-in member reads it",
    input: Type.Object({}),
    output: WhitelabelingConfig,
    handler: (_input, ctx) => ctx.cradle.whitelabeling.get(ctx.cradle.em),
  }),
  whitelabeling.mutation('update', {
    permission: 'organization.update',
    access: 'admin',
    summary:
      'Replace the instance\'s whitelabeling with the fields given (every field; null or "" clears one). URLs are http(s) only and at most 2048 characters; texts and CSS are bounded. The instance operators only',
    input: UpdateInput,
    output: Success,
    handler: ({ whitelabelingConfig }, ctx) => done(ctx.cradle.whitelabeling.set(whitelabelingConfig, ctx.cradle.em)),
  }),
  whitelabeling.mutation('reset', {
    permission: 'organization.update',
    access: 'admin',
    summary: "Clear the instance's whitelabeling: every field back to null (the client's own name and logos). The instance operators only",
    input: Type.Object({}),
    output: Success,
    handler: (_input, ctx) => done(ctx.cradle.whitelabeling.reset(ctx.cradle.em)),
  }),
  whitelabeling.query('getPublic', {
    scope: 'public',
    summary: 'What the pages without a session show (sign-in, error pages): the name, description, logos, favicon, CSS, titles and footer — no credential needed; no support or docs link',
    input: Type.Object({}),
    output: PublicWhitelabelingConfig,
    handler: (_input, ctx) => ctx.cradle.whitelabeling.getPublic(ctx.cradle.em),
  }),
];
