// The clone credential of a git provider as git takes it: an environment for the git process
// (never its arguments, its URL or .git/config), and the values a log must never show.
import type { CloneCredential } from './contracts/git-provider.ts';

/**
 * The environment that gives one git process (and the submodule clones it starts) the clone
 * credential: an `Authorization` header scoped by git's URL matching to `baseUrl` (scheme, host
 * and port exactly, then the path prefix), so another host never receives it; redirects are not
 * followed, since git would send the header on to the host a redirect names. Nothing of it is in
 * the arguments, the URL or `.git/config`. The value is a secret: never log it.
 */
export function cloneCredentialEnv(credential: CloneCredential): Record<string, string> {
  const base = new URL(credential.baseUrl);
  if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new Error(`A clone credential is for an http(s) URL, not ${base.protocol}`);
  if (base.username || base.password) throw new Error("A clone credential's base URL must not carry a user or password");
  if (/[\0-\x1f\x7f]/.test(credential.username + credential.password)) throw new Error('A clone credential must not contain control characters');
  const basic = Buffer.from(`${credential.username}:${credential.password}`).toString('base64');
  const scope = `${base.origin}${base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`}`;
  return {
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: `http.${scope}.extraHeader`,
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    // git keeps a remote's headers for the host a redirect moves it to: no redirects with a credential.
    GIT_CONFIG_KEY_1: `http.${scope}.followRedirects`,
    GIT_CONFIG_VALUE_1: 'false',
  };
}

/** The values a log must never show once a clone credential is in use: the token, and the header that carries it. */
export function cloneCredentialSecrets(credential: CloneCredential): string[] {
  const env = cloneCredentialEnv(credential);
  const header = env.GIT_CONFIG_VALUE_0!;
  return [credential.password, header.slice('Authorization: Basic '.length), header];
}
