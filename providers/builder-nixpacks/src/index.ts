// @berth/provider-builder-nixpacks: build type "nixpacks", run by its program on the host.
import { programProvider } from '@berth/provider-builder-programs';

export default programProvider('nixpacks');
