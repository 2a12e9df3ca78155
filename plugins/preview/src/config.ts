// The preview plugin's configuration keys (section "preview").
import { Type, type Static } from '@berth/core';

const PreviewConfig = Type.Object({
  previewMaxAgeDays: Type.Integer({
    env: 'BERTH_PREVIEW_MAX_AGE_DAYS',
    minimum: 1,
    maximum: 3650,
    default: 14,
    description: 'Days a preview deployment lives (its expiresAt); the daily job removes older ones, service, domain and record',
  }),
});
export default PreviewConfig;
export type PreviewSettings = Static<typeof PreviewConfig>;

declare module '@berth/core' {
  interface BerthConfig extends PreviewSettings {}
}
