import { PG_MONEY_FUNCTIONS } from '../../../money/postgres/functions.js';

/**
 * Version 7 for PostgreSQL: the twin of migrations/sqlite/v07-money.ts, plus the lease engine's
 * functions (money/postgres/functions.ts) and the triggers that tell daemons when a key, a
 * tier, an organization, a quota override or a wallet's unlimited flag changed, so the
 * copies they keep in memory follow at once (channel agw_changed, payload a user id or '*').
 * The booking function itself is installed by migration 13 (money/postgres/book.ts): a migration
 * installs only code that runs on the schema as it leaves it.
 */
/** The fields of agw_booking_v7, the type batches travel as until migration 16 (agw_booking_v16). */
export const BOOKING_V7_COLUMNS = `ord int, id text, "userId" text, "keyId" text, "usageType" text, endpoint text, "providerId" text, model text,
  alias text, "projectId" text, "periodKey" text, budgets jsonb, "createdAt" bigint, status text, "httpStatus" bigint,
  "promptTokens" bigint, "completionTokens" bigint, "cachedTokens" bigint, units double precision, "rawNano" bigint,
  "customerNano" bigint, "holdNano" bigint, "writtenOffNano" bigint, "settledAt" bigint, "monthlyAllowance" bigint,
  description text, stream boolean, "answerStatus" bigint, "errorCode" text, "latencyMs" double precision,
  "ttfbMs" double precision, attempts bigint, month text, "monthStart" bigint, "leasedWallet" boolean,
  "leasedQuota" boolean`;

export const SCHEMA_PG_V7_MONEY = `
ALTER TABLE usage_records ADD COLUMN key_id TEXT;
ALTER TABLE usage_records ADD COLUMN stream BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN answer_status BIGINT;
ALTER TABLE usage_records ADD COLUMN error_code TEXT;
ALTER TABLE usage_records ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN latency_ms DOUBLE PRECISION;
ALTER TABLE usage_records ADD COLUMN ttfb_ms DOUBLE PRECISION;
ALTER TABLE usage_records ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN hold_nusd BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN written_off_nusd BIGINT NOT NULL DEFAULT 0;
ALTER TABLE wallets ADD COLUMN leased_nusd BIGINT NOT NULL DEFAULT 0;
ALTER TABLE quota_counters ADD COLUMN leased BIGINT NOT NULL DEFAULT 0;
CREATE TABLE key_spend (
  key_id TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
  period TEXT NOT NULL,
  spent_nusd BIGINT NOT NULL DEFAULT 0,
  leased_nusd BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (key_id, period)
);
CREATE TABLE spend_key_daily (
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  day BIGINT NOT NULL,
  key_id TEXT NOT NULL,
  calls BIGINT NOT NULL DEFAULT 0,
  failures BIGINT NOT NULL DEFAULT 0,
  raw_nusd BIGINT NOT NULL DEFAULT 0,
  customer_nusd BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, day, key_id)
);
CREATE TABLE rate_buckets (
  key_id TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  level DOUBLE PRECISION NOT NULL,
  at_ms BIGINT NOT NULL,
  PRIMARY KEY (key_id, kind)
);
CREATE TABLE daemons (
  id TEXT PRIMARY KEY,
  started_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE TABLE leases (
  pot TEXT NOT NULL,
  daemon_id TEXT NOT NULL REFERENCES daemons(id) ON DELETE CASCADE,
  amount BIGINT NOT NULL DEFAULT 0,
  held BIGINT NOT NULL DEFAULT 0,
  held_calls BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (pot, daemon_id)
);
CREATE INDEX leases_daemon ON leases(daemon_id);
CREATE FUNCTION agw_changed_v7() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  v_row jsonb := to_jsonb(coalesce(NEW, OLD));
BEGIN
  IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'api_keys' AND (to_jsonb(OLD) - 'last_used_at') = (to_jsonb(NEW) - 'last_used_at') THEN
    RETURN NULL;
  END IF;
  PERFORM pg_notify('agw_changed', coalesce(v_row ->> 'user_id', CASE WHEN TG_TABLE_NAME = 'users' THEN v_row ->> 'id' END, '*'));
  RETURN NULL;
END
$fn$;
CREATE TRIGGER agw_changed AFTER UPDATE OR DELETE ON api_keys FOR EACH ROW EXECUTE FUNCTION agw_changed_v7();
CREATE TRIGGER agw_changed AFTER UPDATE OF tier OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION agw_changed_v7();
CREATE TRIGGER agw_changed AFTER UPDATE OR DELETE ON organizations FOR EACH ROW EXECUTE FUNCTION agw_changed_v7();
CREATE TRIGGER agw_changed AFTER INSERT OR UPDATE OR DELETE ON org_members FOR EACH ROW EXECUTE FUNCTION agw_changed_v7();
CREATE TRIGGER agw_changed AFTER INSERT OR UPDATE OR DELETE ON quota_overrides FOR EACH ROW EXECUTE FUNCTION agw_changed_v7();
CREATE TRIGGER agw_changed AFTER UPDATE OF unlimited ON wallets FOR EACH ROW WHEN (OLD.unlimited IS DISTINCT FROM NEW.unlimited) EXECUTE FUNCTION agw_changed_v7();
${PG_MONEY_FUNCTIONS}
CREATE TYPE agw_booking_v7 AS (${BOOKING_V7_COLUMNS});
`;
