// The repository URL and branch of a git source are user input that reaches git's command
// line: only the transports Berth supports, nothing git could read as an option, no control
// characters, and the credentials a URL carries are known so that they can be masked.

const CONTROL = /[\0-\x1f\x7f]/;
// user@host:path, the scp-like SSH form.
const SCP_LIKE = /^[A-Za-z0-9._~+-]+@[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?:(?!\/\/)\S+$/;
const URL_SCHEMES = new Set(['https:', 'http:', 'ssh:', 'file:']);
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])$/;

export interface GitRemote {
  url: string;
  /** A path or file:// URL on this host (tests, mirrors): git then reads the local file system. */
  local: boolean;
  /** Credentials written in the URL, to mask in every line shown. */
  secrets: string[];
}

const printable = (s: string) => s.replace(/[\0-\x1f\x7f]/g, '?');

/** Checks a repository URL; throws a message fit for the deployment log (credentials not shown). */
export function parseGitRemote(url: unknown): GitRemote {
  if (typeof url !== 'string' || url.trim() === '') throw new Error('The git source has no repository URL');
  const bad = (why: string): never => {
    let shown = printable(url);
    try {
      const u = new URL(url);
      if (u.username || u.password) shown = shown.replace(`${u.username}${u.password ? `:${u.password}` : ''}@`, '******@');
    } catch {
      // not a URL: nothing to hide
    }
    throw new Error(`The repository URL "${shown}" ${why}`);
  };
  if (url.startsWith('-')) bad('must not start with "-"');
  if (CONTROL.test(url)) bad('must not contain control characters');
  if (/\s/.test(url)) bad('must not contain spaces');
  if (url.startsWith('/')) return { url, local: true, secrets: [] };
  if (SCP_LIKE.test(url)) return { url, local: false, secrets: [] };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return bad('is not a valid URL: use https://, http://, ssh://, git@host:path, file:// or an absolute path');
  }
  if (!URL_SCHEMES.has(parsed.protocol)) bad(`uses the unsupported scheme "${parsed.protocol.slice(0, -1)}": use https, http, ssh or file`);
  if (parsed.protocol === 'file:') return { url, local: true, secrets: [] };
  // A host or user starting with "-" would reach ssh as an option.
  if (!HOST.test(parsed.hostname)) bad('has an invalid host');
  if (parsed.username.startsWith('-')) bad('has an invalid user name');
  const secrets: string[] = [];
  // A password is a credential; over http(s) so is a lone user name (often a token), while
  // over ssh it is the account (git@...).
  const web = parsed.protocol === 'https:' || parsed.protocol === 'http:';
  for (const part of [parsed.password || (web ? parsed.username : '')]) {
    if (!part) continue;
    secrets.push(part);
    try {
      const decoded = decodeURIComponent(part);
      if (decoded !== part) secrets.push(decoded);
    } catch {
      // not percent-encoded text
    }
  }
  return { url, local: false, secrets };
}

/** Checks a branch name by git's reference rules (git check-ref-format --branch). */
export function checkBranch(branch: unknown): string {
  if (typeof branch !== 'string' || branch === '') throw new Error('The git source has no branch');
  const bad = (why: string): never => {
    throw new Error(`The branch "${printable(branch)}" is not a valid branch name: ${why}`);
  };
  if (branch.startsWith('-')) bad('it must not start with "-"');
  if (branch.length > 255) bad('it is too long');
  if (CONTROL.test(branch)) bad('it contains control characters');
  if (/[\s~^:?*[\\]/.test(branch)) bad('it contains a space or one of ~ ^ : ? * [ \\');
  if (branch.includes('..') || branch.includes('@{') || branch === '@') bad('it contains ".." or "@{"');
  if (branch.startsWith('/') || branch.endsWith('/') || branch.includes('//')) bad('it has an empty path component');
  if (branch.endsWith('.') || branch.split('/').some(c => c.startsWith('.') || c.endsWith('.lock'))) bad('a component starts with "." or ends with "." or ".lock"');
  return branch;
}
