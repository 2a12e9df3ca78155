// What sshKey.* takes and answers. Field names follow the peer's API; no answer but
// sshKey.generate's carries a private key.
import { SshKeySummary, Type, schema, type Static } from '@berth/core';

const { Nullable, NonEmpty, Timestamp } = schema;

export const KeyType = Type.Union([Type.Literal('rsa'), Type.Literal('ed25519')]);
export type KeyType = Static<typeof KeyType>;

export const CreateInput = Type.Object({
  name: NonEmpty({ maxLength: 255 }),
  description: Type.Optional(Nullable(Type.String())),
  publicKey: NonEmpty({ description: 'an OpenSSH public key line: ssh-ed25519|ssh-rsa <base64> [comment]' }),
  privateKey: NonEmpty({ description: 'the matching private key: PEM (PKCS#8, PKCS#1) or OpenSSH format, without passphrase' }),
});
export type CreateInput = Static<typeof CreateInput>;

export const SshKeyIdInput = Type.Object({ sshKeyId: NonEmpty() });

export const UpdateInput = Type.Object({
  sshKeyId: NonEmpty(),
  name: Type.Optional(NonEmpty({ maxLength: 255 })),
  description: Type.Optional(Nullable(Type.String())),
  lastUsedAt: Type.Optional(Nullable(Timestamp())),
});
export type UpdateInput = Static<typeof UpdateInput>;

export const GenerateInput = Type.Object({ type: Type.Optional(Type.Union([Type.Literal('rsa'), Type.Literal('ed25519')], { default: 'ed25519' })) });
export type GenerateInput = Static<typeof GenerateInput>;

/** A stored key as every read answers it: without its private key (the contract's summary, which server.one joins too). */
export const SshKeyView = SshKeySummary;
export type SshKeyView = SshKeySummary;

export const GeneratedKeyPair = Type.Object({
  privateKey: Type.String({ description: 'OpenSSH format (-----BEGIN OPENSSH PRIVATE KEY-----), no passphrase' }),
  publicKey: Type.String({ description: 'an OpenSSH public key line' }),
});
export type GeneratedKeyPair = Static<typeof GeneratedKeyPair>;
