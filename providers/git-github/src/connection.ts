// What a GitHub App connection keeps and how its router answers: the peer's github table and
// github.* procedures (field names, inputs, answers), kept by the git-provider plugin in its
// generic connection record. A connection is made by the App manifest flow (Berth's
// github.setupState, the peer's /api/providers/github/setup, then github.installState for the
// App's installation): there is no github.create. The App's id, installation and webhook secret
// are also what its deliveries are matched and checked by (`app`).
import { Type, schema, type GitConnectionForm } from '@berth/core';

const { NonEmpty } = schema;
const Id = NonEmpty({ maxLength: 255 });

export const GITHUB_COM = 'https://github.com';

const Text = () => Type.Optional(schema.Nullable(Type.String()));

/** application.saveGithubProvider's fields, as the peer takes them. */
export const githubSave = {
  repository: Text(),
  owner: Text(),
  buildPath: Text(),
  githubId: Text(),
  branch: Type.Optional(schema.BranchName()),
  triggerType: Type.Optional(Type.Enum(['push', 'tag'])),
};

/** An App a manifest made, as GitHub's conversion answers it in the github record's fields (githubAppName: the App's page). */
export interface ManifestApp {
  name: string;
  githubAppName: string;
  githubAppId: number;
  githubClientId: string;
  githubClientSecret: string;
  githubWebhookSecret: string | null;
  githubPrivateKey: string;
  githubUrl: string;
}

/** The form of a provider that converts manifests (the provider's own convertManifest). */
export function githubConnection(provider: { convertManifest(githubUrl: string, code: string): Promise<ManifestApp> }): GitConnectionForm {
  return {
    settings: Type.Object({
      githubAppName: Type.String({ description: "the App's page (the manifest's html_url), or its slug" }),
      githubAppId: Type.Number(),
      githubClientId: Type.String(),
      githubInstallationId: Type.String(),
      githubUrl: Type.String(),
    }),
    secrets: Type.Object({ githubClientSecret: Type.String(), githubPrivateKey: Type.String({ description: "the App's private key (PEM)" }), githubWebhookSecret: Type.String() }),
    app: { installation: 'githubInstallationId', app: 'githubAppId', secret: 'githubWebhookSecret' },
    appSetup: {
      statePrefix: 'gh',
      url: { setting: 'githubUrl', default: GITHUB_COM },
      async convert(githubUrl, code) {
        const { name, githubClientSecret, githubWebhookSecret, githubPrivateKey, ...settings } = await provider.convertManifest(githubUrl, code);
        return { name, settings, secrets: { githubClientSecret, githubWebhookSecret, githubPrivateKey } };
      },
      installPage(account) {
        // The record keeps the App's page (the manifest's html_url), or its slug.
        const app = String(account.settings.githubAppName ?? '');
        return `${/^https?:\/\//.test(app) ? app.replace(/\/+$/, '') : `${String(account.settings.githubUrl ?? GITHUB_COM).replace(/\/+$/, '')}/apps/${encodeURIComponent(app)}`}/installations/new`;
      },
    },
    wire: {
      record: true,
      webUrls: ['githubUrl'],
      defaults: { githubUrl: GITHUB_COM },
      create: null,
      configured: { field: 'isConfigured', when: ['githubAppId', 'githubPrivateKey', 'githubInstallationId'], description: 'App id, private key and installation are all set' },
      providers: {
        summary: 'The GitHub connections that are configured (App id, private key and installation set)',
        fields: ['githubId', 'githubUrl'],
        when: ['githubAppId', 'githubPrivateKey', 'githubInstallationId'],
      },
      repositories: {
        summary: "Every repository the App's installation reaches (all pages)",
        output: Type.Object({
          id: Type.Number(),
          name: Type.String(),
          full_name: Type.String(),
          owner: Type.Object({ login: Type.String() }),
          private: Type.Boolean(),
          clone_url: Type.String(),
          default_branch: schema.Nullable(Type.String()),
        }),
        view: r => ({ id: Number(r.id), name: r.name, full_name: `${r.owner}/${r.name}`, owner: { login: r.owner }, private: r.private, clone_url: r.cloneUrl, default_branch: r.defaultBranch }),
      },
      branches: {
        summary: 'Every branch of a repository (all pages); none without githubId',
        input: Type.Object({ repo: NonEmpty({ maxLength: 255 }), owner: NonEmpty({ maxLength: 255 }), githubId: Type.Optional(Type.String({ maxLength: 255 })) }),
        output: Type.Object({ name: Type.String(), commit: Type.Object({ sha: Type.String() }) }),
        repository: input => ({ owner: String(input.owner), name: String(input.repo) }),
        view: b => ({ name: b.name, commit: { sha: b.commit } }),
      },
      testConnection: { summary: "Runs a deploy's path: lists the repositories (API), then git ls-remote on the first with a fresh clone credential; a failure says which step" },
      update: {
        summary: 'Rename the connection and its App name',
        checked: false,
        answer: 'ok',
        input: Type.Object({ githubId: Id, name: NonEmpty({ maxLength: 255 }), gitProviderId: Id, githubAppName: NonEmpty({ maxLength: 255 }) }),
      },
    },
  };
}
