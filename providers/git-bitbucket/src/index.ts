// @berth/provider-git-bitbucket: git provider "bitbucket" — a Bitbucket Cloud account (API token
// or an older app password) through the REST 2.0 API with plain fetch. `apiUrl` and `webUrl` point
// it elsewhere (a test's loopback service; the defaults are Bitbucket Cloud's).
import { defineProvider, Type } from '@berth/core';
import { BITBUCKET_API, BITBUCKET_WEB, BitbucketProvider } from './bitbucket-provider.ts';

const Options = Type.Object(
  { apiUrl: Type.String({ default: BITBUCKET_API, description: "the REST API's root" }), webUrl: Type.String({ default: BITBUCKET_WEB, description: 'where repositories are cloned from' }) },
  { additionalProperties: false },
);

export default defineProvider({ contract: 'git', id: 'bitbucket', options: Options, create: options => new BitbucketProvider(options) });
export { BitbucketProvider, BITBUCKET_API, BITBUCKET_WEB, API_TOKEN_USER } from './bitbucket-provider.ts';
