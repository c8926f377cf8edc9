/**
 * The last steps of agw_book_v13 (agw-book-v13.ts), frozen with it: after the wallets and the
 * usage records, the quota counters, the key budgets (each pot's row locked before its
 * lease row) and the spend rollups. Spliced into the function's text as it is; not a
 * statement of its own.
 */
export const AGW_BOOK_V13_COUNTS = `  -- quota counters, then key budgets (when the batch counts in any): what was used, and what
  -- of it came from this daemon's slices. A pot's row is locked before its lease row (every
  -- function's order, pots in name order)
  IF cardinality(q_pot) = 1 THEN
    -- one counter: plain statements, as for one wallet; locked first when its slice is
    -- taken, then written once (a second write would check its foreign key again: the row
    -- would be this transaction's own)
    v_taken := 0;
    IF q_leased[1] > 0 THEN
      PERFORM 1 FROM quota_counters WHERE user_id = q_user[1] AND usage_type = q_type[1] AND period_start = q_period[1] FOR UPDATE;
      UPDATE leases SET amount = amount - q_leased[1] WHERE pot = q_pot[1] AND daemon_id = p_daemon AND amount >= q_leased[1];
      IF FOUND THEN
        v_taken := q_leased[1];
      ELSE
        SELECT amount INTO v_lease FROM leases WHERE pot = q_pot[1] AND daemon_id = p_daemon FOR UPDATE;
        v_taken := least(coalesce(v_lease, 0), q_leased[1]);
        IF v_taken > 0 THEN
          UPDATE leases SET amount = amount - v_taken WHERE pot = q_pot[1] AND daemon_id = p_daemon;
        END IF;
      END IF;
    END IF;
    INSERT INTO quota_counters (user_id, usage_type, period_start, used, leased) VALUES (q_user[1], q_type[1], q_period[1], q_n[1], v_taken)
    ON CONFLICT (user_id, usage_type, period_start) DO UPDATE SET used = quota_counters.used + excluded.used,
      leased = greatest(0, quota_counters.leased - excluded.leased);
  ELSIF cardinality(q_pot) > 1 THEN
    -- several counters: every one written first, in pot order (a pot's row before its lease
    -- row, whether this batch took from its slice or not), then the slices, then what was taken
    -- of them off the counters
    INSERT INTO quota_counters (user_id, usage_type, period_start, used, leased)
      SELECT g.user_id, g.usage_type, g.period, g.n, 0 FROM unnest(q_pot, q_user, q_type, q_period, q_n) AS g(pot, user_id, usage_type, period, n)
       ORDER BY g.pot COLLATE "C"
    ON CONFLICT (user_id, usage_type, period_start) DO UPDATE SET used = quota_counters.used + excluded.used,
      leased = greatest(0, quota_counters.leased - excluded.leased);
    IF EXISTS (SELECT FROM unnest(q_leased) AS n WHERE n > 0) THEN
      WITH w AS (SELECT g.pot, g.n, g.user_id, g.usage_type, g.period FROM unnest(q_pot, q_leased, q_user, q_type, q_period) AS g(pot, n, user_id, usage_type, period) WHERE g.n > 0),
       o AS MATERIALIZED (SELECT l.amount, w.* FROM leases l JOIN w ON l.pot = w.pot
                           WHERE l.daemon_id = p_daemon ORDER BY l.pot COLLATE "C" FOR UPDATE OF l),
       used AS (UPDATE leases SET amount = leases.amount - least(o.amount, o.n) FROM o
                 WHERE leases.pot = o.pot AND leases.daemon_id = p_daemon AND least(o.amount, o.n) > 0
                 RETURNING o.user_id, o.usage_type, o.period, least(o.amount, o.n) AS used)
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
    WITH w AS (SELECT '3b:' || (e ->> 'keyId') || ':' || (e ->> 'period') AS pot, sum(y."customerNano" - coalesce(s.short, 0)) AS n,
              e ->> 'keyId' AS key_id, e ->> 'period' AS period
         FROM unnest(v_rows) AS y
         CROSS JOIN LATERAL jsonb_array_elements(coalesce(y.budgets, '[]'::jsonb)) AS e
         LEFT JOIN unnest(v_short_ids, v_short_amounts) AS s(id, short) ON s.id = y.id
        WHERE y.status = 'finalized' AND (e ->> 'leased')::boolean
        GROUP BY 3, 4),
       o AS MATERIALIZED (SELECT l.amount, w.* FROM leases l JOIN w ON l.pot = w.pot
                           WHERE l.daemon_id = p_daemon ORDER BY l.pot COLLATE "C" FOR UPDATE OF l),
       used AS (UPDATE leases SET amount = leases.amount - least(o.amount, o.n) FROM o
                 WHERE leases.pot = o.pot AND leases.daemon_id = p_daemon AND least(o.amount, o.n) > 0
                 RETURNING o.key_id, o.period, least(o.amount, o.n) AS used)
    UPDATE key_spend SET leased_nusd = greatest(0, key_spend.leased_nusd - used.used) FROM used
     WHERE key_spend.key_id = used.key_id AND key_spend.period = used.period;
  END IF;

  -- the rollups, from the bookings as charged (what a wallet could not cover is not counted), not
  -- read back; the join with what was written off only when something was (a hash join's
  -- start-up cost a batch as much as the join of nothing saved)
  IF r_single THEN
    IF r_n > 0 THEN
    INSERT INTO spend_daily (user_id, day, provider_id, project_key, calls, failures, raw_nusd, customer_nusd)
      VALUES (r_user, r_day, r_provider, r_project, r_n, r_failures, r_raw, r_charged)
    ON CONFLICT (user_id, day, provider_id, project_key) DO UPDATE SET calls = spend_daily.calls + excluded.calls, failures = spend_daily.failures + excluded.failures,
      raw_nusd = spend_daily.raw_nusd + excluded.raw_nusd, customer_nusd = spend_daily.customer_nusd + excluded.customer_nusd;
    IF r_key IS NOT NULL THEN
      INSERT INTO spend_key_daily (user_id, day, key_id, calls, failures, raw_nusd, customer_nusd)
        VALUES (r_user, r_day, r_key, r_n, r_failures, r_raw, r_charged)
      ON CONFLICT (user_id, day, key_id) DO UPDATE SET calls = spend_key_daily.calls + excluded.calls, failures = spend_key_daily.failures + excluded.failures,
      raw_nusd = spend_key_daily.raw_nusd + excluded.raw_nusd, customer_nusd = spend_key_daily.customer_nusd + excluded.customer_nusd;
    END IF;
    END IF;
  ELSIF cardinality(v_short_ids) = 0 THEN
    INSERT INTO spend_daily (user_id, day, provider_id, project_key, calls, failures, raw_nusd, customer_nusd)
      SELECT y."userId", y."createdAt" / 86400000, y."providerId", coalesce(y."projectId", ''), count(*), count(*) FILTER (WHERE y.status = 'failed'),
             coalesce(sum(y."rawNano") FILTER (WHERE y.status = 'finalized'), 0),
             coalesce(sum(y."customerNano") FILTER (WHERE y.status = 'finalized'), 0)
        FROM unnest(v_rows) AS y
       WHERE y.status IN ('finalized', 'failed')
       GROUP BY 1, 2, 3, 4 ORDER BY y."userId" COLLATE "C", y."createdAt" / 86400000, y."providerId" COLLATE "C", coalesce(y."projectId", '') COLLATE "C"
    ON CONFLICT (user_id, day, provider_id, project_key) DO UPDATE SET calls = spend_daily.calls + excluded.calls, failures = spend_daily.failures + excluded.failures,
      raw_nusd = spend_daily.raw_nusd + excluded.raw_nusd, customer_nusd = spend_daily.customer_nusd + excluded.customer_nusd;
    INSERT INTO spend_key_daily (user_id, day, key_id, calls, failures, raw_nusd, customer_nusd)
      SELECT y."userId", y."createdAt" / 86400000, y."keyId", count(*), count(*) FILTER (WHERE y.status = 'failed'),
             coalesce(sum(y."rawNano") FILTER (WHERE y.status = 'finalized'), 0),
             coalesce(sum(y."customerNano") FILTER (WHERE y.status = 'finalized'), 0)
        FROM unnest(v_rows) AS y
       WHERE y.status IN ('finalized', 'failed') AND y."keyId" IS NOT NULL
       GROUP BY 1, 2, 3 ORDER BY y."userId" COLLATE "C", y."createdAt" / 86400000, y."keyId" COLLATE "C"
    ON CONFLICT (user_id, day, key_id) DO UPDATE SET calls = spend_key_daily.calls + excluded.calls, failures = spend_key_daily.failures + excluded.failures,
      raw_nusd = spend_key_daily.raw_nusd + excluded.raw_nusd, customer_nusd = spend_key_daily.customer_nusd + excluded.customer_nusd;
  ELSE
    INSERT INTO spend_daily (user_id, day, provider_id, project_key, calls, failures, raw_nusd, customer_nusd)
      SELECT y."userId", y."createdAt" / 86400000, y."providerId", coalesce(y."projectId", ''), count(*), count(*) FILTER (WHERE y.status = 'failed'),
             coalesce(sum(y."rawNano") FILTER (WHERE y.status = 'finalized'), 0),
             coalesce(sum(y."customerNano" - coalesce(s.short, 0)) FILTER (WHERE y.status = 'finalized'), 0)
        FROM unnest(v_rows) AS y
        LEFT JOIN unnest(v_short_ids, v_short_amounts) AS s(id, short) ON s.id = y.id
       WHERE y.status IN ('finalized', 'failed')
       GROUP BY 1, 2, 3, 4 ORDER BY y."userId" COLLATE "C", y."createdAt" / 86400000, y."providerId" COLLATE "C", coalesce(y."projectId", '') COLLATE "C"
    ON CONFLICT (user_id, day, provider_id, project_key) DO UPDATE SET calls = spend_daily.calls + excluded.calls, failures = spend_daily.failures + excluded.failures,
      raw_nusd = spend_daily.raw_nusd + excluded.raw_nusd, customer_nusd = spend_daily.customer_nusd + excluded.customer_nusd;
    INSERT INTO spend_key_daily (user_id, day, key_id, calls, failures, raw_nusd, customer_nusd)
      SELECT y."userId", y."createdAt" / 86400000, y."keyId", count(*), count(*) FILTER (WHERE y.status = 'failed'),
             coalesce(sum(y."rawNano") FILTER (WHERE y.status = 'finalized'), 0),
             coalesce(sum(y."customerNano" - coalesce(s.short, 0)) FILTER (WHERE y.status = 'finalized'), 0)
        FROM unnest(v_rows) AS y
        LEFT JOIN unnest(v_short_ids, v_short_amounts) AS s(id, short) ON s.id = y.id
       WHERE y.status IN ('finalized', 'failed') AND y."keyId" IS NOT NULL
       GROUP BY 1, 2, 3 ORDER BY y."userId" COLLATE "C", y."createdAt" / 86400000, y."keyId" COLLATE "C"
    ON CONFLICT (user_id, day, key_id) DO UPDATE SET calls = spend_key_daily.calls + excluded.calls, failures = spend_key_daily.failures + excluded.failures,
      raw_nusd = spend_key_daily.raw_nusd + excluded.raw_nusd, customer_nusd = spend_key_daily.customer_nusd + excluded.customer_nusd;
  END IF;
`;
