// The errors providers throw for the plugins that use them to read: each carries what failed (the
// step, the part, the service's status) beside a message that starts with the provider's name. The
// contracts (./contracts) declare the shapes; these are the values both sides share, so they live
// in the kernel: a provider never imports a plugin.
import type { StorageFailure } from './contracts/backup-storage.ts';
import type { GitFailure } from './contracts/git-provider.ts';
import type { ChannelAnswer } from './contracts/notification-channel.ts';

/**
 * What the service answered when it did not do what was asked: its HTTP status (null when it
 * never answered) and its own message. The ai plugin turns it into a BAD_REQUEST quoting both,
 * with the key redacted; never into Berth's own 401 or 403.
 */
export class AiProviderError extends Error {
  readonly status: number | null;
  constructor(status: number | null, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AiProviderError';
    this.status = status;
  }
}

/** An error naming the part of the work that failed, for the plugin to map; named after its class. */
abstract class FailureError<F extends string> extends Error {
  readonly failure: F;
  constructor(failure: F, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.failure = failure;
  }
}

/** A provider's error, with the step that failed; the message starts with the provider's name. */
export class GitProviderError extends FailureError<GitFailure> {}

/** A storage error with the part that failed; the message starts with the provider's name. */
export class StorageError extends FailureError<StorageFailure> {}

/**
 * A send that did not go through: the provider's status and its error message (null and the
 * network error when it never answered). The message starts with the channel's label.
 */
export class ChannelError extends Error {
  readonly status: number | null;
  readonly body: string;
  constructor(message: string, answer: ChannelAnswer = { status: null, body: '' }, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ChannelError';
    this.status = answer.status;
    this.body = answer.body;
  }
}
