// What the dockerfile builder's tests share: build requests against an engine (each with a tag of
// its own, removed when the test file ends, and its log lines collected) and a run of a built image.
import type Docker from 'dockerode';
import type { Test } from 'tap';
import type { BuildRequest } from '@berth/core';

/** A maker of build requests for sourceDir, tagged `<repository>:<pid>-<n>`; the tags are removed at t's end. */
export function buildRequests(t: Test, docker: Docker, repository: string) {
  const tags: string[] = [];
  t.teardown(async () => {
    for (const tag of tags)
      await docker
        .getImage(tag)
        .remove({ force: true })
        .catch(() => {});
  });
  let n = 0;
  return (sourceDir: string, more: Partial<BuildRequest> = {}) => {
    const lines: string[] = [];
    const imageTag = `${repository}:${process.pid}-${++n}`;
    tags.push(imageTag);
    const req: BuildRequest = {
      engine: docker,
      sourceDir,
      buildPath: '',
      dockerfile: null,
      dockerContextPath: null,
      dockerBuildStage: null,
      publishDirectory: null,
      buildArgs: {},
      secrets: [],
      imageTag,
      labels: {},
      signal: new AbortController().signal,
      log: line => lines.push(line),
      ...more,
    };
    return { req, lines };
  };
}

/** Runs the image once with cmd; answers its exit code and its output (line ends as written). */
export async function runImage(docker: Docker, image: string, cmd: string[]): Promise<{ code: number; output: string }> {
  const container = await docker.createContainer({ Image: image, Cmd: cmd, Tty: true });
  try {
    await container.start();
    const { StatusCode } = await container.wait();
    return { code: StatusCode, output: (await container.logs({ stdout: true, stderr: true })).toString().replace(/\r\n/g, '\n') };
  } finally {
    await container.remove({ force: true });
  }
}
