import { CHECK_DAEMON } from './pg-functions.js';

/**
 * agw_book_v11's two rollup statements: a batch's calls as charged, added to the day's spend
 * per provider and project and per key, rows in key order. With `writtenOff`, a charge
 * counts less what its wallet could not cover (v_short_ids, v_short_amounts).
 */
function rollups(writtenOff: boolean): string {
  const charged = writtenOff ? 'y."customerNano" - coalesce(s.short, 0)' : 'y."customerNano"';
  const from = writtenOff
    ? `FROM unnest(v_rows) AS y
        LEFT JOIN unnest(v_short_ids, v_short_amounts) AS s(id, short) ON s.id = y.id`
    : 'FROM unnest(v_rows) AS y';
  return `    INSERT INTO spend_daily (user_id, day, provider_id, project_key, calls, failures, raw_nusd, customer_nusd)
      SELECT y."userId", y."createdAt" / 86400000, y."providerId", coalesce(y."projectId", ''), count(*), count(*) FILTER (WHERE y.status = 'failed'),
             coalesce(sum(y."rawNano") FILTER (WHERE y.status = 'finalized'), 0),
             coalesce(sum(${charged}) FILTER (WHERE y.status = 'finalized'), 0)
        ${from}
       WHERE y.status IN ('finalized', 'failed')
       GROUP BY 1, 2, 3, 4 ORDER BY y."userId" COLLATE "C", y."createdAt" / 86400000, y."providerId" COLLATE "C", coalesce(y."projectId", '') COLLATE "C"
    ON CONFLICT (user_id, day, provider_id, project_key) DO UPDATE SET calls = spend_daily.calls + excluded.calls,
      failures = spend_daily.failures + excluded.failures, raw_nusd = spend_daily.raw_nusd + excluded.raw_nusd,
      customer_nusd = spend_daily.customer_nusd + excluded.customer_nusd;
    INSERT INTO spend_key_daily (user_id, day, key_id, calls, failures, raw_nusd, customer_nusd)
      SELECT y."userId", y."createdAt" / 86400000, y."keyId", count(*), count(*) FILTER (WHERE y.status = 'failed'),
             coalesce(sum(y."rawNano") FILTER (WHERE y.status = 'finalized'), 0),
             coalesce(sum(${charged}) FILTER (WHERE y.status = 'finalized'), 0)
        ${from}
       WHERE y.status IN ('finalized', 'failed') AND y."keyId" IS NOT NULL
       GROUP BY 1, 2, 3 ORDER BY y."userId" COLLATE "C", y."createdAt" / 86400000, y."keyId" COLLATE "C"
    ON CONFLICT (user_id, day, key_id) DO UPDATE SET calls = spend_key_daily.calls + excluded.calls,
      failures = spend_key_daily.failures + excluded.failures, raw_nusd = spend_key_daily.raw_nusd + excluded.raw_nusd,
      customer_nusd = spend_key_daily.customer_nusd + excluded.customer_nusd;`;
}

/**
 * agw_book_v13: a batch of settled calls, as applyBookings (money/bookings.ts) books them on SQLite:
 * each usage record once (a booking already in the store writes nothing), the wallets
 * debited in order (allowance first, never below zero: what a wallet cannot cover is
 * written off), quota counters and key budgets counted, the rollups added; and what the
 * calls consumed taken off the daemon's slices. test/pg/book-parity.test.ts holds the two
 * to the same books. A call's wallet transaction is columns of its usage record (tx_*,
 * migration 13), so the wallets are worked out before the records are written. A booking
 * of an account deleted meanwhile is dropped: the batch holds its accounts (FOR KEY SHARE)
 * once, where a foreign key checked every row (migration 10).
 * The batch comes as an agw_booking_v7[] in the daemon's order (binary: pg-booking-row.ts),
 * and the kept bodies (logs.bodies) as JSON when there are any. With p_probe false (a batch
 * on its first try) it does not look for its bookings in the store first; the insert then
 * refuses one found there (AGW02, pg-batch.ts). agw_book_v11 (binary, always looking),
 * agw_book_v7 and agw_book_v9 (JSON) remain for daemons of an earlier version during a
 * rolling upgrade.
 */

export const PG_BOOK_FUNCTION = `
CREATE OR REPLACE FUNCTION agw_book_v13(p_daemon text, p_rows agw_booking_v7[], p_bodies jsonb DEFAULT NULL, p_probe boolean DEFAULT true)
    RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  v_rows agw_booking_v7[];
  v_fresh text[];
  v_users text[];
  v_budgets boolean;
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
  v_written bigint;
  x_tx bigint[] := '{}';
  x_amount bigint[] := '{}';
  x_allowance bigint[] := '{}';
  x_after bigint[] := '{}';
  x_description text[] := '{}';
  x_short bigint[] := '{}';
BEGIN
  ${CHECK_DAEMON}
  -- whether the batch counts in key budgets; its accounts, held against deletion (the
  -- bookings of an account that is gone are dropped); its usage records, once each
  v_rows := p_rows;
  SELECT bool_or(y.status = 'finalized' AND jsonb_array_length(coalesce(y.budgets, '[]'::jsonb)) > 0) INTO v_budgets FROM unnest(v_rows) AS y;
  v_users := ARRAY(SELECT a.id FROM users a WHERE a.id IN (SELECT y."userId" FROM unnest(v_rows) AS y) ORDER BY a.id FOR KEY SHARE);
  -- the bookings new to the store (a retried batch may have committed): the usage records
  -- are written after the wallets, carrying their debit (migration 13)
  IF p_probe THEN
    v_fresh := ARRAY(SELECT y.id FROM unnest(v_rows) AS y
                      WHERE y."userId" = ANY (v_users) AND NOT EXISTS (SELECT FROM usage_records r WHERE r.id = y.id));
  ELSE
    -- a batch on its first try: none of it is in the store (if one is, the insert below fails
    -- the batch, and the retry looks)
    v_fresh := ARRAY(SELECT y.id FROM unnest(v_rows) AS y WHERE y."userId" = ANY (v_users));
  END IF;
  IF cardinality(v_fresh) = 0 THEN
    RETURN 0;
  END IF;
  IF cardinality(v_fresh) < cardinality(v_rows) THEN
    v_rows := ARRAY(SELECT r FROM unnest(v_rows) AS r WHERE r.id = ANY (v_fresh) ORDER BY r.ord);
  END IF;

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
    FOR b IN SELECT * FROM unnest(v_rows) WITH ORDINALITY AS y WHERE y.status = 'finalized' AND y."userId" = u.user_id ORDER BY y.ord
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
      -- the call's wallet transaction, by its place in the batch (ids in the order SQLite gives them)
      x_tx[b.ordinality::int] := nextval('wallet_transactions_id_seq');
      x_amount[b.ordinality::int] := -v_amount;
      x_allowance[b.ordinality::int] := v_from_a;
      x_after[b.ordinality::int] := v_balance;
      x_description[b.ordinality::int] := CASE WHEN v_short > 0 THEN coalesce(b.description, '') || ' (' || v_short || ' nano-USD not covered: written off)' ELSE b.description END;
      IF v_short > 0 THEN
        x_short[b.ordinality::int] := v_short;
        v_short_ids := v_short_ids || b.id;
        v_short_amounts := v_short_amounts || v_short;
      END IF;
    END LOOP;
    SELECT amount INTO v_lease FROM leases WHERE pot = '1w:' || u.user_id AND daemon_id = p_daemon FOR UPDATE;
    v_consumed := least(coalesce(v_lease, 0), v_consumed);
    IF v_consumed > 0 THEN
      UPDATE leases SET amount = amount - v_consumed WHERE pot = '1w:' || u.user_id AND daemon_id = p_daemon;
    END IF;
    UPDATE wallets SET balance_nusd = balance_nusd - v_from_b_total, allowance_month = v_month, allowance_used_nusd = v_aused,
        last_allowance_at = v_last, updated_at = v_updated, leased_nusd = greatest(0, leased_nusd - v_consumed)
      WHERE user_id = u.user_id;
  END LOOP;

  -- the usage records, each with its wallet transaction (a finalized call of an account with
  -- a wallet) and what its wallet could not cover. One already in the store (a batch on its
  -- first try that did commit before, or a concurrent retry) fails the batch with AGW02, and
  -- the daemon tries it again at once, looking first (p_probe)
  WITH ins AS (
    INSERT INTO usage_records (id, user_id, key_id, usage_type, status, endpoint, provider_id, model, alias, project_id,
       prompt_tokens, completion_tokens, cached_tokens, units, raw_cost_nusd, customer_cost_nusd, hold_nusd, written_off_nusd,
       http_status, answer_status, error_code, stream, latency_ms, ttfb_ms, attempts, period_start, created_at, finalized_at,
       tx_id, tx_amount_nusd, tx_allowance_nusd, tx_balance_after_nusd, tx_description)
    SELECT id, "userId", "keyId", "usageType", status, endpoint, "providerId", model, alias, "projectId",
       "promptTokens", "completionTokens", "cachedTokens", units,
       CASE WHEN status = 'finalized' THEN "rawNano" ELSE 0 END,
       CASE WHEN status = 'finalized' THEN "customerNano" - coalesce(x_short[ordinality::int], 0) ELSE 0 END,
       "holdNano", "writtenOffNano" + coalesce(x_short[ordinality::int], 0), "httpStatus", "answerStatus", "errorCode", CASE WHEN stream THEN 1 ELSE 0 END,
       "latencyMs", "ttfbMs", attempts, "periodKey", "createdAt", "settledAt",
       x_tx[ordinality::int], x_amount[ordinality::int], x_allowance[ordinality::int], x_after[ordinality::int], x_description[ordinality::int]
      FROM unnest(v_rows) WITH ORDINALITY AS y
    ON CONFLICT (id) DO NOTHING RETURNING 1)
  SELECT count(*) INTO v_written FROM ins;
  IF v_written < cardinality(v_rows) THEN
    RAISE EXCEPTION 'agw: a booking of this batch is in the store already' USING ERRCODE = 'AGW02';
  END IF;
  IF p_bodies IS NOT NULL THEN
    INSERT INTO request_bodies (usage_id, created_at, request, response, request_bytes, response_bytes)
      SELECT x.id, x."createdAt", x.request, x.response, x."requestBytes", x."responseBytes"
        FROM jsonb_to_recordset(p_bodies) AS x(id text, "createdAt" bigint, request text, response text, "requestBytes" bigint, "responseBytes" bigint)
       WHERE x.id = ANY (v_fresh)
      ON CONFLICT (usage_id) DO NOTHING;
  END IF;

  -- quota counters, then key budgets (when the batch counts in any): what was used, and the slices it came from
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
  IF v_budgets THEN
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
  END IF;

  -- the rollups, from the bookings as charged (what a wallet could not cover is not counted), not
  -- read back; the join with what was written off only when something was (a hash join's
  -- start-up cost a batch as much as the join of nothing saved)
  IF cardinality(v_short_ids) = 0 THEN
${rollups(false)}
  ELSE
${rollups(true)}
  END IF;
  RETURN cardinality(v_fresh);
END
$fn$;
CREATE OR REPLACE FUNCTION agw_book_v11(p_daemon text, p_rows agw_booking_v7[], p_bodies jsonb DEFAULT NULL) RETURNS integer LANGUAGE plpgsql AS $fn$
BEGIN
  RETURN agw_book_v13(p_daemon, p_rows, p_bodies, true);
END
$fn$;
CREATE OR REPLACE FUNCTION agw_book_v7(p_daemon text, p_bookings jsonb) RETURNS integer LANGUAGE sql AS $fn$
  SELECT agw_book_v11(p_daemon, ARRAY(SELECT y FROM jsonb_populate_recordset(NULL::agw_booking_v7, p_bookings) AS y ORDER BY y.ord))
$fn$;
`;
