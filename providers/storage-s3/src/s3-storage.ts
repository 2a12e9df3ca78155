// An S3-compatible bucket through the AWS SDK v3: uploads stream in parts (lib-storage's
// Upload), so a dump is never held whole in memory or on disk. The SDK's errors become
// StorageErrors naming the part that failed (endpoint, auth, bucket) at this boundary.
import { pipeline, Transform, type Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { StorageError, type BackupStorage, type BackupStore, type StorageFailure, type StorageLocation, type StoredObject } from '@berth/core';

export interface S3Options {
  partSizeMiB: number;
  queueSize: number;
  forcePathStyle: boolean;
}

const AUTH = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'InvalidToken', 'ExpiredToken', 'Forbidden', 'AuthorizationHeaderMalformed']);
const BUCKET = new Set(['NoSuchBucket', 'InvalidBucketName', 'PermanentRedirect']);
const ENDPOINT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'TimeoutError']);

/** The SDK's error as a StorageError naming what failed; `during` is the part that was being done. */
export function convertS3Error(e: unknown, during: StorageFailure, what: string): StorageError {
  if (e instanceof StorageError) return e;
  const err = e as { name?: string; code?: string; Code?: string; message?: string; $metadata?: { httpStatusCode?: number }; cause?: { code?: string } };
  const name = err.Code ?? err.name ?? '';
  const code = err.code ?? err.cause?.code ?? '';
  const status = err.$metadata?.httpStatusCode;
  let failure: StorageFailure = during;
  if (AUTH.has(name) || status === 403 || status === 401) failure = 'auth';
  else if (BUCKET.has(name)) failure = 'bucket';
  else if (name === 'NoSuchKey' || name === 'NotFound') failure = 'missing';
  else if (ENDPOINT.has(code) || ENDPOINT.has(name) || /ECONNREFUSED|ENOTFOUND|getaddrinfo/.test(err.message ?? '')) failure = 'endpoint';
  const detail =
    failure === 'endpoint'
      ? `cannot reach the endpoint (${code || name || err.message})`
      : failure === 'auth'
        ? `the access key or secret was refused (${name || status})`
        : failure === 'bucket'
          ? `the bucket is missing or not reachable with these settings (${name})`
          : failure === 'missing'
            ? 'there is no such object'
            : `${name || code || 'error'}: ${err.message ?? ''}`.trim();
  return new StorageError(failure, `s3 storage: ${what}: ${detail}`, { cause: e });
}

class S3Store implements BackupStore {
  readonly #client: Promise<S3Client>;
  readonly #bucket: string;
  readonly #options: S3Options;

  constructor(client: Promise<S3Client>, bucket: string, options: S3Options) {
    this.#client = client;
    this.#bucket = bucket;
    this.#options = options;
  }

  async put(key: string, body: Readable, options: { signal?: AbortSignal } = {}): Promise<{ size: number }> {
    const client = await this.#client;
    const { Upload } = await import('@aws-sdk/lib-storage');
    let size = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _e, done) {
        size += chunk.length;
        done(null, chunk);
      },
    });
    // A source that fails mid-way destroys `counted` with its error, which fails the upload.
    pipeline(body, counted, () => {});
    const upload = new Upload({
      client,
      params: { Bucket: this.#bucket, Key: key, Body: counted },
      partSize: this.#options.partSizeMiB * 1024 * 1024,
      queueSize: this.#options.queueSize,
      leavePartsOnError: false,
    });
    const abort = () => void upload.abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    // A source that fails mid-way must fail the upload, never complete a truncated object.
    const failed = new Promise<never>((_, reject) =>
      counted.once('error', e => {
        void upload.abort();
        reject(e);
      }),
    );
    try {
      await Promise.race([upload.done(), failed]);
    } catch (e) {
      throw convertS3Error(e, 'write', `uploading ${key}`);
    } finally {
      options.signal?.removeEventListener('abort', abort);
    }
    return { size };
  }

  async get(key: string, options: { signal?: AbortSignal } = {}): Promise<Readable> {
    const client = await this.#client;
    const { GetObjectCommand } = await import('@aws-sdk/client-s3');
    try {
      const out = await client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: key }), { abortSignal: options.signal });
      return out.Body as Readable;
    } catch (e) {
      throw convertS3Error(e, 'read', `reading ${key}`);
    }
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const client = await this.#client;
    const { ListObjectsV2Command } = await import('@aws-sdk/client-s3');
    const out: StoredObject[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: prefix, ContinuationToken: token }));
        for (const o of page.Contents ?? []) if (o.Key) out.push({ key: o.Key, size: o.Size ?? 0, lastModified: o.LastModified ?? null });
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (e) {
      throw convertS3Error(e, 'read', `listing ${prefix || 'the bucket'}`);
    }
    return out;
  }

  async remove(key: string): Promise<void> {
    const client = await this.#client;
    const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
    try {
      await client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key }));
    } catch (e) {
      throw convertS3Error(e, 'delete', `deleting ${key}`);
    }
  }
}

export class S3Storage implements BackupStorage {
  readonly id = 's3';
  readonly label = 'S3-compatible storage';
  readonly servesOtherProviders = true;
  readonly #options: S3Options;

  constructor(options: S3Options) {
    this.#options = options;
  }

  validate(location: StorageLocation) {
    if (!location.bucket) return { field: 'bucket' as const, message: 'is required for S3-compatible storage' };
    if (location.endpoint) {
      try {
        const url = new URL(location.endpoint);
        if (url.protocol !== 'http:' && url.protocol !== 'https:') return { field: 'endpoint' as const, message: 'must be an http(s) URL' };
      } catch {
        return { field: 'endpoint' as const, message: 'must be an http(s) URL (https://s3.example.com)' };
      }
    }
    return null;
  }

  open(location: StorageLocation): BackupStore {
    const client = Promise.all([import('@aws-sdk/client-s3'), location.lookup ? Promise.all([import('node:http'), import('node:https')]) : null]).then(
      ([{ S3Client }, agents]) =>
        new S3Client({
          // Every connection resolves the endpoint through Berth's guard (its addresses checked at each connect).
          ...(agents && location.lookup ? { requestHandler: { httpAgent: new agents[0].Agent({ lookup: location.lookup }), httpsAgent: new agents[1].Agent({ lookup: location.lookup }) } } : {}),
          region: location.region || 'us-east-1',
          ...(location.endpoint ? { endpoint: location.endpoint } : {}),
          forcePathStyle: this.#options.forcePathStyle,
          credentials: { accessKeyId: location.accessKey, secretAccessKey: location.secretAccessKey },
          maxAttempts: 2,
          // Checksums only where S3 requires them: many S3-compatible services refuse the SDK's default trailers.
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        }),
    );
    return new S3Store(client, location.bucket, this.#options);
  }
}
