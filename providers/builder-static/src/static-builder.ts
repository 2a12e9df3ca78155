// Build type "static": the publish directory served by a web-server image. The Dockerfile is
// generated into a temporary context next to a copy of the files, so nothing is written into
// the checkout and only checked values reach the Dockerfile text.
import { cp, stat } from 'node:fs/promises';
import path from 'node:path';
import { Type, type Builder, type BuildRequest, type Static } from '@berth/core';
import { appDirOf, buildWrittenContext, IMAGE_REF, resolveInside, skipBuildSecrets } from '@berth/provider-builder-dockerfile/engine';

/** An absolute directory of plain segments (none starting with "."): nothing the Dockerfile parser reads specially. */
const ROOT = /^\/(?:[A-Za-z0-9_-][A-Za-z0-9._-]*(?:\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*)?\/?$/;

/** The provider's options (`providers.builder.static.options`); their defaults are the builder's. */
export const StaticOptions = Type.Object(
  {
    image: Type.String({
      env: 'BERTH_STATIC_IMAGE',
      formerly: 'staticImage',
      pattern: IMAGE_REF.source,
      default: 'nginx:alpine',
      description: 'Web-server image of the static build type: it serves the files copied to root',
    }),
    root: Type.String({
      env: 'BERTH_STATIC_ROOT',
      formerly: 'staticRoot',
      pattern: '^/[A-Za-z0-9._/-]*$',
      default: '/usr/share/nginx/html',
      description: 'Directory inside that image that the web server serves',
    }),
  },
  { additionalProperties: false },
);

const optionDefault = (key: 'image' | 'root') => (StaticOptions.properties[key] as { default?: unknown }).default as string;

export type StaticBuilderOptions = Partial<Static<typeof StaticOptions>>;

export class StaticBuilder implements Builder {
  readonly id = 'static' as const;
  readonly image: string;
  readonly root: string;

  constructor(options: StaticBuilderOptions = {}) {
    const image = options.image ?? optionDefault('image');
    const root = options.root ?? optionDefault('root');
    if (!IMAGE_REF.test(image)) throw new Error(`The static builder's image "${image}" is not a valid image reference`);
    if (!ROOT.test(root)) throw new Error(`The static builder's root "${root}" is not a valid absolute directory`);
    this.image = image;
    this.root = root.length > 1 ? root.replace(/\/+$/, '') : root;
  }

  /** The generated Dockerfile: the copied files land in the served root. */
  dockerfile(): string {
    return `FROM ${this.image}\nCOPY site/ ${this.root === '/' ? '/' : `${this.root}/`}\n`;
  }

  async build(request: BuildRequest): Promise<void> {
    const app = appDirOf(request);
    const publish = resolveInside(app, request.publishDirectory, 'The publish directory', request.sourceDir);
    if (!(await stat(publish)).isDirectory()) throw new Error(`The publish directory "${request.publishDirectory}" is not a directory`);
    skipBuildSecrets(request, 'static');
    await buildWrittenContext(request, {
      prefix: 'berth-static-',
      dockerfile: this.dockerfile(),
      fill: async contextDir => {
        // Links are copied as links: they are resolved inside the image, never on the host.
        await cp(publish, path.join(contextDir, 'site'), { recursive: true, verbatimSymlinks: true });
        request.log(`Serving ${path.relative(request.sourceDir, publish) || '.'} from ${this.image} at ${this.root}`);
      },
      log: request.log,
    });
  }
}
