// What a compose file may reach of the host is the operator's to grant, as for every workload:
// bind mounts only inside the stack's own directory or below the configured bindMountRoots, the
// host's network namespaces only when hostNetworks is on, and never privileged containers,
// devices, added capabilities or the host's pid/ipc namespaces. Checked on the file as it will
// run (after a git fetch too), before the program starts.
import path from 'node:path';
import { isMap, isScalar, isSeq } from 'yaml';
import type { BerthError } from '@berth/core';
import type { HostAccess } from '@berth/plugin-workloads';
import { parseCompose } from './file/index.ts';

const inside = (p: string, dir: string) => p === dir || p.startsWith(dir + path.sep);

/** The first refusal of the policy for the file (deployed from fileDir, the stack's directory stackDir), or null. */
export function hostRefusal(text: string, fileDir: string, stackDir: string, policy: HostAccess): BerthError | Error | null {
  const doc = parseCompose(text);
  const bind = (source: string, field: string) => {
    const abs = path.resolve(fileDir, source.replace(/^~(?=\/|$)/, '/root'));
    return inside(abs, stackDir) ? null : policy.bindMountRefusal(abs, field);
  };
  const services = doc.get('services');
  for (const item of isMap(services) ? services.items : []) {
    const name = String((item.key as { value?: unknown }).value ?? item.key);
    const svc = item.value;
    if (!isMap(svc)) continue;
    const field = `composeFile.services.${name}`;
    for (const key of ['privileged', 'devices', 'cap_add', 'security_opt', 'userns_mode', 'cgroup_parent']) {
      const v = svc.get(key);
      if (v !== undefined && v !== null && v !== false) return new Error(`${field}.${key}: not allowed on this instance (containers get no host privileges)`);
    }
    for (const key of ['pid', 'ipc', 'uts']) {
      if (String(svc.get(key) ?? '') === 'host') return new Error(`${field}.${key}: the host's ${key} namespace is not allowed on this instance`);
    }
    const mode = String(svc.get('network_mode') ?? '');
    if (mode === 'host' || mode === 'none') {
      const refused = policy.networkRefusal({ name: mode }, `${field}.network_mode`);
      if (refused) return refused;
    }
    const volumes = svc.get('volumes');
    for (const [i, v] of (isSeq(volumes) ? volumes.items : []).entries()) {
      if (isScalar(v)) {
        const source = String(v.value).split(':')[0] ?? '';
        if (/^[/.~]/.test(source)) {
          const refused = bind(source, `${field}.volumes.${i}`);
          if (refused) return refused;
        }
      } else if (isMap(v) && v.get('type') === 'bind') {
        const refused = bind(String(v.get('source') ?? ''), `${field}.volumes.${i}.source`);
        if (refused) return refused;
      }
    }
  }
  // A local volume with driver_opts device is a bind mount in disguise.
  const volumes = doc.get('volumes');
  for (const item of isMap(volumes) ? volumes.items : []) {
    const device = isMap(item.value) ? item.value.getIn(['driver_opts', 'device']) : undefined;
    if (typeof device === 'string' && device.startsWith('/')) {
      const refused = bind(device, `composeFile.volumes.${String((item.key as { value?: unknown }).value)}.driver_opts.device`);
      if (refused) return refused;
    }
  }
  return null;
}
