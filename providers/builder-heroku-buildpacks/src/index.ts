// @berth/provider-builder-heroku-buildpacks: build type "heroku_buildpacks", run by its program on the host.
import { programProvider } from '@berth/provider-builder-programs';

export default programProvider('heroku_buildpacks');
