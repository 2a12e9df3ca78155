// @berth/provider-builder-railpack: build type "railpack", run by its program on the host.
import { programProvider } from '@berth/provider-builder-programs';

export default programProvider('railpack');
