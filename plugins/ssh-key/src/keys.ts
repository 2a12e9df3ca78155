// SSH key material with node:crypto only: key pairs in the formats OpenSSH reads, parsing of
// what users paste (PEM or OpenSSH private keys, OpenSSH public key lines) and the check that
// a private and a public key belong together. Errors are plain messages; the service names the field.
import { createPrivateKey, createPublicKey, generateKeyPair, randomBytes, type JsonWebKey, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

export type SshKeyType = 'rsa' | 'ed25519';

const generate = promisify(generateKeyPair);
const RSA_BITS = 4096;
const OPENSSH_MAGIC = 'openssh-key-v1\0';

// ------------------------------------------------------------ SSH wire format (RFC 4251 §5)
const sshString = (b: Buffer | string) => {
  const data = typeof b === 'string' ? Buffer.from(b) : b;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  return Buffer.concat([len, data]);
};
/** A non-negative mpint: no superfluous leading zeros, one zero byte when the high bit is set. */
const sshMpint = (unsigned: Buffer) => {
  let i = 0;
  while (i < unsigned.length && unsigned[i] === 0) i++;
  const trimmed = unsigned.subarray(i);
  return sshString(trimmed.length && trimmed[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
};

class WireReader {
  #buf: Buffer;
  #at = 0;
  constructor(buf: Buffer) {
    this.#buf = buf;
  }
  uint32(): number {
    if (this.#at + 4 > this.#buf.length) throw new Error('truncated key data');
    const v = this.#buf.readUInt32BE(this.#at);
    this.#at += 4;
    return v;
  }
  bytes(): Buffer {
    const len = this.uint32();
    if (this.#at + len > this.#buf.length) throw new Error('truncated key data');
    const v = this.#buf.subarray(this.#at, this.#at + len);
    this.#at += len;
    return v;
  }
  text(): string {
    return this.bytes().toString('latin1');
  }
  get done(): boolean {
    return this.#at === this.#buf.length;
  }
}

const b64u = (b: Buffer) => b.toString('base64url');
const fromB64u = (s: string | undefined) => Buffer.from(s ?? '', 'base64url');
/** Unsigned big-endian magnitude of an mpint (drops the sign byte). */
const magnitude = (mpint: Buffer) => {
  let i = 0;
  while (i < mpint.length - 1 && mpint[i] === 0) i++;
  return mpint.subarray(i);
};
const toBig = (b: Buffer) => (b.length ? BigInt(`0x${b.toString('hex')}`) : 0n);
const fromBig = (n: bigint) => {
  const hex = n.toString(16);
  return Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
};

// ------------------------------------------------------------ public keys
/** The SSH wire blob of a public key (RFC 8709 for Ed25519, RFC 4253 for RSA). */
function publicBlob(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' }) as JsonWebKey;
  if (key.asymmetricKeyType === 'ed25519') return Buffer.concat([sshString('ssh-ed25519'), sshString(fromB64u(jwk.x))]);
  if (key.asymmetricKeyType === 'rsa') return Buffer.concat([sshString('ssh-rsa'), sshMpint(fromB64u(jwk.e)), sshMpint(fromB64u(jwk.n))]);
  throw new Error(`${key.asymmetricKeyType ?? 'this'} keys are not supported (use RSA or Ed25519)`);
}

const openSshLine = (blob: Buffer) => `${new WireReader(blob).text()} ${blob.toString('base64')}`;

/** The wire blob of an OpenSSH public key line `ssh-(rsa|ed25519) <base64> [comment]`. */
export function parsePublicKey(line: string): Buffer {
  const m = /^(ssh-rsa|ssh-ed25519) ([A-Za-z0-9+/]+={0,2})(?: [^\r\n]*)?$/.exec(line.trim());
  if (!m) throw new Error('not an OpenSSH public key (expected "ssh-ed25519 <base64> [comment]" or "ssh-rsa <base64> [comment]")');
  const blob = Buffer.from(m[2]!, 'base64');
  const r = new WireReader(blob);
  if (r.text() !== m[1]) throw new Error('the key data does not match its type');
  if (m[1] === 'ssh-ed25519') {
    if (r.bytes().length !== 32) throw new Error('an Ed25519 key has 32 bytes');
  } else {
    r.bytes();
    if (magnitude(r.bytes()).length < 128) throw new Error('RSA keys shorter than 1024 bits are not accepted');
  }
  if (!r.done) throw new Error('trailing data after the key');
  // Canonical form, so the comparison with a derived key does not depend on mpint padding.
  const rebuilt = publicBlob(fromBlob(blob));
  return rebuilt;
}

/** A public KeyObject from a wire blob (checked by parsePublicKey). */
function fromBlob(blob: Buffer): KeyObject {
  const r = new WireReader(blob);
  const type = r.text();
  if (type === 'ssh-ed25519') return createPublicKey({ format: 'jwk', key: { kty: 'OKP', crv: 'Ed25519', x: b64u(r.bytes()) } });
  const e = magnitude(r.bytes());
  const n = magnitude(r.bytes());
  return createPublicKey({ format: 'jwk', key: { kty: 'RSA', e: b64u(e), n: b64u(n) } });
}

// ------------------------------------------------------------ private keys
/** A private key from PEM (PKCS#8, PKCS#1) or the OpenSSH format; passphrase-protected keys are refused. */
export function parsePrivateKey(text: string): KeyObject {
  const trimmed = text.trim();
  let key: KeyObject;
  if (trimmed.startsWith('-----BEGIN OPENSSH PRIVATE KEY-----')) {
    key = parseOpenSshPrivateKey(trimmed);
  } else {
    if (/ENCRYPTED/.test(trimmed)) throw new Error('passphrase-protected keys are not supported');
    try {
      key = createPrivateKey({ key: trimmed, format: 'pem' });
    } catch {
      throw new Error('not a private key in PEM or OpenSSH format');
    }
  }
  publicBlob(key); // refuses key types SSH servers here cannot use
  return key;
}

function parseOpenSshPrivateKey(pem: string): KeyObject {
  const body = pem.replace(/-----(BEGIN|END) OPENSSH PRIVATE KEY-----/g, '').replace(/\s+/g, '');
  const data = Buffer.from(body, 'base64');
  if (data.subarray(0, OPENSSH_MAGIC.length).toString('latin1') !== OPENSSH_MAGIC) throw new Error('not a private key in OpenSSH format');
  const r = new WireReader(data.subarray(OPENSSH_MAGIC.length));
  const cipher = r.text();
  r.text(); // kdf name
  r.bytes(); // kdf options
  if (cipher !== 'none') throw new Error('passphrase-protected keys are not supported');
  if (r.uint32() !== 1) throw new Error('expected exactly one key in the file');
  r.bytes(); // public key, repeated in the private section
  const s = new WireReader(r.bytes());
  if (s.uint32() !== s.uint32()) throw new Error('corrupt OpenSSH private key');
  const type = s.text();
  if (type === 'ssh-ed25519') {
    const pub = s.bytes();
    const priv = s.bytes();
    if (pub.length !== 32 || priv.length !== 64) throw new Error('corrupt Ed25519 key');
    return createPrivateKey({ format: 'jwk', key: { kty: 'OKP', crv: 'Ed25519', x: b64u(pub), d: b64u(priv.subarray(0, 32)) } });
  }
  if (type === 'ssh-rsa') {
    const [n, e, d, iqmp, p, q] = [s.bytes(), s.bytes(), s.bytes(), s.bytes(), s.bytes(), s.bytes()].map(magnitude) as [Buffer, Buffer, Buffer, Buffer, Buffer, Buffer];
    const dBig = toBig(d);
    return createPrivateKey({
      format: 'jwk',
      key: { kty: 'RSA', n: b64u(n), e: b64u(e), d: b64u(d), p: b64u(p), q: b64u(q), qi: b64u(iqmp), dp: b64u(fromBig(dBig % (toBig(p) - 1n))), dq: b64u(fromBig(dBig % (toBig(q) - 1n))) },
    });
  }
  throw new Error(`${type} keys are not supported (use RSA or Ed25519)`);
}

/** Whether the public key line belongs to the private key. */
export function keysMatch(privateKey: KeyObject, publicKeyBlob: Buffer): boolean {
  return publicBlob(createPublicKey(privateKey)).equals(publicKeyBlob);
}

/** The public key line of a private key, as `ssh-keygen -y` prints it (without comment). */
export const publicKeyOf = (privateKey: KeyObject) => openSshLine(publicBlob(createPublicKey(privateKey)));

/**
 * The private key in OpenSSH's own format (openssh-key-v1, no passphrase), which every OpenSSH
 * and ssh2 read; PKCS#8 PEM is not enough, since OpenSSH before 9.6 cannot load Ed25519 from it.
 */
export function toOpenSshPrivateKey(key: KeyObject, comment = ''): string {
  const jwk = key.export({ format: 'jwk' }) as JsonWebKey;
  const pub = publicBlob(createPublicKey(key));
  let fields: Buffer[];
  if (key.asymmetricKeyType === 'ed25519') {
    const x = fromB64u(jwk.x);
    fields = [sshString('ssh-ed25519'), sshString(x), sshString(Buffer.concat([fromB64u(jwk.d), x]))];
  } else {
    fields = [sshString('ssh-rsa'), ...[jwk.n, jwk.e, jwk.d, jwk.qi, jwk.p, jwk.q].map(v => sshMpint(fromB64u(v)))];
  }
  const check = randomBytes(4);
  let section = Buffer.concat([check, check, ...fields, sshString(comment)]);
  const pad = (8 - (section.length % 8)) % 8;
  section = Buffer.concat([section, Buffer.from(Array.from({ length: pad }, (_, i) => i + 1))]);
  const body = Buffer.concat([Buffer.from(OPENSSH_MAGIC, 'latin1'), sshString('none'), sshString('none'), sshString(''), Buffer.from([0, 0, 0, 1]), sshString(pub), sshString(section)]).toString(
    'base64',
  );
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${body.match(/.{1,70}/g)!.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

/** A new key pair: the private key in OpenSSH format, the public key as an OpenSSH line. */
export async function generateSshKeyPair(type: SshKeyType): Promise<{ privateKey: string; publicKey: string }> {
  const pair = type === 'rsa' ? await generate('rsa', { modulusLength: RSA_BITS, publicExponent: 0x10001 }) : await generate('ed25519');
  return { privateKey: toOpenSshPrivateKey(pair.privateKey), publicKey: openSshLine(publicBlob(pair.publicKey)) };
}
