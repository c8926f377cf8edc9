import { AGW_BOOK_V13 } from './agw-book-v13.js';

/**
 * Version 13 for PostgreSQL (issue #16): a call's wallet debit is written as columns of its
 * usage record (tx_*) instead of a row of its own. That row cost a booked call a heap tuple
 * and three index entries (id, user's list, usage id), a tenth of a batch of 20's
 * instructions (docs/performance.md, "Fifth pass").
 *
 * `wallet_transactions` becomes a view over the other transactions (top-ups, credits,
 * purchases: the table, renamed `wallet_entries`) and the usage records that carry a
 * debit, one id sequence for both, so a listing reads as before: a merge of two index scans
 * by user and id (the records' index is migration 14's). Writers insert into the view as
 * before: a trigger puts the row in `wallet_entries`. The debits booked before stay where
 * they are. A record deleted (the request log's retention, logs.retentionDays) leaves its
 * debit behind: a trigger moves it to `wallet_entries`, same id, so the wallet's history is
 * kept whole. This migration installs the booking function (agw_book_v13) too, the first
 * that needs these columns. SQLite has nothing to change.
 */
export const SCHEMA_PG_V13_USAGE_DEBIT = `
ALTER TABLE wallet_transactions RENAME TO wallet_entries;
ALTER TABLE usage_records ADD COLUMN tx_id BIGINT, ADD COLUMN tx_amount_nusd BIGINT, ADD COLUMN tx_allowance_nusd BIGINT,
  ADD COLUMN tx_balance_after_nusd BIGINT, ADD COLUMN tx_description TEXT;
CREATE VIEW wallet_transactions AS
  SELECT * FROM (
    SELECT id, user_id, type, amount_nusd, allowance_nusd, balance_after_nusd, description, provider_id, model, project_id,
           skill_id, usage_id, created_at
      FROM wallet_entries
    UNION ALL
    SELECT tx_id, user_id, 'usage', tx_amount_nusd, tx_allowance_nusd, tx_balance_after_nusd, tx_description, provider_id, model,
           project_id, NULL::bigint, id, finalized_at
      FROM usage_records) t
   WHERE id IS NOT NULL;
CREATE FUNCTION agw_wallet_tx_insert_v13() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO wallet_entries (user_id, type, amount_nusd, allowance_nusd, balance_after_nusd, description, provider_id, model,
      project_id, skill_id, usage_id, created_at)
    VALUES (NEW.user_id, NEW.type, NEW.amount_nusd, coalesce(NEW.allowance_nusd, 0), NEW.balance_after_nusd, NEW.description,
      NEW.provider_id, NEW.model, NEW.project_id, NEW.skill_id, NEW.usage_id, NEW.created_at)
    RETURNING id INTO NEW.id;
  RETURN NEW;
END
$fn$;
CREATE TRIGGER agw_wallet_tx_insert INSTEAD OF INSERT ON wallet_transactions FOR EACH ROW EXECUTE FUNCTION agw_wallet_tx_insert_v13();
CREATE FUNCTION agw_usage_deleted_v13() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO wallet_entries (id, user_id, type, amount_nusd, allowance_nusd, balance_after_nusd, description, provider_id, model,
      project_id, usage_id, created_at)
    SELECT g.tx_id, g.user_id, 'usage', g.tx_amount_nusd, g.tx_allowance_nusd, g.tx_balance_after_nusd, g.tx_description, g.provider_id,
           g.model, g.project_id, g.id, coalesce(g.finalized_at, g.created_at)
      FROM gone g WHERE g.tx_id IS NOT NULL;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER agw_usage_deleted AFTER DELETE ON usage_records REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION agw_usage_deleted_v13();
CREATE OR REPLACE FUNCTION agw_user_deleted_v10() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  -- the records first: their debits move to wallet_entries (agw_usage_deleted), and go with it
  DELETE FROM usage_records WHERE user_id = OLD.id;
  DELETE FROM wallet_entries WHERE user_id = OLD.id;
  RETURN NULL;
END
$fn$;
${AGW_BOOK_V13}
`;
