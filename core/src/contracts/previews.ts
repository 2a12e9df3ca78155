// A pull request's preview deployment as the API answers it: the preview plugin keeps the records,
// and the application plugin answers them in application.one (previewDeployments), with or without
// the preview plugin loaded; both read the shape here.
import Type from 'typebox';
import { Nullable, Timestamp } from '../schema.ts';

/** A pull request's preview deployment (the preview plugin's record), with the peer's fields. */
export const PreviewDeploymentFields = Type.Object({
  previewDeploymentId: Type.String(),
  branch: Type.String({ description: "the pull request's head branch" }),
  pullRequestId: Type.String(),
  pullRequestNumber: Type.String(),
  pullRequestURL: Type.String(),
  pullRequestTitle: Type.String(),
  pullRequestCommentId: Type.String({ description: "the id of the comment kept up to date on the pull request ('' until it is made)" }),
  previewStatus: Type.String({ description: 'idle, running, done or error' }),
  appName: Type.String({ description: "the preview's service: <application appName>-pr-<number>" }),
  applicationId: Type.String(),
  domainId: Nullable(Type.String()),
  createdAt: Timestamp(),
  expiresAt: Nullable(Timestamp()),
});
