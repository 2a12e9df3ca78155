// Multipart bodies for the procedures that take an upload (`multipart: { fileField }`): the form's
// fields are the input (text, or JSON where a part says so), and its one file is streamed to a
// temporary file under dataDir/uploads (never held in memory), cut off past the limit with 413, and
// removed once the call has settled. Only the upload procedures' routes accept such a body (every
// other route still refuses it with 415), and there the body is left unread until the call has
// passed its scope's checks. The form parser (busboy) is imported at the first upload, not at boot:
// an idle Berth never loads it.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BerthError, badRequest } from '../errors.ts';
import type { MultipartSpec, UploadedFile } from '../procedure.ts';

/** What the form may hold besides its file: a few short text fields. */
const FIELDS = { fields: 32, fieldSize: 64 * 1024 };

/** Makes `scope` (the routes of the upload procedures) take multipart bodies, left unread for readUpload. */
export function acceptMultipart(scope: FastifyInstance): void {
  scope.addContentTypeParser('multipart/form-data', (_req, _payload, done) => done(null));
}

/** Whether the request's body is a multipart form (the only kind readUpload reads). */
export const isMultipart = (req: FastifyRequest) => /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '');

/** The largest file a procedure takes: its own cap, never above the kernel's. */
export const uploadCap = (spec: MultipartSpec, uploadLimit: number) => Math.min(spec.maxBytes ?? uploadLimit, uploadLimit);

const tooLarge = (spec: MultipartSpec, max: number) =>
  new BerthError('PAYLOAD_TOO_LARGE', `${spec.fileField}: larger than ${max} bytes, the most an upload may have here (the config key uploadLimit)`, [
    { path: [spec.fileField], message: `${spec.fileField}: larger than ${max} bytes` },
  ]);

const notAFileField = (name: string, spec: MultipartSpec) => badRequest(`${name}: not a file field (the file goes in ${spec.fileField})`, [{ path: [name], message: `${name}: not a file field` }]);

/**
 * The form's text fields (the first of a repeated name) and its file, saved under `dataDir`; the caller
 * removes the file once the call has settled (removeUpload), and a read that fails removes what it
 * wrote. A body that declares a length past the limit is refused before it is read, a file that grows
 * past it as soon as it does; a client that goes away mid-body ends the read (and the file it was writing).
 */
export async function readUpload(req: FastifyRequest, spec: MultipartSpec, max: number, dataDir: string): Promise<{ fields: Record<string, unknown>; file?: UploadedFile }> {
  // The form's own bytes (boundaries, headers, fields) come on top of the file's.
  if (Number(req.headers['content-length']) > max + FIELDS.fields * FIELDS.fieldSize) throw tooLarge(spec, max);
  const tmpdir = path.join(dataDir, 'uploads');
  await mkdir(tmpdir, { recursive: true, mode: 0o700 });
  const target = path.join(tmpdir, randomUUID());
  const { Busboy } = await import('@fastify/busboy');
  try {
    return await new Promise((resolve, reject) => {
      const body = req.raw;
      // A form's field names are the client's: no name (__proto__ among them) reaches an object's prototype.
      const fields: Record<string, unknown> = Object.create(null);
      let file: Promise<UploadedFile> | undefined;
      let part: NodeJS.ReadableStream | undefined;
      let sink: ReturnType<typeof createWriteStream> | undefined;
      let failure: Error | undefined;
      let form: ReturnType<typeof Busboy>;
      /** Stops the read at once: the body is no longer taken in, the file being written is closed. */
      const abort = (e: Error) => {
        body.unpipe(form);
        body.off('close', gone);
        (part as { destroy?: () => void } | undefined)?.destroy?.();
        sink?.destroy();
        reject(e);
      };
      const gone = () => {
        if (!body.complete) abort(badRequest('The upload ended before its body did (the client went away)'));
      };
      const fail = (e: Error) => {
        failure ??= e;
      };
      try {
        form = Busboy({ headers: req.headers as { 'content-type': string }, limits: { ...FIELDS, files: 1, fileSize: max } });
      } catch (e) {
        // A form without its boundary, or of another kind: the client's.
        reject(badRequest(`Malformed multipart body: ${(e as Error).message}`));
        return;
      }
      form.on('field', (name, value, _nameTruncated, valueTruncated, _encoding, mimetype) => {
        if (valueTruncated) fail(badRequest(`${name}: longer than a form field may be`, [{ path: [name], message: `${name}: longer than ${FIELDS.fieldSize} bytes` }]));
        if (Object.hasOwn(fields, name)) return;
        if (!/^application\/json\b/i.test(mimetype)) fields[name] = value;
        else
          try {
            fields[name] = JSON.parse(value);
          } catch {
            fail(badRequest(`${name}: not JSON, though its part says application/json`, [{ path: [name], message: `${name}: not JSON` }]));
          }
      });
      form.on('file', (name, stream, filename, _encoding, mimetype) => {
        if (name !== spec.fileField) {
          fail(notAFileField(name, spec));
          stream.resume();
          return;
        }
        part = stream;
        sink = createWriteStream(target, { mode: 0o600 });
        // Past the limit busboy cuts the file short: answered now, not once the rest of the body has come.
        stream.on('limit', () => abort(tooLarge(spec, max)));
        file = pipeline(stream, sink).then(async () => ({ filename, mimetype, path: target, bytes: (await stat(target)).size }));
        file.catch(() => undefined); // awaited at the form's end; its failure is answered there
      });
      form.on('fieldsLimit', () => fail(badRequest(`A form takes at most ${FIELDS.fields} fields`)));
      form.on('filesLimit', () => fail(badRequest(`A form takes one file, in ${spec.fileField}`, [{ path: [spec.fileField], message: `${spec.fileField}: one file only` }])));
      form.on('error', e => abort(badRequest(`Malformed multipart body: ${(e as Error).message}`)));
      form.on('finish', () => {
        body.off('close', gone);
        if (failure) return reject(failure);
        if (!file) return resolve({ fields });
        file.then(saved => resolve({ fields, file: saved }), reject);
      });
      // Gone before the read began (while the caller was checked): nothing to wait for.
      if (body.destroyed && !body.complete) return abort(badRequest('The upload ended before its body did (the client went away)'));
      body.on('close', gone);
      body.on('error', abort);
      body.pipe(form);
    });
  } catch (e) {
    await rm(target, { force: true });
    throw e;
  }
}

/** Removes an upload's file (the call that took it has settled). */
export const removeUpload = (file: UploadedFile) => rm(file.path, { force: true });

/** BAD_REQUEST naming the file field: a call of an upload procedure without its file. */
export const fileMissing = (spec: MultipartSpec) =>
  badRequest(`${spec.fileField}: a file is required (send the input as multipart/form-data)`, [{ path: [spec.fileField], message: `${spec.fileField}: a file is required` }]);
