/**
 * The lease engine's server side (PostgreSQL, migration 7): each operation a daemon needs
 * is one function, so it costs one round trip and runs as one transaction.
 *
 *   agw_lease_v7(daemon, requests)   take slices of pots (escrow): wallet funds, quota
 *                                    units, key budgets; tokens of rate buckets
 *   agw_return_v7(daemon, items)     give back what a daemon does not need
 *   agw_book_v13(daemon, rows, bodies, probe)  apply a batch of settled calls (what
 *                                    money/bookings.ts does for SQLite), consuming the daemon's
 *                                    slices (postgres/book.ts; agw_book_v11 and agw_book_v7, the
 *                                    latter with the batch as JSON, for older daemons)
 *   agw_alive_v7(daemon, ttl, held)  heartbeat: extend the daemon's leases, publish the
 *                                    holds of its calls in flight
 *   agw_reclaim_v7()                 return the slices of daemons whose leases expired
 *
 * Pots are named '1w:<user>' (wallet), '2q:<user>:<usage type>:<quota period>' (quota),
 * '3b:<key>:<budget period>' (key budget), '4r:<key>' / '5t:<key>' (rate buckets). Every
 * function locks a pot's row, then that pot's lease row, pot by pot in the C-collation
 * order of these names (wallets first), and rollup rows last in key order: two
 * transactions never wait on each other in a cycle. A daemon's own row is locked first
 * with FOR KEY SHARE (the heartbeat's UPDATE does not conflict; the reclaim's DELETE
 * does), so the slices of a daemon declared dead are never consumed after their return.
 * A daemon whose row is gone gets SQLSTATE AGW01 and starts over.
 */
/** The store's clock, epoch ms (SQL). */
export const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export const CHECK_DAEMON = `
  PERFORM 1 FROM daemons WHERE id = p_daemon FOR KEY SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'agw: the leases of daemon % were reclaimed', p_daemon USING ERRCODE = 'AGW01';
  END IF;`;

/**
 * A grant: `want` when that leaves half of what is free, else at least `need` (what the
 * daemon's waiting admissions lack together); when not even that is free, all that is
 * left if it covers the smallest waiting admission (`least`), else nothing.
 */
const GRANT = `CASE WHEN v_free >= r.need THEN least(greatest(r.want, r.need), greatest(r.need, v_free / 2))
  WHEN v_free >= r.least AND v_free > 0 THEN v_free ELSE 0 END`;

export const PG_MONEY_FUNCTIONS = `
CREATE FUNCTION agw_lease_v7(p_daemon text, p_reqs jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  r record;
  v_out jsonb := '[]'::jsonb;
  v_wallet wallets%ROWTYPE;
  v_arem bigint;
  v_free bigint;
  v_grant bigint;
  v_limit bigint;
  v_used bigint;
  v_leased bigint;
  v_level double precision;
  v_at bigint;
  v_now bigint := ${NOW_MS};
BEGIN
  ${CHECK_DAEMON}
  FOR r IN SELECT * FROM jsonb_to_recordset(p_reqs) AS x(pot text, kind text, "userId" text, "usageType" text, period text,
      "keyId" text, allowance bigint, month text, "limit" bigint, need bigint, least bigint, want bigint) ORDER BY x.pot COLLATE "C"
  LOOP
    IF r.kind = 'wallet' THEN
      SELECT * INTO v_wallet FROM wallets WHERE user_id = r."userId" FOR UPDATE;
      IF NOT FOUND THEN
        v_out := v_out || jsonb_build_object('pot', r.pot, 'missing', true);
        CONTINUE;
      END IF;
      IF v_wallet.unlimited <> 0 THEN
        v_out := v_out || jsonb_build_object('pot', r.pot, 'unlimited', true);
        CONTINUE;
      END IF;
      v_arem := CASE WHEN v_wallet.allowance_month = r.month THEN greatest(0, r.allowance - v_wallet.allowance_used_nusd) ELSE r.allowance END;
      v_free := v_arem + v_wallet.balance_nusd - v_wallet.leased_nusd;
      v_grant := ${GRANT};
      IF v_grant > 0 THEN
        UPDATE wallets SET leased_nusd = leased_nusd + v_grant WHERE user_id = r."userId";
      END IF;
      v_out := v_out || jsonb_build_object('pot', r.pot, 'granted', v_grant, 'free', v_free - v_grant, 'balance', v_wallet.balance_nusd,
        'allowanceRemaining', v_arem, 'allowanceUsed', CASE WHEN v_wallet.allowance_month = r.month THEN v_wallet.allowance_used_nusd ELSE 0 END,
        'currency', v_wallet.currency, 'leased', v_wallet.leased_nusd + v_grant);
    ELSIF r.kind = 'quota' THEN
      SELECT o.quota_limit INTO v_limit FROM quota_overrides o WHERE o.user_id = r."userId" AND o.usage_type = r."usageType";
      v_limit := coalesce(v_limit, r."limit");
      IF v_limit < 0 THEN
        v_out := v_out || jsonb_build_object('pot', r.pot, 'unlimited', true);
        CONTINUE;
      END IF;
      INSERT INTO quota_counters (user_id, usage_type, period_start, used) VALUES (r."userId", r."usageType", r.period, 0)
        ON CONFLICT (user_id, usage_type, period_start) DO NOTHING;
      SELECT c.used, c.leased INTO v_used, v_leased FROM quota_counters c
        WHERE c.user_id = r."userId" AND c.usage_type = r."usageType" AND c.period_start = r.period FOR UPDATE;
      v_free := v_limit - v_used - v_leased;
      v_grant := ${GRANT};
      IF v_grant > 0 THEN
        UPDATE quota_counters SET leased = leased + v_grant WHERE user_id = r."userId" AND usage_type = r."usageType" AND period_start = r.period;
      END IF;
      v_out := v_out || jsonb_build_object('pot', r.pot, 'granted', v_grant, 'free', v_free - v_grant, 'limit', v_limit, 'used', v_used, 'leased', v_leased + v_grant);
    ELSIF r.kind = 'budget' THEN
      INSERT INTO key_spend (key_id, period, spent_nusd) VALUES (r."keyId", r.period, 0) ON CONFLICT (key_id, period) DO NOTHING;
      SELECT s.spent_nusd, s.leased_nusd INTO v_used, v_leased FROM key_spend s WHERE s.key_id = r."keyId" AND s.period = r.period FOR UPDATE;
      v_free := r."limit" - v_used - v_leased;
      v_grant := ${GRANT};
      IF v_grant > 0 THEN
        UPDATE key_spend SET leased_nusd = leased_nusd + v_grant WHERE key_id = r."keyId" AND period = r.period;
      END IF;
      v_out := v_out || jsonb_build_object('pot', r.pot, 'granted', v_grant, 'free', v_free - v_grant, 'limit', r."limit", 'used', v_used, 'leased', v_leased + v_grant);
    ELSE
      -- a rate bucket (rpm / tpm): refilled at limit per minute, tokens taken are spent
      INSERT INTO rate_buckets (key_id, kind, level, at_ms) VALUES (r."keyId", r.kind, r."limit", v_now) ON CONFLICT (key_id, kind) DO NOTHING;
      SELECT b.level, b.at_ms INTO v_level, v_at FROM rate_buckets b WHERE b.key_id = r."keyId" AND b.kind = r.kind FOR UPDATE;
      v_level := least(r."limit"::double precision, v_level + greatest(0, v_now - v_at) * r."limit" / 60000.0);
      v_free := floor(v_level)::bigint;
      v_grant := CASE WHEN v_free >= r.need THEN least(greatest(r.want, r.need), v_free) WHEN v_free >= r.least AND v_free > 0 THEN v_free ELSE 0 END;
      UPDATE rate_buckets SET level = v_level - v_grant, at_ms = v_now WHERE key_id = r."keyId" AND kind = r.kind;
      v_out := v_out || jsonb_build_object('pot', r.pot, 'granted', v_grant, 'level', v_level - v_grant, 'limit', r."limit", 'at', v_now);
      CONTINUE;
    END IF;
    IF v_grant > 0 THEN
      INSERT INTO leases (pot, daemon_id, amount) VALUES (r.pot, p_daemon, v_grant)
        ON CONFLICT (pot, daemon_id) DO UPDATE SET amount = leases.amount + excluded.amount;
    END IF;
  END LOOP;
  RETURN v_out;
END
$fn$;

CREATE FUNCTION agw_release_pot_v7(p_daemon text, p_pot text, p_amount bigint) RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE
  v_have bigint;
  v_back bigint;
BEGIN
  -- the pot's row first (the callers' lock order), then the lease row
  IF left(p_pot, 2) = '1w' THEN
    PERFORM 1 FROM wallets WHERE user_id = substr(p_pot, 4) FOR UPDATE;
  ELSIF left(p_pot, 2) = '2q' THEN
    PERFORM 1 FROM quota_counters WHERE user_id = split_part(p_pot, ':', 2) AND usage_type = split_part(p_pot, ':', 3)
      AND period_start = substr(p_pot, length(split_part(p_pot, ':', 1)) + length(split_part(p_pot, ':', 2)) + length(split_part(p_pot, ':', 3)) + 4) FOR UPDATE;
  ELSIF left(p_pot, 2) = '3b' THEN
    PERFORM 1 FROM key_spend WHERE key_id = split_part(p_pot, ':', 2) AND period = split_part(p_pot, ':', 3) FOR UPDATE;
  END IF;
  SELECT amount INTO v_have FROM leases WHERE pot = p_pot AND daemon_id = p_daemon FOR UPDATE;
  v_back := least(coalesce(v_have, 0), p_amount);
  IF v_back <= 0 THEN
    RETURN 0;
  END IF;
  UPDATE leases SET amount = amount - v_back WHERE pot = p_pot AND daemon_id = p_daemon;
  IF left(p_pot, 2) = '1w' THEN
    UPDATE wallets SET leased_nusd = greatest(0, leased_nusd - v_back) WHERE user_id = substr(p_pot, 4);
  ELSIF left(p_pot, 2) = '2q' THEN
    UPDATE quota_counters SET leased = greatest(0, leased - v_back) WHERE user_id = split_part(p_pot, ':', 2) AND usage_type = split_part(p_pot, ':', 3)
      AND period_start = substr(p_pot, length(split_part(p_pot, ':', 1)) + length(split_part(p_pot, ':', 2)) + length(split_part(p_pot, ':', 3)) + 4);
  ELSIF left(p_pot, 2) = '3b' THEN
    UPDATE key_spend SET leased_nusd = greatest(0, leased_nusd - v_back) WHERE key_id = split_part(p_pot, ':', 2) AND period = split_part(p_pot, ':', 3);
  END IF;
  RETURN v_back;
END
$fn$;

CREATE FUNCTION agw_return_v7(p_daemon text, p_items jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  r record;
  v_out jsonb := '[]'::jsonb;
  v_level double precision;
  v_at bigint;
  v_now bigint := ${NOW_MS};
BEGIN
  ${CHECK_DAEMON}
  FOR r IN SELECT * FROM jsonb_to_recordset(p_items) AS x(pot text, kind text, "keyId" text, "limit" bigint, amount bigint) ORDER BY x.pot COLLATE "C"
  LOOP
    IF r.kind = 'rpm' OR r.kind = 'tpm' THEN
      SELECT b.level, b.at_ms INTO v_level, v_at FROM rate_buckets b WHERE b.key_id = r."keyId" AND b.kind = r.kind FOR UPDATE;
      IF FOUND THEN
        UPDATE rate_buckets SET level = least(r."limit"::double precision, v_level + greatest(0, v_now - v_at) * r."limit" / 60000.0 + r.amount), at_ms = v_now
          WHERE key_id = r."keyId" AND kind = r.kind;
      END IF;
      v_out := v_out || jsonb_build_object('pot', r.pot, 'returned', r.amount);
    ELSE
      v_out := v_out || jsonb_build_object('pot', r.pot, 'returned', agw_release_pot_v7(p_daemon, r.pot, r.amount));
    END IF;
  END LOOP;
  -- only the lease rows of the pots returned here, whose pot rows this transaction holds
  -- (a batch locks a pot's row before its lease row, so it cannot hold one of these)
  DELETE FROM leases WHERE daemon_id = p_daemon AND amount = 0 AND held_calls = 0
     AND pot IN (SELECT x.pot FROM jsonb_to_recordset(p_items) AS x(pot text));
  RETURN v_out;
END
$fn$;

CREATE FUNCTION agw_alive_v7(p_daemon text, p_ttl_ms bigint, p_held jsonb) RETURNS boolean LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE daemons SET expires_at = ${NOW_MS} + p_ttl_ms WHERE id = p_daemon;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  -- the lease rows in pot order first (an UPDATE … FROM locks in its plan's order, and a
  -- batch of this daemon locks them in pot order)
  PERFORM 1 FROM leases WHERE daemon_id = p_daemon AND pot IN (SELECT y.pot FROM jsonb_to_recordset(p_held) AS y(pot text))
    ORDER BY pot COLLATE "C" FOR UPDATE;
  UPDATE leases l SET held = x.held, held_calls = x.calls
    FROM (SELECT * FROM jsonb_to_recordset(p_held) AS y(pot text, held bigint, calls bigint)) x
   WHERE l.pot = x.pot AND l.daemon_id = p_daemon;
  RETURN true;
END
$fn$;

CREATE FUNCTION agw_reclaim_v7() RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  v_dead text[];
  l record;
BEGIN
  v_dead := ARRAY(SELECT id FROM daemons WHERE expires_at < ${NOW_MS} ORDER BY id FOR UPDATE SKIP LOCKED);
  IF cardinality(v_dead) = 0 THEN
    RETURN 0;
  END IF;
  -- every dead daemon's slices in one pass, in pot order (the lock order of every function)
  FOR l IN SELECT daemon_id, pot, amount FROM leases WHERE daemon_id = ANY (v_dead) ORDER BY pot COLLATE "C", daemon_id COLLATE "C"
  LOOP
    PERFORM agw_release_pot_v7(l.daemon_id, l.pot, l.amount);
  END LOOP;
  DELETE FROM leases WHERE daemon_id = ANY (v_dead);
  DELETE FROM daemons WHERE id = ANY (v_dead);
  RETURN cardinality(v_dead);
END
$fn$;
`;
