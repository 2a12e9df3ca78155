// A local stand-in for valkey/valkey:8 (nothing can be pulled here): berth-test/redis:1 with the
// valkey-server and valkey-cli names (Valkey is Redis 7.2's fork: same protocol, options and
// commands) and an entrypoint that starts `valkey-server` as the public image does. So the driver
// runs unchanged. Built from the local image with the engine's classic builder, never pulled; kept
// like the other berth-test images, and rebuilt when its recipe or its base changes.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';
import { TEST_REDIS_IMAGE } from '@berth/core/testing';

export const TEST_VALKEY_IMAGE = 'berth-test/valkey:1';

const DOCKERFILE = `FROM ${TEST_REDIS_IMAGE}
# redis-server chooses its mode by the name it is called with; "valkey-server" is the server.
RUN ln -s redis-server /usr/bin/valkey-server && ln -s redis-cli /usr/bin/valkey-cli
COPY valkey-entrypoint.sh /usr/local/bin/valkey-entrypoint.sh
ENTRYPOINT ["valkey-entrypoint.sh"]
CMD ["valkey-server"]
`;

// As the public valkey image's entrypoint: options alone mean valkey-server, which runs unprivileged.
const ENTRYPOINT = `#!/bin/sh
set -eu
case "\${1:-}" in -*) set -- valkey-server "$@" ;; esac
if [ "\${1:-}" = valkey-server ] && [ "$(id -u)" = 0 ]; then
  find . \\! -user redis -exec chown redis:redis '{}' +
  exec setpriv --reuid=redis --regid=redis --init-groups "$0" "$@"
fi
exec "$@"
`;

const LOCK = path.join(os.tmpdir(), 'berth-test-valkey-image.lock');
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

async function recipeOf(docker: Docker): Promise<string> {
  const base = await docker
    .getImage(TEST_REDIS_IMAGE)
    .inspect()
    .catch(() => {
      throw new Error(`${TEST_REDIS_IMAGE} is not on this host (scripts/services.sh builds the test images)`);
    });
  return createHash('sha256').update(base.Id).update(DOCKERFILE).update(ENTRYPOINT).digest('hex').slice(0, 16);
}

const currentRecipe = (docker: Docker) =>
  docker
    .getImage(TEST_VALKEY_IMAGE)
    .inspect()
    .then(
      i => i.Config?.Labels?.['berth-test.recipe'] ?? null,
      () => null,
    );

/** One builder at a time across test processes (tap runs files in parallel); a lock older than 5 minutes is stale. */
async function withLock<T>(fn: () => Promise<T>): Promise<T> {
  for (const until = Date.now() + 300_000; ;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const age = Date.now() - (statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 300_000) rmSync(LOCK, { recursive: true, force: true });
      else if (Date.now() > until) throw new Error(`Timed out waiting for ${LOCK}`);
      else await sleep(200);
    }
  }
  try {
    return await fn();
  } finally {
    rmdirSync(LOCK);
  }
}

/** Makes sure berth-test/valkey:1 exists and matches this recipe; returns its name. */
export async function ensureValkeyTestImage(docker: Docker): Promise<string> {
  const recipe = await recipeOf(docker);
  if ((await currentRecipe(docker)) === recipe) return TEST_VALKEY_IMAGE;
  return withLock(async () => {
    if ((await currentRecipe(docker)) === recipe) return TEST_VALKEY_IMAGE;
    const previous = await docker
      .getImage(TEST_VALKEY_IMAGE)
      .inspect()
      .then(
        i => i.Id,
        () => null,
      );
    const context = mkdtempSync(path.join(os.tmpdir(), 'berth-valkey-image-'));
    try {
      writeFileSync(path.join(context, 'Dockerfile'), DOCKERFILE);
      writeFileSync(path.join(context, 'valkey-entrypoint.sh'), ENTRYPOINT, { mode: 0o755 });
      const stream = await docker.buildImage(
        { context, src: ['Dockerfile', 'valkey-entrypoint.sh'] },
        { t: TEST_VALKEY_IMAGE, labels: { 'berth-test.recipe': recipe }, pull: false, rm: true, forcerm: true },
      );
      const output = await new Promise<{ error?: string; errorDetail?: { message?: string } }[]>((resolve, reject) =>
        docker.modem.followProgress(stream, (err: Error | null, out: unknown[]) => (err ? reject(err) : resolve(out as never))),
      );
      const failed = output.find(o => o.error || o.errorDetail);
      if (failed) throw new Error(`Building ${TEST_VALKEY_IMAGE} failed: ${failed.errorDetail?.message ?? failed.error}`);
    } finally {
      rmSync(context, { recursive: true, force: true });
    }
    if ((await currentRecipe(docker)) !== recipe) throw new Error(`Building ${TEST_VALKEY_IMAGE} left no image with recipe ${recipe}`);
    // The stale build, now untagged, would linger as a dangling image.
    const built = (await docker.getImage(TEST_VALKEY_IMAGE).inspect()).Id;
    if (previous && previous !== built)
      await docker
        .getImage(previous)
        .remove()
        .catch(() => undefined);
    return TEST_VALKEY_IMAGE;
  });
}
