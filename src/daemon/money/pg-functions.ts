/**
 * The lease engine's server side (PostgreSQL, migration 7): each operation a daemon needs
 * is one function, so it costs one round trip and runs as one transaction.
 *
 *   agw_lease_v7(daemon, requests)   take slices of pots (escrow): wallet funds, quota
 *                                    units, key budgets; tokens of rate buckets
 *   agw_return_v7(daemon, items)     give back what a daemon does not need
 *   agw_book_v7(daemon, bookings)    apply a batch of settled calls (what money/bookings.ts
 *                                    does for SQLite), consuming the daemon's slices
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
const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

const CHECK_DAEMON = `
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
  DELETE FROM leases WHERE daemon_id = p_daemon AND amount = 0 AND held_calls = 0;
  RETURN v_out;
END
$fn$;

CREATE FUNCTION agw_alive_v7(p_daemon text, p_ttl_ms bigint, p_held jsonb) RETURNS boolean LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE daemons SET expires_at = ${NOW_MS} + p_ttl_ms WHERE id = p_daemon;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  UPDATE leases l SET held = x.held, held_calls = x.calls
    FROM (SELECT * FROM jsonb_to_recordset(p_held) AS y(pot text, held bigint, calls bigint) ORDER BY y.pot COLLATE "C") x
   WHERE l.pot = x.pot AND l.daemon_id = p_daemon;
  RETURN true;
END
$fn$;

CREATE FUNCTION agw_reclaim_v7() RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  d record;
  l record;
  v_n integer := 0;
BEGIN
  FOR d IN SELECT id FROM daemons WHERE expires_at < ${NOW_MS} ORDER BY id FOR UPDATE SKIP LOCKED
  LOOP
    FOR l IN SELECT pot, amount FROM leases WHERE daemon_id = d.id ORDER BY pot COLLATE "C"
    LOOP
      PERFORM agw_release_pot_v7(d.id, l.pot, l.amount);
    END LOOP;
    DELETE FROM leases WHERE daemon_id = d.id;
    DELETE FROM daemons WHERE id = d.id;
    v_n := v_n + 1;
  END LOOP;
  RETURN v_n;
END
$fn$;
`;

/** The columns of a booking as agw_book_v7 reads them (money/bookings.ts Booking, plus what pg-batch.ts adds). */
const BOOKING_COLUMNS = `ord int, id text, "userId" text, "keyId" text, "usageType" text, endpoint text, "providerId" text, model text,
  alias text, "projectId" text, "periodKey" text, budgets jsonb, "createdAt" bigint, status text, "httpStatus" bigint,
  "promptTokens" bigint, "completionTokens" bigint, "cachedTokens" bigint, units double precision, "rawNano" bigint,
  "customerNano" bigint, "holdNano" bigint, "writtenOffNano" bigint, "settledAt" bigint, "monthlyAllowance" bigint,
  description text, stream boolean, "answerStatus" bigint, "errorCode" text, "latencyMs" double precision,
  "ttfbMs" double precision, attempts bigint, month text, "monthStart" bigint, "leasedWallet" boolean,
  "leasedQuota" boolean`;

/**
 * A batch of settled calls, as applyBookings (money/bookings.ts) books them on SQLite:
 * each usage record once (a booking already in the store writes nothing), the wallets
 * debited in order (allowance first, never below zero: what a wallet cannot cover is
 * written off), quota counters and key budgets counted, the rollups added; and what the
 * calls consumed taken off the daemon's slices. test/pg/book-parity.test.ts holds the two
 * to the same books.
 */
export const PG_BOOK_FUNCTION = `
CREATE TYPE agw_booking_v7 AS (${BOOKING_COLUMNS});
CREATE FUNCTION agw_book_v7(p_daemon text, p_bookings jsonb) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  v_rows agw_booking_v7[];
  v_fresh text[];
  u record;
  b record;
  q record;
  v_wallet wallets%ROWTYPE;
  v_balance bigint;
  v_month text;
  v_aused bigint;
  v_last bigint;
  v_updated bigint;
  v_used bigint;
  v_arem bigint;
  v_short bigint;
  v_amount bigint;
  v_from_a bigint;
  v_from_b bigint;
  v_from_b_total bigint;
  v_consumed bigint;
  v_lease bigint;
  v_short_ids text[] := '{}';
  v_short_amounts bigint[] := '{}';
  t_amount bigint[];
  t_allowance bigint[];
  t_after bigint[];
  t_description text[];
  t_provider text[];
  t_model text[];
  t_project text[];
  t_usage text[];
  t_at bigint[];
BEGIN
  ${CHECK_DAEMON}
  -- the batch, parsed once
  v_rows := ARRAY(SELECT y FROM jsonb_populate_recordset(NULL::agw_booking_v7, p_bookings) AS y ORDER BY y.ord);
  WITH x AS (SELECT * FROM unnest(v_rows)),
  ins AS (
    INSERT INTO usage_records (id, user_id, key_id, usage_type, status, endpoint, provider_id, model, alias, project_id,
       prompt_tokens, completion_tokens, cached_tokens, units, raw_cost_nusd, customer_cost_nusd, hold_nusd, written_off_nusd,
       http_status, answer_status, error_code, stream, latency_ms, ttfb_ms, attempts, period_start, created_at, finalized_at)
    SELECT id, "userId", "keyId", "usageType", status, endpoint, "providerId", model, alias, "projectId",
       "promptTokens", "completionTokens", "cachedTokens", units,
       CASE WHEN status = 'finalized' THEN "rawNano" ELSE 0 END, CASE WHEN status = 'finalized' THEN "customerNano" ELSE 0 END,
       "holdNano", "writtenOffNano", "httpStatus", "answerStatus", "errorCode", CASE WHEN stream THEN 1 ELSE 0 END,
       "latencyMs", "ttfbMs", attempts, "periodKey", "createdAt", "settledAt"
      FROM x ORDER BY ord
    ON CONFLICT (id) DO NOTHING RETURNING id)
  SELECT coalesce(array_agg(id), '{}') INTO v_fresh FROM ins;
  IF cardinality(v_fresh) = 0 THEN
    RETURN 0;
  END IF;
  -- from here on, only the bookings new to the store
  v_rows := ARRAY(SELECT r FROM unnest(v_rows) AS r WHERE r.id = ANY (v_fresh) ORDER BY r.ord);

  -- wallets, by user: one transaction per finalized call, in order
  FOR u IN SELECT d.user_id FROM (SELECT DISTINCT y."userId" AS user_id FROM unnest(v_rows) AS y WHERE y.status = 'finalized') d
            ORDER BY d.user_id COLLATE "C"
  LOOP
    SELECT * INTO v_wallet FROM wallets WHERE user_id = u.user_id FOR UPDATE;
    CONTINUE WHEN NOT FOUND;
    v_balance := v_wallet.balance_nusd;
    v_month := v_wallet.allowance_month;
    v_aused := v_wallet.allowance_used_nusd;
    v_last := v_wallet.last_allowance_at;
    v_updated := v_wallet.updated_at;
    v_from_b_total := 0;
    v_consumed := 0;
    t_amount := '{}'; t_allowance := '{}'; t_after := '{}'; t_description := '{}'; t_provider := '{}'; t_model := '{}'; t_project := '{}'; t_usage := '{}'; t_at := '{}';
    FOR b IN SELECT * FROM unnest(v_rows) AS y WHERE y.status = 'finalized' AND y."userId" = u.user_id ORDER BY y.ord
    LOOP
      v_used := CASE WHEN v_month = b.month THEN v_aused ELSE 0 END;
      v_arem := greatest(0, b."monthlyAllowance" - v_used);
      v_short := CASE WHEN v_wallet.unlimited <> 0 THEN 0 ELSE greatest(0, b."customerNano" - greatest(0, v_arem + v_balance)) END;
      v_amount := b."customerNano" - v_short;
      v_from_a := CASE WHEN v_wallet.unlimited <> 0 THEN 0 ELSE least(v_arem, v_amount) END;
      v_from_b := CASE WHEN v_wallet.unlimited <> 0 THEN 0 ELSE v_amount - v_from_a END;
      v_balance := v_balance - v_from_b;
      v_from_b_total := v_from_b_total + v_from_b;
      v_month := b.month;
      v_aused := v_used + v_from_a;
      v_last := CASE WHEN b."monthlyAllowance" > 0 THEN b."monthStart" ELSE v_last END;
      v_updated := b."settledAt";
      IF b."leasedWallet" THEN
        v_consumed := v_consumed + v_amount;
      END IF;
      t_amount := t_amount || -v_amount;
      t_allowance := t_allowance || v_from_a;
      t_after := t_after || v_balance;
      t_description := t_description || CASE WHEN v_short > 0 THEN coalesce(b.description, '') || ' (' || v_short || ' nano-USD not covered: written off)' ELSE b.description END;
      t_provider := t_provider || b."providerId";
      t_model := t_model || b.model;
      t_project := t_project || b."projectId";
      t_usage := t_usage || b.id;
      t_at := t_at || b."settledAt";
      IF v_short > 0 THEN
        UPDATE usage_records SET customer_cost_nusd = customer_cost_nusd - v_short, written_off_nusd = written_off_nusd + v_short WHERE id = b.id;
        v_short_ids := v_short_ids || b.id;
        v_short_amounts := v_short_amounts || v_short;
      END IF;
    END LOOP;
    -- one transaction per call, in order, written in one statement
    INSERT INTO wallet_transactions (user_id, type, amount_nusd, allowance_nusd, balance_after_nusd, description, provider_id, model, project_id, usage_id, created_at)
      SELECT u.user_id, 'usage', t.a, t.al, t.af, t.d, t.p, t.m, t.pr, t.us, t.at
        FROM unnest(t_amount, t_allowance, t_after, t_description, t_provider, t_model, t_project, t_usage, t_at) WITH ORDINALITY AS t(a, al, af, d, p, m, pr, us, at, n)
       ORDER BY t.n;
    SELECT amount INTO v_lease FROM leases WHERE pot = '1w:' || u.user_id AND daemon_id = p_daemon FOR UPDATE;
    v_consumed := least(coalesce(v_lease, 0), v_consumed);
    IF v_consumed > 0 THEN
      UPDATE leases SET amount = amount - v_consumed WHERE pot = '1w:' || u.user_id AND daemon_id = p_daemon;
    END IF;
    UPDATE wallets SET balance_nusd = balance_nusd - v_from_b_total, allowance_month = v_month, allowance_used_nusd = v_aused,
        last_allowance_at = v_last, updated_at = v_updated, leased_nusd = greatest(0, leased_nusd - v_consumed)
      WHERE user_id = u.user_id;
  END LOOP;

  -- quota counters, then key budgets: what was used, and the slices it came from
  FOR q IN SELECT y."userId" AS user_id, y."usageType" AS usage_type, y."periodKey" AS period, count(*) AS n,
                  count(*) FILTER (WHERE y."leasedQuota") AS leased
             FROM unnest(v_rows) AS y
            WHERE y.status = 'finalized'
            GROUP BY 1, 2, 3 ORDER BY ('2q:' || y."userId" || ':' || y."usageType" || ':' || y."periodKey") COLLATE "C"
  LOOP
    INSERT INTO quota_counters (user_id, usage_type, period_start, used) VALUES (q.user_id, q.usage_type, q.period, q.n)
      ON CONFLICT (user_id, usage_type, period_start) DO UPDATE SET used = quota_counters.used + excluded.used;
    IF q.leased > 0 THEN
      SELECT amount INTO v_lease FROM leases WHERE pot = '2q:' || q.user_id || ':' || q.usage_type || ':' || q.period AND daemon_id = p_daemon FOR UPDATE;
      v_consumed := least(coalesce(v_lease, 0), q.leased);
      IF v_consumed > 0 THEN
        UPDATE leases SET amount = amount - v_consumed WHERE pot = '2q:' || q.user_id || ':' || q.usage_type || ':' || q.period AND daemon_id = p_daemon;
        UPDATE quota_counters SET leased = greatest(0, leased - v_consumed) WHERE user_id = q.user_id AND usage_type = q.usage_type AND period_start = q.period;
      END IF;
    END IF;
  END LOOP;
  FOR q IN SELECT e ->> 'keyId' AS key_id, e ->> 'period' AS period, sum(y."customerNano" - coalesce(s.short, 0)) AS spent,
                  sum(y."customerNano" - coalesce(s.short, 0)) FILTER (WHERE (e ->> 'leased')::boolean) AS leased
             FROM unnest(v_rows) AS y
             CROSS JOIN LATERAL jsonb_array_elements(coalesce(y.budgets, '[]'::jsonb)) AS e
             LEFT JOIN unnest(v_short_ids, v_short_amounts) AS s(id, short) ON s.id = y.id
            WHERE y.status = 'finalized'
            GROUP BY 1, 2 ORDER BY ('3b:' || (e ->> 'keyId') || ':' || (e ->> 'period')) COLLATE "C"
  LOOP
    INSERT INTO key_spend (key_id, period, spent_nusd) VALUES (q.key_id, q.period, q.spent)
      ON CONFLICT (key_id, period) DO UPDATE SET spent_nusd = key_spend.spent_nusd + excluded.spent_nusd;
    IF coalesce(q.leased, 0) > 0 THEN
      SELECT amount INTO v_lease FROM leases WHERE pot = '3b:' || q.key_id || ':' || q.period AND daemon_id = p_daemon FOR UPDATE;
      v_consumed := least(coalesce(v_lease, 0), q.leased);
      IF v_consumed > 0 THEN
        UPDATE leases SET amount = amount - v_consumed WHERE pot = '3b:' || q.key_id || ':' || q.period AND daemon_id = p_daemon;
        UPDATE key_spend SET leased_nusd = greatest(0, leased_nusd - v_consumed) WHERE key_id = q.key_id AND period = q.period;
      END IF;
    END IF;
  END LOOP;

  -- the rollups, from the bookings as charged (what a wallet could not cover is not counted), not read back
  INSERT INTO spend_daily (user_id, day, provider_id, project_key, calls, failures, raw_nusd, customer_nusd)
    SELECT y."userId", y."createdAt" / 86400000, y."providerId", coalesce(y."projectId", ''), count(*), count(*) FILTER (WHERE y.status = 'failed'),
           coalesce(sum(y."rawNano") FILTER (WHERE y.status = 'finalized'), 0),
           coalesce(sum(y."customerNano" - coalesce(s.short, 0)) FILTER (WHERE y.status = 'finalized'), 0)
      FROM unnest(v_rows) AS y
      LEFT JOIN unnest(v_short_ids, v_short_amounts) AS s(id, short) ON s.id = y.id
     WHERE y.status IN ('finalized', 'failed')
     GROUP BY 1, 2, 3, 4 ORDER BY y."userId" COLLATE "C", y."createdAt" / 86400000, y."providerId" COLLATE "C", coalesce(y."projectId", '') COLLATE "C"
  ON CONFLICT (user_id, day, provider_id, project_key) DO UPDATE SET calls = spend_daily.calls + excluded.calls,
    failures = spend_daily.failures + excluded.failures, raw_nusd = spend_daily.raw_nusd + excluded.raw_nusd,
    customer_nusd = spend_daily.customer_nusd + excluded.customer_nusd;
  INSERT INTO spend_key_daily (user_id, day, key_id, calls, failures, raw_nusd, customer_nusd)
    SELECT y."userId", y."createdAt" / 86400000, y."keyId", count(*), count(*) FILTER (WHERE y.status = 'failed'),
           coalesce(sum(y."rawNano") FILTER (WHERE y.status = 'finalized'), 0),
           coalesce(sum(y."customerNano" - coalesce(s.short, 0)) FILTER (WHERE y.status = 'finalized'), 0)
      FROM unnest(v_rows) AS y
      LEFT JOIN unnest(v_short_ids, v_short_amounts) AS s(id, short) ON s.id = y.id
     WHERE y.status IN ('finalized', 'failed') AND y."keyId" IS NOT NULL
     GROUP BY 1, 2, 3 ORDER BY y."userId" COLLATE "C", y."createdAt" / 86400000, y."keyId" COLLATE "C"
  ON CONFLICT (user_id, day, key_id) DO UPDATE SET calls = spend_key_daily.calls + excluded.calls,
    failures = spend_key_daily.failures + excluded.failures, raw_nusd = spend_key_daily.raw_nusd + excluded.raw_nusd,
    customer_nusd = spend_key_daily.customer_nusd + excluded.customer_nusd;
  RETURN cardinality(v_fresh);
END
$fn$;
`;
