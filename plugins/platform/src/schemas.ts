// What the platform operations answer (TypeBox).
import { Type, type Static } from '@berth/core';

/** The peer's update data ({latestVersion, updateAvailable}), with Berth's running version and why. */
export const UpdateData = Type.Object({
  latestVersion: Type.Union([Type.String(), Type.Null()], { description: 'The newest release known: the feed’s newest, the running version without a feed, null when the feed could not be read' }),
  updateAvailable: Type.Boolean({ description: 'Whether the feed lists a release newer than the running one' }),
  currentVersion: Type.String({ description: "Berth's running version (Berth's addition)" }),
  message: Type.String({ description: 'Where the answer comes from: no feed configured, what the feed lists, or why it could not be read (Berth’s addition)' }),
});
export type UpdateData = Static<typeof UpdateData>;

/** The peer's health answer. */
export const Health = Type.Object({ status: Type.Literal('ok') });
