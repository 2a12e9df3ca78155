// A workload's mount records as Swarm mounts. File mounts are written first, under the
// workload's own files directory, and bound read-only; bind mounts pass through (the mounts
// plugin checked their paths when they were stored); named volumes are created with the owner's
// labels first (or, existing, checked to be the organization's), so Swarm never makes one
// implicitly, unlabelled, nor mounts one that is not Berth's.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MountRecord } from '../attachments.ts';
import type { ServiceMount } from '../services.ts';
import type { Engine } from '../lifecycle.ts';
import type { Owner } from '../owners.ts';
import { ensureMountVolume } from './volumes.ts';

/** A file's path under the files directory: relative, no `..` segment. */
const FILE_PATH = /^(?!.*(?:^|\/)\.\.(?:\/|$))[A-Za-z0-9._/-]+$/;

export async function toServiceMounts(
  records: MountRecord[],
  filesDir: string,
  { docker, hosts }: Pick<Engine, 'docker' | 'hosts'>,
  owner: Owner,
  log: (line: string) => void,
): Promise<ServiceMount[]> {
  const out: ServiceMount[] = [];
  for (const m of records) {
    if (m.type === 'bind') out.push({ type: 'bind', source: m.hostPath!, target: m.mountPath });
    else if (m.type === 'volume') {
      if ((await ensureMountVolume(docker, hosts, m.volumeName!, owner, { adopted: m.volumeAdopted })) === 'created') log(`Created the volume ${m.volumeName}`);
      out.push({ type: 'volume', source: m.volumeName!, target: m.mountPath });
    } else {
      const rel = m.filePath || path.posix.basename(m.mountPath);
      if (!FILE_PATH.test(rel) || rel.startsWith('/')) throw new Error(`The file mount ${m.mountId} has an invalid file path`);
      const file = path.resolve(filesDir, rel);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, m.content ?? '');
      out.push({ type: 'bind', source: file, target: m.mountPath, readOnly: true, managed: true });
    }
  }
  return out;
}
