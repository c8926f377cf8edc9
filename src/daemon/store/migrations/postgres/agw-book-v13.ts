import { AGW_BOOK_V13_COUNTS } from './agw-book-v13-counts.js';

/**
 * agw_book_v13 (with its wrappers agw_book_v11 and agw_book_v7 for daemons of earlier versions) as
 * migrations 13 and 15 installed it, frozen here when migration 16 moved the code on to
 * agw_book_v16 (money/postgres/book.ts): a shipped migration never changes, and daemons of the
 * previous version keep booking through it during a rolling upgrade. Its last steps (quota
 * counters, key budgets, rollups) are in agw-book-v13-counts.ts, spliced in unchanged: the
 * text is pinned by its hash in test/pg/store.test.ts.
 */
export const AGW_BOOK_V13 = `
CREATE OR REPLACE FUNCTION agw_book_v13(p_daemon text, p_rows agw_booking_v7[], p_bodies jsonb DEFAULT NULL, p_probe boolean DEFAULT true)
    RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  v_rows agw_booking_v7[];
  v_users text[];
  v_budgets boolean;
  v_finalized boolean;
  v_named bigint;
  v_user text;
  v_old boolean;
  v_cut bigint;
  v_look boolean;
  b agw_booking_v7;
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
  
  PERFORM 1 FROM daemons WHERE id = p_daemon FOR KEY SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'agw: the leases of daemon % were reclaimed', p_daemon USING ERRCODE = 'AGW01';
  END IF;
  -- whether the batch counts in key budgets, whether it debits at all, how many accounts it
  -- names (and which, when one), whether it holds a call the request log's retention may
  -- have pruned (its cut is a day back at least, logs.retentionDays >= 1: two days leave
  -- room for the clocks); its accounts, held against deletion (the bookings of an account
  -- that is gone are dropped)
  v_rows := p_rows;
  v_cut := (extract(epoch from clock_timestamp()) * 1000)::bigint - 2 * 86400000;
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
      UPDATE leases SET amount = amount - w_consumed[1] WHERE pot = '1w:' || w_user[1] AND daemon_id = p_daemon AND amount >= w_consumed[1];
      IF FOUND THEN
        v_taken := w_consumed[1];
      ELSE
        SELECT amount INTO v_lease FROM leases WHERE pot = '1w:' || w_user[1] AND daemon_id = p_daemon FOR UPDATE;
        v_taken := least(coalesce(v_lease, 0), w_consumed[1]);
        IF v_taken > 0 THEN
          UPDATE leases SET amount = amount - v_taken WHERE pot = '1w:' || w_user[1] AND daemon_id = p_daemon;
        END IF;
      END IF;
    END IF;
    UPDATE wallets SET balance_nusd = balance_nusd - w_from_b[1], allowance_month = w_month[1], allowance_used_nusd = w_aused[1],
        last_allowance_at = w_last[1], updated_at = w_updated[1], leased_nusd = greatest(0, leased_nusd - v_taken)
      WHERE user_id = w_user[1];
  ELSIF cardinality(w_user) > 1 THEN
    WITH w AS (SELECT '1w:' || c.user_id AS pot, c.n, c.user_id FROM unnest(w_user, w_consumed) AS c(user_id, n) WHERE c.n > 0),
       o AS MATERIALIZED (SELECT l.amount, w.* FROM leases l JOIN w ON l.pot = w.pot
                           WHERE l.daemon_id = p_daemon ORDER BY l.pot COLLATE "C" FOR UPDATE OF l),
       used AS (UPDATE leases SET amount = leases.amount - least(o.amount, o.n) FROM o
                 WHERE leases.pot = o.pot AND leases.daemon_id = p_daemon AND least(o.amount, o.n) > 0
                 RETURNING o.user_id, least(o.amount, o.n) AS used)
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
    ON CONFLICT (id) DO NOTHING;
  ELSE
    -- (a plain insert costs less than one that first looks for a conflict: a booking in the
    -- store fails it with unique_violation, and the daemon tries again, looking)
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
      FROM unnest(v_rows) WITH ORDINALITY AS y;
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

${AGW_BOOK_V13_COUNTS}  RETURN cardinality(v_rows);
END
$fn$;
CREATE OR REPLACE FUNCTION agw_book_v11(p_daemon text, p_rows agw_booking_v7[], p_bodies jsonb DEFAULT NULL) RETURNS integer LANGUAGE plpgsql AS $fn$
BEGIN
  BEGIN
    RETURN agw_book_v13(p_daemon, p_rows, p_bodies, true);
  EXCEPTION WHEN SQLSTATE 'AGW02' THEN
    -- a daemon of an earlier version does not know AGW02: a booking another transaction wrote
    -- while this one looked is skipped here, as its agw_book_v11 skipped it (it has committed
    -- by now, so the second look sees it)
    RETURN agw_book_v13(p_daemon, p_rows, p_bodies, true);
  END;
END
$fn$;
CREATE OR REPLACE FUNCTION agw_book_v7(p_daemon text, p_bookings jsonb) RETURNS integer LANGUAGE sql AS $fn$
  SELECT agw_book_v11(p_daemon, ARRAY(SELECT y FROM jsonb_populate_recordset(NULL::agw_booking_v7, p_bookings) AS y ORDER BY y.ord))
$fn$;
`;
