// The registry plugin's configuration keys (section "registry").
import { Type, type Static } from '@berth/core';

const RegistryConfig = Type.Object({
  registryImage: Type.String({
    env: 'BERTH_REGISTRY_IMAGE',
    minLength: 1,
    default: 'registry:2.8.3',
    description: "Image of the self-hosted registry's service (registry.enableSelfHostedRegistry): the public registry:2 image or one laid out like it",
  }),
});
export default RegistryConfig;
export type RegistrySettings = Static<typeof RegistryConfig>;

declare module '@berth/core' {
  interface BerthConfig extends RegistrySettings {}
}
