/**
 * Version 10 for PostgreSQL (issue #16): usage_records and wallet_transactions lose their
 * foreign key to users. Its check ran once per row, two per booked call, each a query
 * and a row lock. agw_book_v7 (money/postgres/book.ts) now holds each account of a batch
 * against deletion once (FOR KEY SHARE, the lock the checks took) and drops the bookings
 * of an account that is gone; a trigger deletes an account's records and transactions
 * with it, as ON DELETE CASCADE did. The other writers of wallet_transactions lock the
 * account's wallet first, which goes with the account. The booking function of that time
 * went with it; migration 13 installs the current one. SQLite has nothing to change.
 */
export const SCHEMA_PG_V10_BOOK = `
ALTER TABLE usage_records DROP CONSTRAINT usage_records_user_id_fkey;
ALTER TABLE wallet_transactions DROP CONSTRAINT wallet_transactions_user_id_fkey;
CREATE FUNCTION agw_user_deleted_v10() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM wallet_transactions WHERE user_id = OLD.id;
  DELETE FROM usage_records WHERE user_id = OLD.id;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER agw_user_deleted AFTER DELETE ON users FOR EACH ROW EXECUTE FUNCTION agw_user_deleted_v10();
`;
