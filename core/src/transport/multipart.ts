// Multipart bodies for the procedures that take an upload (`multipart: { fileField }`): the form's
// fields are the input (text, or JSON where a part says so), and its one file is streamed to a temporary file under dataDir/uploads
// (never held in memory), cut off past the limit with 413, and removed once the answer is sent
// (@fastify/multipart's saved request files). The parser is imported and registered only when a
// procedure declares an upload, and only in the scope of those procedures' routes: every other
// route still refuses a multipart body with 415.
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BerthError, badRequest } from '../errors.ts';
import type { MultipartSpec, UploadedFile } from '../procedure.ts';

/** What the form may hold besides its file: a few short text fields. */
const FIELDS = { fields: 32, fieldSize: 64 * 1024 };

/** Registers the multipart parser in `scope` (the routes of the upload procedures). */
export async function acceptMultipart(scope: FastifyInstance): Promise<void> {
  const { default: multipart } = await import('@fastify/multipart');
  await scope.register(multipart, { limits: { ...FIELDS, files: 1 } });
}

/** The largest file a procedure takes: its own cap, never above the kernel's. */
export const uploadCap = (spec: MultipartSpec, uploadLimit: number) => Math.min(spec.maxBytes ?? uploadLimit, uploadLimit);

const tooLarge = (spec: MultipartSpec, max: number) =>
  new BerthError('PAYLOAD_TOO_LARGE', `${spec.fileField}: larger than ${max} bytes, the most an upload may have here (the config key uploadLimit)`, [
    { path: [spec.fileField], message: `${spec.fileField}: larger than ${max} bytes` },
  ]);

/**
 * The form's text fields (the first of a repeated name) and its file, saved under `dataDir`. A body
 * that declares a length past the limit is refused before it is read.
 */
export async function readUpload(req: FastifyRequest, spec: MultipartSpec, max: number, dataDir: string): Promise<{ fields: Record<string, unknown>; file?: UploadedFile }> {
  // The form's own bytes (boundaries, headers, fields) come on top of the file's.
  if (Number(req.headers['content-length']) > max + FIELDS.fields * FIELDS.fieldSize) throw tooLarge(spec, max);
  const tmpdir = path.join(dataDir, 'uploads');
  await mkdir(tmpdir, { recursive: true, mode: 0o700 });
  let saved: Awaited<ReturnType<FastifyRequest['saveRequestFiles']>>;
  try {
    saved = await req.saveRequestFiles({ tmpdir, limits: { fileSize: max } });
  } catch (e) {
    const err = e as { code?: string; statusCode?: number; syscall?: string; message?: string };
    if (err.code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(spec, max);
    // busboy's own errors (a malformed form) carry neither a status nor a system call: the client's.
    if (err.statusCode === undefined && err.syscall === undefined) throw badRequest(`Malformed multipart body: ${err.message}`);
    throw e;
  }
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(saved.values ?? {})) {
    const first = (Array.isArray(value) ? value[0] : value) as { type?: string; value?: unknown; valueTruncated?: boolean } | undefined;
    if (first?.type !== 'field') continue;
    if (first.valueTruncated) throw badRequest(`${name}: longer than a form field may be`, [{ path: [name], message: `${name}: longer than ${FIELDS.fieldSize} bytes` }]);
    fields[name] = first.value;
  }
  const part = saved.files[0];
  if (!part) return { fields };
  if (part.fieldname !== spec.fileField)
    throw badRequest(`${part.fieldname}: not a file field (the file goes in ${spec.fileField})`, [{ path: [part.fieldname], message: `${part.fieldname}: not a file field` }]);
  return { fields, file: { filename: part.filename, mimetype: part.mimetype, path: part.filepath, bytes: (await stat(part.filepath)).size } };
}

/** BAD_REQUEST naming the file field: a call of an upload procedure without its file. */
export const fileMissing = (spec: MultipartSpec) =>
  badRequest(`${spec.fileField}: a file is required (send the input as multipart/form-data)`, [{ path: [spec.fileField], message: `${spec.fileField}: a file is required` }]);
