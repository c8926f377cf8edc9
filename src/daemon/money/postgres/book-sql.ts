/**
 * Statement templates of agw_book_v16 (postgres/book.ts): the parts it writes more than once or in
 * two variants. They name the function's variables (v_rows, v_short_ids, p_daemon, …).
 */

/**
 * agw_book_v16's two rollup statements: a batch's calls as charged, added to the day's spend
 * per provider and project and per key, rows in key order. With `writtenOff`, a charge
 * counts less what its wallet could not cover (v_short_ids, v_short_amounts).
 */
export function rollups(writtenOff: boolean): string {
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
    ON CONFLICT (user_id, day, provider_id, project_key) DO UPDATE SET ${rollupAdd('spend_daily')};
    INSERT INTO spend_key_daily (user_id, day, key_id, calls, failures, raw_nusd, customer_nusd)
      SELECT y."userId", y."createdAt" / 86400000, y."keyId", count(*), count(*) FILTER (WHERE y.status = 'failed'),
             coalesce(sum(y."rawNano") FILTER (WHERE y.status = 'finalized'), 0),
             coalesce(sum(${charged}) FILTER (WHERE y.status = 'finalized'), 0)
        ${from}
       WHERE y.status IN ('finalized', 'failed') AND y."keyId" IS NOT NULL
       GROUP BY 1, 2, 3 ORDER BY y."userId" COLLATE "C", y."createdAt" / 86400000, y."keyId" COLLATE "C"
    ON CONFLICT (user_id, day, key_id) DO UPDATE SET ${rollupAdd('spend_key_daily')};`;
}

/** A rollup row's upsert: the batch's figures added to the row's. */
function rollupAdd(table: string): string {
  return `calls = ${table}.calls + excluded.calls, failures = ${table}.failures + excluded.failures,
      raw_nusd = ${table}.raw_nusd + excluded.raw_nusd, customer_nusd = ${table}.customer_nusd + excluded.customer_nusd`;
}

/** The two rollups of a batch whose calls fall in one row of each (r_*: a hot account's batch). */
export const ROLLUP_ROW = `    INSERT INTO spend_daily (user_id, day, provider_id, project_key, calls, failures, raw_nusd, customer_nusd)
      VALUES (r_user, r_day, r_provider, r_project, r_n, r_failures, r_raw, r_charged)
    ON CONFLICT (user_id, day, provider_id, project_key) DO UPDATE SET ${rollupAdd('spend_daily')};
    IF r_key IS NOT NULL THEN
      INSERT INTO spend_key_daily (user_id, day, key_id, calls, failures, raw_nusd, customer_nusd)
        VALUES (r_user, r_day, r_key, r_n, r_failures, r_raw, r_charged)
      ON CONFLICT (user_id, day, key_id) DO UPDATE SET ${rollupAdd('spend_key_daily')};
    END IF;`;

/**
 * Takes `n` off this daemon's slice of `pot` (its pot's row locked before), into v_taken: at
 * most what the slice holds. A slice that covers it (the rule: a call spends at most what it
 * held) costs one statement; one that holds less, or is gone, is read first.
 */
export function takeFromSlice(pot: string, n: string): string {
  return `UPDATE leases SET amount = amount - ${n} WHERE pot = ${pot} AND daemon_id = p_daemon AND amount >= ${n};
      IF FOUND THEN
        v_taken := ${n};
      ELSE
        SELECT amount INTO v_lease FROM leases WHERE pot = ${pot} AND daemon_id = p_daemon FOR UPDATE;
        v_taken := least(coalesce(v_lease, 0), ${n});
        IF v_taken > 0 THEN
          UPDATE leases SET amount = amount - v_taken WHERE pot = ${pot} AND daemon_id = p_daemon;
        END IF;
      END IF;`;
}

/**
 * A statement's WITH list that takes what a batch's calls consumed off this daemon's slices:
 * `wanted` is a query of (pot, n, …keys). The lease rows are locked in pot order, the lock
 * order of every function, and each gives at most what it holds. The CTE `used` yields the
 * keys and what was taken, for the pots' own `leased` columns.
 */
export function takeFromSlices(wanted: string, keys: string): string {
  return `WITH w AS (${wanted}),
       o AS MATERIALIZED (SELECT l.amount, w.* FROM leases l JOIN w ON l.pot = w.pot
                           WHERE l.daemon_id = p_daemon ORDER BY l.pot COLLATE "C" FOR UPDATE OF l),
       used AS (UPDATE leases SET amount = leases.amount - least(o.amount, o.n) FROM o
                 WHERE leases.pot = o.pot AND leases.daemon_id = p_daemon AND least(o.amount, o.n) > 0
                 RETURNING ${keys}, least(o.amount, o.n) AS used)`;
}

/**
 * A quota counter's upsert: the calls counted in `used`; the row inserted carries in `leased`
 * what of them came from this daemon's slice (a counter not there yet had no slices).
 */
export const QUOTA_ADD = `ON CONFLICT (user_id, usage_type, period_start) DO UPDATE SET used = quota_counters.used + excluded.used,
      leased = greatest(0, quota_counters.leased - excluded.leased)`;

/** The usage records of a batch, each with its wallet transaction and write-off (x_*, by place). */
export const USAGE_INSERT = `    INSERT INTO usage_records (id, user_id, key_id, usage_type, status, endpoint, provider_id, model, alias, project_id,
       prompt_tokens, completion_tokens, cached_tokens, units, raw_cost_nusd, customer_cost_nusd, hold_nusd, written_off_nusd,
       http_status, answer_status, error_code, stream, latency_ms, ttfb_ms, attempts, period_start, created_at, finalized_at,
       tx_id, tx_amount_nusd, tx_allowance_nusd, tx_balance_after_nusd, tx_description, cache_write_tokens, reasoning_tokens, dropped_params)
    SELECT id, "userId", "keyId", "usageType", status, endpoint, "providerId", model, alias, "projectId",
       "promptTokens", "completionTokens", "cachedTokens", units,
       CASE WHEN status = 'finalized' THEN "rawNano" ELSE 0 END,
       CASE WHEN status = 'finalized' THEN "customerNano" - coalesce(x_short[ordinality::int], 0) ELSE 0 END,
       "holdNano", "writtenOffNano" + coalesce(x_short[ordinality::int], 0), "httpStatus", "answerStatus", "errorCode", CASE WHEN stream THEN 1 ELSE 0 END,
       "latencyMs", "ttfbMs", attempts, "periodKey", "createdAt", "settledAt",
       x_tx[ordinality::int], x_amount[ordinality::int], x_allowance[ordinality::int], x_after[ordinality::int], x_description[ordinality::int],
       coalesce("cacheWriteTokens", 0), coalesce("reasoningTokens", 0), "droppedParams"
      FROM unnest(v_rows) WITH ORDINALITY AS y`;
