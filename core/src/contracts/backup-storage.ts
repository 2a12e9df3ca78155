// Where backup files go: one provider per kind of storage (an S3-compatible service, a directory
// on the host, a third party's). A destination record names its provider and its location; the
// backups plugin opens it through the provider and never asks which provider it is.
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';

/** A destination's settings as its record holds them (the secret already unsealed). */
export interface StorageLocation {
  /** The peer's `provider` field (AWS, Cloudflare, local...): a hint for the provider, never branched on by shared code. */
  provider: string | null;
  endpoint: string;
  region: string;
  bucket: string;
  accessKey: string;
  secretAccessKey: string;
  /** How every connection resolves the endpoint's name: Berth's outbound guard (checked addresses only); a network provider passes it to its client. */
  lookup?: LookupFunction;
}

/** One stored object, as listings answer it. */
export interface StoredObject {
  /** The key within the bucket ("<prefix>/<file>"). */
  key: string;
  size: number;
  lastModified: Date | null;
}

/** What went wrong, for testConnection's answer and the backup's log: which part failed. */
export type StorageFailure = 'endpoint' | 'auth' | 'bucket' | 'write' | 'read' | 'delete' | 'missing';

/** An opened destination: its objects by key. Every failure is a StorageError. */
export interface BackupStore {
  /** Streams the body to the key (multipart where the provider has it); resolves with the bytes stored once they are all stored. */
  put(key: string, body: Readable, options?: { signal?: AbortSignal }): Promise<{ size: number }>;
  /** The object's bytes as a stream; StorageError 'missing' when there is none. */
  get(key: string, options?: { signal?: AbortSignal }): Promise<Readable>;
  /** The objects whose key starts with prefix, any order. */
  list(prefix: string): Promise<StoredObject[]>;
  /** Deletes the object (no error when it is already gone). */
  remove(key: string): Promise<void>;
}

export interface BackupStorage {
  /** The provider's id: the value of a destination's `provider` that selects it. */
  readonly id: string;
  /** What users call it ("S3-compatible storage"), for messages. */
  readonly label: string;
  /** Whether it serves destinations whose `provider` names no enabled storage provider (the S3 one: AWS, Cloudflare, Minio...). */
  readonly servesOtherProviders: boolean;
  /** Checks the settings' form (a path, an endpoint URL) and answers the field and message of the first problem, or null. */
  validate(location: StorageLocation): { field: keyof StorageLocation; message: string } | null;
  /** A handle on the destination; opening does no I/O. */
  open(location: StorageLocation): BackupStore;
}

declare module '../provider.ts' {
  interface ProviderContracts {
    /** `storage.<id>`: where backup files are kept (s3, local...). */
    storage: BackupStorage;
  }
}
