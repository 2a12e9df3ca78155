// The compose plugin's configuration keys (section "compose").
import { Type, type Static } from '@berth/core';

const ComposeConfig = Type.Object({
  templatesSource: Type.Optional(
    Type.String({
      env: 'BERTH_TEMPLATES',
      minLength: 1,
      maxLength: 2048,
      description: "The compose template catalog: a directory or an http(s) URL in the peer's template format; absent = the repository's examples/templates",
    }),
  ),
});
export default ComposeConfig;
export type ComposeSettings = Static<typeof ComposeConfig>;

declare module '@berth/core' {
  interface BerthConfig extends ComposeSettings {}
}
