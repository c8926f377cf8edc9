/**
 * Version 14 for PostgreSQL (issue #16): the index the wallet's transaction list reads the
 * debits of migration 13 by (user, id), in a migration of its own: built in the same
 * transaction as migration 13's new columns, it would hold that ALTER's exclusive lock on
 * usage_records, which blocks reads too, for as long as the build scans the table. Alone it
 * blocks only the table's writes (bookings wait), as every index migration does; run
 * migrations at a quiet time (docs/scale-out.md). Until it is built, a listing reads a
 * user's debits by the request log's index and sorts them. SQLite has nothing to change.
 */
export const SCHEMA_PG_V14_USAGE_DEBIT_INDEX = `CREATE INDEX usage_wallet_tx ON usage_records(user_id, tx_id) WHERE tx_id IS NOT NULL`;
