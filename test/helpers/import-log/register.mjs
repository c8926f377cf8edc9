// `node --import` this file to log every module URL the process resolves whose URL
// contains AGW_IMPORT_LOG_MATCH, one per line, to the file AGW_IMPORT_LOG (tests only).
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url, { data: { file: process.env.AGW_IMPORT_LOG, match: process.env.AGW_IMPORT_LOG_MATCH ?? '' } });
