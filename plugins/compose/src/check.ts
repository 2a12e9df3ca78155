// The checks a compose file passes before Berth will create a stack from text it did not write
// (an AI suggestion): it parses, the compose program would not refuse it, the instance's host
// access policy allows it, and every service names a well-formed image (nothing to build).
// Served in the container as `composeChecks`, so other plugins ask without importing internals.
import path from 'node:path';
import { isMap } from 'yaml';
import type { Cradle } from '@berth/core';
import { composeDir } from './deployer.ts';
import { ignoredKeys, parseCompose, serviceNames, type ComposeType } from './file/index.ts';
import { hostRefusal } from './host-policy.ts';

/** A docker image reference: [registry[:port]/]path[:tag][@sha256:digest], lowercase path components. */
const IMAGE_REF =
  /^(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;

/** Whether `ref` is a well-formed image reference (no interpolation, no spaces). */
export const isImageRef = (ref: string) => ref.length <= 255 && IMAGE_REF.test(ref);

export class ComposeChecks {
  readonly #cradle: () => Cradle;

  constructor(cradle: () => Cradle) {
    this.#cradle = cradle;
  }

  /** The names of the file's services (the file must parse). */
  serviceNames(text: string): string[] {
    return serviceNames(text);
  }

  /** Every problem of the file as a stack of `type` would run it (an empty list: it passes). */
  problems(text: string, type: ComposeType = 'docker-compose'): string[] {
    let doc;
    try {
      doc = parseCompose(text);
    } catch (e) {
      return [(e as Error).message];
    }
    const out: string[] = [];
    const services = doc.get('services');
    if (!isMap(services) || !services.items.length) out.push('The compose file declares no services');
    for (const item of isMap(services) ? services.items : []) {
      const name = String((item.key as { value?: unknown }).value ?? item.key);
      const svc = item.value;
      if (!isMap(svc)) {
        out.push(`services.${name}: must be a mapping`);
        continue;
      }
      if (svc.get('build') !== undefined) out.push(`services.${name}.build: a suggestion cannot build an image; name a published image in \`image\``);
      const image = svc.get('image');
      if (typeof image !== 'string' || !image.trim()) out.push(`services.${name}.image: missing`);
      else if (!isImageRef(image.trim())) out.push(`services.${name}.image: "${image.slice(0, 100)}" is not a well-formed image reference`);
    }
    for (const issue of ignoredKeys(text, type)) {
      if (issue.effect === 'refused') out.push(`${issue.service ? `services.${issue.service}.` : ''}${issue.key}: ${issue.reason}`);
    }
    // As the deployer checks it: the file in the stack's code/ directory, file mounts under files/.
    const stackDir = composeDir(this.#cradle().config.dataDir, 'stack-being-checked');
    const refused = hostRefusal(text, path.join(stackDir, 'code'), stackDir, this.#cradle().hostAccess);
    if (refused) out.push(`Refused by this instance's host access policy: ${refused.message}`);
    return out;
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The checks a compose file from outside passes before a stack is made of it. */
    composeChecks: ComposeChecks;
  }
}
