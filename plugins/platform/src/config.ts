// The platform plugin's configuration keys (section "platform").
import { Type, type Static } from '@berth/core';

const PlatformConfig = Type.Object({
  releaseFeedUrl: Type.Optional(
    Type.String({
      env: 'BERTH_RELEASE_FEED_URL',
      minLength: 1,
      maxLength: 2048,
      pattern: '^https?://',
      description:
        "Where Berth reads which releases exist (JSON: a list of version strings, or GitHub's releases API answer: tag_name, drafts and pre-releases skipped); absent: nothing is asked, and checkAndUpdateImage answers no update",
    }),
  ),
});
export default PlatformConfig;
export type PlatformSettings = Static<typeof PlatformConfig>;

declare module '@berth/core' {
  interface BerthConfig extends PlatformSettings {}
}
