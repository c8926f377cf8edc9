import type { Logger } from 'pino';
import type { ResolvedConfig } from '../../shared/config/resolve.js';
import type { Db } from '../store/db.js';
import type { Metrics } from './metrics.js';
import type { Principal } from './principal.js';

/** Everything a route group needs, built once at start and handed to every plugin. */
export interface AppContext {
  config: ResolvedConfig;
  db: Db;
  log: Logger;
  metrics: Metrics;
  dataDir: string;
  /** The root URL (no /api): config publicUrl, else the address agw listens on. */
  rootUrl(): string;
  /**
   * Verifies an OAuth access token (RS256 JWT); set by the OAuth module. Returns null
   * for a token that is not valid (bad signature, expired, wrong issuer or audience).
   */
  verifyAccessToken?: (token: string) => Promise<Principal | null>;
  /** Callbacks run on shutdown, after the server stopped accepting (timers, pools). */
  onClose: Array<() => Promise<void> | void>;
}
