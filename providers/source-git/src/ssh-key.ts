// A stored private key, handed to ssh for one clone: written to a 0600 file in a fresh 0700
// directory whose path Berth chooses (GIT_SSH_COMMAND is read by a shell, so no input reaches
// it), and removed afterwards whatever happened.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const SAFE_PATH = /^\/[A-Za-z0-9._\/-]+$/;

export interface SshOptions {
  /** The known-hosts file ssh records new hosts in (default: the user's ~/.ssh/known_hosts). */
  knownHostsFile?: string;
}

export function checkKnownHostsFile(file: string | undefined): void {
  if (file !== undefined && !SAFE_PATH.test(file)) throw new Error(`The known-hosts file "${file}" must be an absolute path of letters, digits and . _ / -`);
}

/** The fixed ssh command git runs: new hosts are accepted once and then pinned, never prompted for. */
export function sshCommand(keyFile: string | null, options: SshOptions): string {
  for (const p of [keyFile ?? undefined, options.knownHostsFile]) {
    if (p !== undefined && !SAFE_PATH.test(p)) throw new Error(`Cannot use the path "${p}" in the ssh command`);
  }
  return [
    'ssh',
    ...(keyFile ? ['-i', keyFile, '-o', 'IdentitiesOnly=yes'] : []),
    '-o',
    'StrictHostKeyChecking=accept-new',
    '-o',
    'BatchMode=yes',
    ...(options.knownHostsFile ? ['-o', `UserKnownHostsFile=${options.knownHostsFile}`] : []),
  ].join(' ');
}

/** Runs fn with the key in a private temporary file; the file is gone when it settles. */
export async function withKeyFile<T>(privateKey: string, fn: (keyFile: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'berth-ssh-'));
  try {
    const keyFile = path.join(dir, 'id');
    // ssh refuses a key file without its final newline.
    await writeFile(keyFile, privateKey.replace(/\s*$/, '\n'), { mode: 0o600, flag: 'wx' });
    return await fn(keyFile);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
