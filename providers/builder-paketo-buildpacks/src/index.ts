// @berth/provider-builder-paketo-buildpacks: build type "paketo_buildpacks", run by its program on the host.
import { programProvider } from '@berth/provider-builder-programs';

export default programProvider('paketo_buildpacks');
