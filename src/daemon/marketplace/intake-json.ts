import { AgwError } from '../../shared/errors.js';
import type { PublishJsonT } from '../../shared/schemas/skills.js';
import { stageBuffer, type StagedUpload } from './staged.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Files of a JSON publish body: `content` is UTF-8 text, or base64 when the entry has
 * `encoding: "base64"` (strict alphabet, whitespace ignored).
 */
export function intakeJson(files: PublishJsonT['files']): StagedUpload {
  return {
    files: (files ?? []).map((f, i) => {
      if (f.encoding !== 'base64') return stageBuffer(f.path, Buffer.from(f.content, 'utf8'));
      const text = f.content.replace(/\s+/g, '');
      if (text.length % 4 !== 0 || !BASE64.test(text)) {
        throw new AgwError('INVALID_REQUEST', `files[${i}].content is not valid base64`, {
          field: `files.${i}.content`,
          location: 'body',
        });
      }
      return stageBuffer(f.path, Buffer.from(text, 'base64'));
    }),
  };
}
