import { QUOTA_ADD, ROLLUP_ROW, USAGE_INSERT, rollups, takeFromSlice, takeFromSlices } from './book-sql.js';
import { CHECK_DAEMON, NOW_MS } from './functions.js';
import { BOOKING_TYPE } from './booking-row.js';

/** The booking function daemons of this version call (a change to its signature or its books is a new name). */
export const BOOK_FUNCTION = 'agw_book_v16';

/**
 * agw_book_v16: a batch of settled calls, as applyBookings (money/bookings.ts) books them on SQLite:
 * each usage record once (a booking already in the store writes nothing), the wallets
 * debited in order (allowance first, never below zero: what a wallet cannot cover is
 * written off), quota counters and key budgets counted, the rollups added; and what the
 * calls consumed taken off the daemon's slices. test/pg/book-parity.test.ts holds the two
 * to the same books. A call's wallet transaction is columns of its usage record (tx_*,
 * migration 13), so the wallets are worked out before the records are written: locked and
 * read at once, then each call debited in a loop that runs no SQL. A batch of several
 * accounts then writes their wallets, counters and slices with one statement per kind of
 * pot, whatever the number of accounts; a batch of one account (a hot account's) with plain
 * statements, which cost less than ones that join, and so its rollup rows when its calls fall
 * in one of each, summed in the same loop (docs/performance.md, "Fifth pass", "Sixth pass"). A booking
 * of an account deleted meanwhile is dropped: the batch holds its accounts (FOR KEY SHARE)
 * once, where a foreign key checked every row (migration 10).
 * The batch comes as an agw_booking_v16[] in the daemon's order (binary: postgres/booking-row.ts),
 * and the kept bodies (logs.bodies) as JSON when there are any. With p_probe false (a batch
 * on its first try) it does not look for its bookings in the store first; the insert then
 * refuses one found there (AGW02, postgres/batches.ts). It is agw_book_v13 (migration 13, 15)
 * with the token classes and dropped parameters of migration 16 in the usage records;
 * agw_book_v13 and its wrappers (store/migrations/postgres/agw-book-v13.ts) remain for daemons
 * of an earlier version during a rolling upgrade.
 */

export const PG_BOOK_FUNCTION = `
CREATE OR REPLACE FUNCTION ${BOOK_FUNCTION}(p_daemon text, p_rows ${BOOKING_TYPE}[], p_bodies jsonb DEFAULT NULL, p_probe boolean DEFAULT true)
    RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  v_rows ${BOOKING_TYPE}[];
  v_users text[];
  v_budgets boolean;
  v_finalized boolean;
  v_named bigint;
  v_user text;
  v_old boolean;
  v_cut bigint;
  v_look boolean;
  b ${BOOKING_TYPE};
  i int := 0;
  v_ord int := -2147483648;
  k int;
  -- the wallets of the batch's finalized calls, locked, one element per account
  w_user text[];
  w_unlimited boolean[];
  w_balance bigint[];
  w_month text[];
  w_aused bigint[];
  w_last bigint[];
  w_updated bigint[];
  w_from_b bigint[];
  w_consumed bigint[];
  v_used bigint;
  v_arem bigint;
  v_short bigint;
  v_amount bigint;
  v_from_a bigint;
  v_from_b bigint;
  v_short_ids text[] := '{}';
  v_short_amounts bigint[] := '{}';
  v_written bigint;
  v_lease bigint;
  v_taken bigint;
  -- the batch's quota counters, one element per counter (its pot's name, account, usage type,
  -- period, calls, calls admitted against this daemon's slice)
  g int;
  q_pot text[] := '{}';
  q_user text[] := '{}';
  q_type text[] := '{}';
  q_period text[] := '{}';
  q_n bigint[] := '{}';
  q_leased bigint[] := '{}';
  -- each call's wallet transaction and write-off, by its place in the batch
  x_tx bigint[] := '{}';
  x_amount bigint[] := '{}';
  x_allowance bigint[] := '{}';
  x_after bigint[] := '{}';
  x_description text[] := '{}';
  x_short bigint[] := '{}';
  -- the rollups' figures while every call of the batch falls in one row of each (a hot
  -- account's batch): its keys, calls, failures, raw and charged amounts
  r_single boolean := true;
  r_user text;
  r_day bigint;
  r_provider text;
  r_project text;
  r_key text;
  r_n bigint := 0;
  r_failures bigint := 0;
  r_raw bigint := 0;
  r_charged bigint := 0;
BEGIN
  ${CHECK_DAEMON}
  -- whether the batch counts in key budgets, whether it debits at all, how many accounts it
  -- names (and which, when one), whether it holds a call the request log's retention may
  -- have pruned (its cut is a day back at least, logs.retentionDays >= 1: two days leave
  -- room for the clocks); its accounts, held against deletion (the bookings of an account
  -- that is gone are dropped)
  v_rows := p_rows;
  v_cut := ${NOW_MS} - 2 * 86400000;
  SELECT bool_or(y.status = 'finalized' AND jsonb_array_length(coalesce(y.budgets, '[]'::jsonb)) > 0),
         coalesce(bool_or(y.status = 'finalized'), false), count(DISTINCT y."userId"), min(y."userId"), coalesce(bool_or(y."createdAt" < v_cut), false)
    INTO v_budgets, v_finalized, v_named, v_user, v_old FROM unnest(v_rows) AS y;
  -- a batch that looks for its bookings in the store: a retry, or one with calls that old (a
  -- spooled call replayed late): one whose record was pruned left its debit in wallet_entries
  v_look := p_probe OR v_old;
  -- (the accounts named by an array, not joined with the batch: a locking query keeps a copy of
  -- each joined row, here all of a booking's fields)
  IF v_named = 1 THEN
    v_users := ARRAY(SELECT a.id FROM users a WHERE a.id = v_user FOR KEY SHARE);
  ELSE
    v_users := ARRAY(SELECT a.id FROM users a WHERE a.id = ANY (ARRAY(SELECT y."userId" FROM unnest(v_rows) AS y)) ORDER BY a.id FOR KEY SHARE);
  END IF;
  -- the bookings new to the store: on a first try, all of them whose account is there (one in
  -- the store fails the insert below, and the retry looks); when looking, those not in the store
  IF v_look THEN
    v_rows := ARRAY(SELECT r FROM unnest(v_rows) AS r
                     WHERE r."userId" = ANY (v_users) AND NOT EXISTS (SELECT FROM usage_records u WHERE u.id = r.id)
                       AND NOT EXISTS (SELECT FROM wallet_entries e WHERE e.usage_id = r.id) ORDER BY r.ord);
  ELSIF cardinality(v_users) < v_named THEN
    v_rows := ARRAY(SELECT r FROM unnest(v_rows) AS r WHERE r."userId" = ANY (v_users) ORDER BY r.ord);
  END IF;
  IF cardinality(v_rows) = 0 THEN
    RETURN 0;
  END IF;

  -- the wallets, locked in account order and read at once; then each finalized call, in the
  -- batch's order, counts in its quota counter and debits its account's wallet (allowance
  -- first, never below zero); then the slices the debits came from and the wallets are written
  IF cardinality(v_users) = 1 THEN
    -- one account (a hot account's batch): plain statements cost less than ones that join
    SELECT ARRAY[w.user_id], ARRAY[w.unlimited <> 0], ARRAY[w.balance_nusd], ARRAY[w.allowance_month], ARRAY[w.allowance_used_nusd],
           ARRAY[w.last_allowance_at], ARRAY[w.updated_at]
      INTO w_user, w_unlimited, w_balance, w_month, w_aused, w_last, w_updated
      FROM wallets w WHERE w.user_id = v_users[1] AND v_finalized FOR UPDATE;
    w_user := coalesce(w_user, '{}');
  ELSE
    SELECT coalesce(array_agg(w.user_id), '{}'), array_agg(w.unlimited <> 0), array_agg(w.balance_nusd), array_agg(w.allowance_month),
           array_agg(w.allowance_used_nusd), array_agg(w.last_allowance_at), array_agg(w.updated_at)
      INTO w_user, w_unlimited, w_balance, w_month, w_aused, w_last, w_updated
      FROM (SELECT * FROM wallets WHERE user_id = ANY (ARRAY(SELECT y."userId" FROM unnest(v_rows) AS y WHERE y.status = 'finalized'))
             ORDER BY user_id COLLATE "C" FOR UPDATE) w;
  END IF;
  w_from_b := array_fill(0::bigint, ARRAY[cardinality(w_user)]);
  w_consumed := w_from_b;
  FOREACH b IN ARRAY v_rows LOOP
    i := i + 1;
    -- the batch is booked in the order it comes, which must be the calls' (ord)
    IF b.ord < v_ord THEN
      RAISE EXCEPTION 'agw: a batch must come in the order of its calls (ord)' USING ERRCODE = '22023';
    END IF;
    v_ord := b.ord;
    IF r_single AND b.status IN ('finalized', 'failed') THEN
      IF r_n = 0 THEN
        r_user := b."userId";
        r_day := b."createdAt" / 86400000;
        r_provider := b."providerId";
        r_project := coalesce(b."projectId", '');
        r_key := b."keyId";
      ELSIF b."userId" IS DISTINCT FROM r_user OR b."createdAt" / 86400000 IS DISTINCT FROM r_day OR b."providerId" IS DISTINCT FROM r_provider
            OR coalesce(b."projectId", '') IS DISTINCT FROM r_project OR b."keyId" IS DISTINCT FROM r_key THEN
        r_single := false;
      END IF;
      r_n := r_n + 1;
      IF b.status = 'failed' THEN
        r_failures := r_failures + 1;
      ELSE
        r_raw := r_raw + b."rawNano";
        r_charged := r_charged + b."customerNano";
      END IF;
    END IF;
    CONTINUE WHEN b.status <> 'finalized';
    g := array_position(q_pot, '2q:' || b."userId" || ':' || b."usageType" || ':' || b."periodKey");
    IF g IS NULL THEN
      q_pot := q_pot || ('2q:' || b."userId" || ':' || b."usageType" || ':' || b."periodKey");
      q_user := q_user || b."userId";
      q_type := q_type || b."usageType";
      q_period := q_period || b."periodKey";
      q_n := q_n || 1::bigint;
      q_leased := q_leased || (CASE WHEN b."leasedQuota" THEN 1 ELSE 0 END)::bigint;
    ELSE
      q_n[g] := q_n[g] + 1;
      IF b."leasedQuota" THEN
        q_leased[g] := q_leased[g] + 1;
      END IF;
    END IF;
    k := array_position(w_user, b."userId");
    CONTINUE WHEN k IS NULL;
    v_used := CASE WHEN w_month[k] = b.month THEN w_aused[k] ELSE 0 END;
    v_arem := greatest(0, b."monthlyAllowance" - v_used);
    v_short := CASE WHEN w_unlimited[k] THEN 0 ELSE greatest(0, b."customerNano" - greatest(0, v_arem + w_balance[k])) END;
    v_amount := b."customerNano" - v_short;
    v_from_a := CASE WHEN w_unlimited[k] THEN 0 ELSE least(v_arem, v_amount) END;
    v_from_b := CASE WHEN w_unlimited[k] THEN 0 ELSE v_amount - v_from_a END;
    w_balance[k] := w_balance[k] - v_from_b;
    w_from_b[k] := w_from_b[k] + v_from_b;
    w_month[k] := b.month;
    w_aused[k] := v_used + v_from_a;
    IF b."monthlyAllowance" > 0 THEN
      w_last[k] := b."monthStart";
    END IF;
    w_updated[k] := b."settledAt";
    IF b."leasedWallet" THEN
      w_consumed[k] := w_consumed[k] + v_amount;
    END IF;
    x_tx[i] := nextval('wallet_transactions_id_seq');
    x_amount[i] := -v_amount;
    x_allowance[i] := v_from_a;
    x_after[i] := w_balance[k];
    x_description[i] := CASE WHEN v_short > 0 THEN coalesce(b.description, '') || ' (' || v_short || ' nano-USD not covered: written off)' ELSE b.description END;
    IF v_short > 0 THEN
      r_charged := r_charged - v_short;
      x_short[i] := v_short;
      v_short_ids := v_short_ids || b.id;
      v_short_amounts := v_short_amounts || v_short;
    END IF;
  END LOOP;
  IF cardinality(w_user) = 1 THEN
    -- one account (a hot account's batch): plain statements cost less than one that joins
    v_taken := 0;
    IF w_consumed[1] > 0 THEN
      ${takeFromSlice("'1w:' || w_user[1]", 'w_consumed[1]')}
    END IF;
    UPDATE wallets SET balance_nusd = balance_nusd - w_from_b[1], allowance_month = w_month[1], allowance_used_nusd = w_aused[1],
        last_allowance_at = w_last[1], updated_at = w_updated[1], leased_nusd = greatest(0, leased_nusd - v_taken)
      WHERE user_id = w_user[1];
  ELSIF cardinality(w_user) > 1 THEN
    ${takeFromSlices(`SELECT '1w:' || c.user_id AS pot, c.n, c.user_id FROM unnest(w_user, w_consumed) AS c(user_id, n) WHERE c.n > 0`, 'o.user_id')}
    UPDATE wallets SET balance_nusd = wallets.balance_nusd - s.from_b, allowance_month = s.month, allowance_used_nusd = s.aused,
        last_allowance_at = s.last, updated_at = s.updated, leased_nusd = greatest(0, wallets.leased_nusd - coalesce(used.used, 0))
      FROM unnest(w_user, w_from_b, w_month, w_aused, w_last, w_updated) AS s(user_id, from_b, month, aused, last, updated)
      LEFT JOIN used ON used.user_id = s.user_id
     WHERE wallets.user_id = s.user_id;
  END IF;

  -- the usage records, each with its wallet transaction (a finalized call of an account with
  -- a wallet) and what its wallet could not cover. One already in the store (a batch on its
  -- first try that did commit before, or a concurrent retry) fails the batch (unique_violation
  -- or AGW02), and the daemon tries it again at once, looking first (p_probe)
  IF v_look THEN
${USAGE_INSERT}
    ON CONFLICT (id) DO NOTHING;
  ELSE
    -- (a plain insert costs less than one that first looks for a conflict: a booking in the
    -- store fails it with unique_violation, and the daemon tries again, looking)
${USAGE_INSERT};
  END IF;
  GET DIAGNOSTICS v_written = ROW_COUNT;
  IF v_written < cardinality(v_rows) THEN
    RAISE EXCEPTION 'agw: a booking of this batch is in the store already' USING ERRCODE = 'AGW02';
  END IF;
  -- (a record the retention pruned since the look above left its debit: looked for again, in
  -- a statement of its own, which sees what the pruner committed meanwhile)
  IF v_old THEN
    IF EXISTS (SELECT FROM wallet_entries e WHERE e.usage_id IN (SELECT y.id FROM unnest(v_rows) AS y)) THEN
      RAISE EXCEPTION 'agw: a booking of this batch is in the store already' USING ERRCODE = 'AGW02';
    END IF;
  END IF;
  IF p_bodies IS NOT NULL THEN
    INSERT INTO request_bodies (usage_id, created_at, request, response, request_bytes, response_bytes)
      SELECT x.id, x."createdAt", x.request, x.response, x."requestBytes", x."responseBytes"
        FROM jsonb_to_recordset(p_bodies) AS x(id text, "createdAt" bigint, request text, response text, "requestBytes" bigint, "responseBytes" bigint)
       WHERE x.id IN (SELECT y.id FROM unnest(v_rows) AS y)
      ON CONFLICT (usage_id) DO NOTHING;
  END IF;

  -- quota counters, then key budgets (when the batch counts in any): what was used, and what
  -- of it came from this daemon's slices. A pot's row is locked before its lease row (every
  -- function's order, pots in name order)
  IF cardinality(q_pot) = 1 THEN
    -- one counter: plain statements, as for one wallet; locked first when its slice is
    -- taken, then written once (a second write would check its foreign key again: the row
    -- would be this transaction's own)
    v_taken := 0;
    IF q_leased[1] > 0 THEN
      PERFORM 1 FROM quota_counters WHERE user_id = q_user[1] AND usage_type = q_type[1] AND period_start = q_period[1] FOR UPDATE;
      ${takeFromSlice('q_pot[1]', 'q_leased[1]')}
    END IF;
    INSERT INTO quota_counters (user_id, usage_type, period_start, used, leased) VALUES (q_user[1], q_type[1], q_period[1], q_n[1], v_taken)
    ${QUOTA_ADD};
  ELSIF cardinality(q_pot) > 1 THEN
    -- several counters: every one written first, in pot order (a pot's row before its lease
    -- row, whether this batch took from its slice or not), then the slices, then what was taken
    -- of them off the counters
    INSERT INTO quota_counters (user_id, usage_type, period_start, used, leased)
      SELECT g.user_id, g.usage_type, g.period, g.n, 0 FROM unnest(q_pot, q_user, q_type, q_period, q_n) AS g(pot, user_id, usage_type, period, n)
       ORDER BY g.pot COLLATE "C"
    ${QUOTA_ADD};
    IF EXISTS (SELECT FROM unnest(q_leased) AS n WHERE n > 0) THEN
      ${takeFromSlices(
        `SELECT g.pot, g.n, g.user_id, g.usage_type, g.period FROM unnest(q_pot, q_leased, q_user, q_type, q_period) AS g(pot, n, user_id, usage_type, period) WHERE g.n > 0`,
        'o.user_id, o.usage_type, o.period',
      )}
      UPDATE quota_counters SET leased = greatest(0, quota_counters.leased - used.used) FROM used
       WHERE quota_counters.user_id = used.user_id AND quota_counters.usage_type = used.usage_type AND quota_counters.period_start = used.period;
    END IF;
  END IF;
  IF v_budgets THEN
    -- key budgets the same way: every one written first, in pot order, then the slices
    INSERT INTO key_spend (key_id, period, spent_nusd)
      SELECT e ->> 'keyId', e ->> 'period', sum(y."customerNano" - coalesce(s.short, 0))
        FROM unnest(v_rows) AS y
        CROSS JOIN LATERAL jsonb_array_elements(coalesce(y.budgets, '[]'::jsonb)) AS e
        LEFT JOIN unnest(v_short_ids, v_short_amounts) AS s(id, short) ON s.id = y.id
       WHERE y.status = 'finalized'
       GROUP BY 1, 2 ORDER BY ('3b:' || (e ->> 'keyId') || ':' || (e ->> 'period')) COLLATE "C"
    ON CONFLICT (key_id, period) DO UPDATE SET spent_nusd = key_spend.spent_nusd + excluded.spent_nusd;
    ${takeFromSlices(
      `SELECT '3b:' || (e ->> 'keyId') || ':' || (e ->> 'period') AS pot, sum(y."customerNano" - coalesce(s.short, 0)) AS n,
              e ->> 'keyId' AS key_id, e ->> 'period' AS period
         FROM unnest(v_rows) AS y
         CROSS JOIN LATERAL jsonb_array_elements(coalesce(y.budgets, '[]'::jsonb)) AS e
         LEFT JOIN unnest(v_short_ids, v_short_amounts) AS s(id, short) ON s.id = y.id
        WHERE y.status = 'finalized' AND (e ->> 'leased')::boolean
        GROUP BY 3, 4`,
      'o.key_id, o.period',
    )}
    UPDATE key_spend SET leased_nusd = greatest(0, key_spend.leased_nusd - used.used) FROM used
     WHERE key_spend.key_id = used.key_id AND key_spend.period = used.period;
  END IF;

  -- the rollups, from the bookings as charged (what a wallet could not cover is not counted), not
  -- read back; the join with what was written off only when something was (a hash join's
  -- start-up cost a batch as much as the join of nothing saved)
  IF r_single THEN
    IF r_n > 0 THEN
${ROLLUP_ROW}
    END IF;
  ELSIF cardinality(v_short_ids) = 0 THEN
${rollups(false)}
  ELSE
${rollups(true)}
  END IF;
  RETURN cardinality(v_rows);
END
$fn$;
`;
