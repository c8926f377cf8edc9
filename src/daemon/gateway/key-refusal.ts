import type { FastifyRequest } from 'fastify';
import type { AgwError } from '../../shared/errors.js';
import type { UsageType } from '../../shared/providers/index.js';
import type { UserPrincipal } from '../auth/principal.js';
import type { AppContext } from '../context/index.js';
import { refuse } from '../money/calls.js';
import { allowlist, type Allowlist } from './model-allowlist.js';
import { projectFor } from './relay.js';

/** The key's model allowlist, or null (no list, or not a key): one property read for keys without. */
export function keyAllowlist(ctx: AppContext, u: UserPrincipal): Allowlist | null {
  const models = u.kind === 'key' ? u.limits?.models : undefined;
  return models ? allowlist(ctx.config, models) : null;
}

export interface RefusedCallInfo {
  endpoint: 'proxy' | 'smart' | 'chat';
  providerId: string;
  model: string | null;
  alias: string | null;
  stream: boolean;
  usageType?: UsageType;
}

/**
 * Records a call agw refused before contacting an upstream (the key's limits, a model
 * outside the tier, a provider without a key…) in the request log, free; the error to
 * throw, with the record's id as x-request-id (CONTRACT "Request log": every gateway call
 * has a record).
 */
export async function refuseForKey(ctx: AppContext, req: FastifyRequest, u: UserPrincipal, call: RefusedCallInfo, err: AgwError): Promise<AgwError> {
  return refuse(
    ctx,
    {
      ...call,
      userId: u.userId,
      tier: u.tier,
      keyId: u.kind === 'key' ? u.keyId : null,
      keyLimits: u.kind === 'key' ? u.limits : null,
      projectId: await projectFor(ctx, req, u.userId),
    },
    err,
  );
}
