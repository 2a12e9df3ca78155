// The domain errors SCIM's answers carry a scimType for (RFC 7644 §3.12): a Berth error with the
// detail type the protocol names; routes.ts writes both as the SCIM error schema.
import { BerthError, type ErrorCode } from '@berth/core';

export type ScimType = 'invalidFilter' | 'invalidSyntax' | 'invalidPath' | 'invalidValue' | 'uniqueness' | 'mutability' | 'noTarget' | 'tooMany';

export class ScimRefusal extends BerthError {
  readonly scimType: ScimType;
  constructor(code: ErrorCode, scimType: ScimType, detail: string) {
    super(code, detail, code === 'BAD_REQUEST' ? [{ path: [detail.split(':')[0]!], message: detail }] : []);
    this.scimType = scimType;
  }
}

/** A 400 of this type; the detail starts with the attribute it is about. */
export const invalid = (scimType: ScimType, detail: string) => new ScimRefusal('BAD_REQUEST', scimType, detail);
export const taken = (detail: string) => new ScimRefusal('CONFLICT', 'uniqueness', detail);
