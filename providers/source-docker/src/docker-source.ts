// Source type "docker": the saved image, run as it is; with a username and password, pulled
// from its registry (registryUrl, else the image's own host) with those credentials.
import type { ImageSource, SourceProvider, SourceRequest } from '@berth/core';

/** The registry host of an image reference (docker.io when the first component is not a host). */
export function registryOf(image: string): string {
  const first = image.split('/')[0]!;
  return image.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost') ? first : 'docker.io';
}

export class DockerSource implements SourceProvider {
  readonly id = 'docker';

  async resolve({ fields, secrets }: SourceRequest): Promise<ImageSource> {
    const image = fields.dockerImage as string | null | undefined;
    if (!image) throw new Error('No docker image is set: save one with saveDockerProvider');
    const username = fields.username as string | null | undefined;
    const password = secrets.password;
    const registryAuth = username && password ? { username, password, serveraddress: (fields.registryUrl as string | null | undefined) || registryOf(image) } : null;
    return { image, registryAuth };
  }
}
