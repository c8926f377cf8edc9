import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteDb } from '../../src/daemon/store/sqlite.js';
import { migrate } from '../../src/daemon/store/migrations/index.js';
import { createUser, effectiveTier } from '../../src/daemon/store/users.js';
import { addOrgMember, createOrg, setOrgActive } from '../../src/daemon/store/orgs.js';
import { createApiKey, revokeApiKey, verifyApiKey } from '../../src/daemon/store/keys.js';
import { credit, debit, getWalletRow, listTransactions } from '../../src/daemon/money/wallets.js';
import { usdToNano } from '../../src/shared/money.js';

/** Issue #2 point 3: the embedded SQLite store and the repositories on it. */
const dir = mkdtempSync(join(tmpdir(), 'agw-store-'));
const file = join(dir, 'agw.db');
let db: SqliteDb;

beforeAll(async () => {
  db = new SqliteDb(file);
  await migrate(db);
});
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const newUser = (email: string, tier = 'free') => db.tx((q) => createUser(q, { email, tier }));

describe('SQLite store', () => {
  it('runs in WAL mode with foreign keys and a busy timeout', () => {
    expect(db.raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.raw.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.raw.pragma('busy_timeout', { simple: true })).toBe(5000);
  });

  it('enforces foreign keys', async () => {
    await expect(db.run('INSERT INTO api_keys (id, user_id, lookup, hash, created_at) VALUES (?, ?, ?, ?, ?)', ['k', 'usr_none', 'l', 'h', 1])).rejects.toThrow(/FOREIGN KEY/);
  });

  it('a transaction that throws leaves nothing behind', async () => {
    await expect(
      db.tx(async (q) => {
        await createUser(q, { email: 'rollback@example.com', tier: 'free' });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await db.get('SELECT id FROM users WHERE email = ?', ['rollback@example.com'])).toBeUndefined();
  });

  it('createUser creates the wallet; emails are unique regardless of case', async () => {
    const u = await newUser('Wallet@Example.com');
    expect(await getWalletRow(db, u.id)).toMatchObject({ balance_nusd: 0, currency: 'USD', unlimited: 0 });
    await expect(newUser('wallet@example.com')).rejects.toThrow(/UNIQUE/);
  });

  it('a second connection (agw admin beside the daemon) sees committed writes at once', async () => {
    const other = new SqliteDb(file);
    try {
      const u = await other.tx((q) => createUser(q, { email: 'admin-side@example.com', tier: 'pro' }));
      await other.tx((q) => credit(q, { userId: u.id, amount: usdToNano(2), type: 'credit' }));
      expect(Number((await getWalletRow(db, u.id))!.balance_nusd)).toBe(usdToNano(2));
    } finally {
      await other.close();
    }
  });
});

describe('keys', () => {
  it('verify by hash, refuse wrong secrets and revoked keys', async () => {
    const u = await newUser('keys@example.com');
    const k = await createApiKey(db, u.id, 'ci');
    expect((await verifyApiKey(db, k.key))?.id).toBe(k.id);
    expect(await verifyApiKey(db, k.key.slice(0, -1) + (k.key.endsWith('A') ? 'B' : 'A'))).toBeUndefined();
    const row = await db.get<{ hash: string }>('SELECT hash FROM api_keys WHERE id = ?', [k.id]);
    expect(row!.hash).not.toContain(k.key.split('_').slice(2).join('_')); // the secret (base64url: it may hold '_' itself)
    expect(await revokeApiKey(db, k.id)).toBe(true);
    expect(await verifyApiKey(db, k.key)).toBeUndefined();
    expect(await revokeApiKey(db, 'key_unknown')).toBe(false);
  });
});

describe('effective tier', () => {
  it('an active organization’s tier wins over the user’s own', async () => {
    const u = await newUser('member@example.com', 'free');
    const org = await createOrg(db, { name: 'Acme', tier: 'enterprise' });
    expect(await effectiveTier(db, u.id)).toBe('free');
    await addOrgMember(db, org.id, u.id);
    expect(await effectiveTier(db, u.id)).toBe('enterprise');
    await setOrgActive(db, org.id, false);
    expect(await effectiveTier(db, u.id)).toBe('free');
  });
});

describe('wallet debits', () => {
  const now = Date.UTC(2026, 5, 15);
  const allowance = usdToNano(1);

  it('spend the month’s allowance first, then the balance; one transaction per debit', async () => {
    const u = await newUser('spender@example.com', 'pro');
    await db.tx((q) => credit(q, { userId: u.id, amount: usdToNano(5), type: 'credit' }));
    const r = await db.tx((q) => debit(q, { userId: u.id, amount: usdToNano(1.5), monthlyAllowance: allowance, type: 'usage', now }));
    expect(r).toMatchObject({ fromAllowance: usdToNano(1), fromBalance: usdToNano(0.5), balanceAfter: usdToNano(4.5) });
    const txs = await listTransactions(db, u.id, 10);
    expect(txs.map((t) => [t.type, Number(t.amount_nusd)])).toEqual([
      ['usage', -usdToNano(1.5)],
      ['credit', usdToNano(5)],
    ]);
  });

  it('requireCover refuses a debit the funds cannot cover and changes nothing', async () => {
    const u = await newUser('short@example.com');
    await db.tx((q) => credit(q, { userId: u.id, amount: usdToNano(1), type: 'credit' }));
    const before = await getWalletRow(db, u.id);
    const r = await db.tx((q) => debit(q, { userId: u.id, amount: usdToNano(2), monthlyAllowance: 0, type: 'usage', requireCover: true, now }));
    expect(r).toBeNull();
    expect(await getWalletRow(db, u.id)).toEqual(before);
    expect(await listTransactions(db, u.id, 10)).toHaveLength(1);
  });

  it('100 concurrent debits are each booked exactly once', async () => {
    const u = await newUser('busy@example.com');
    await db.tx((q) => credit(q, { userId: u.id, amount: usdToNano(100), type: 'credit' }));
    const cost = usdToNano(0.000123);
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        db.tx((q) => debit(q, { userId: u.id, amount: cost, monthlyAllowance: 0, type: 'usage', usageId: `use_${i}`, now })),
      ),
    );
    expect(Number((await getWalletRow(db, u.id))!.balance_nusd)).toBe(usdToNano(100) - 100 * cost);
    expect(await listTransactions(db, u.id, 500)).toHaveLength(101);
    // usage ids are unique: the same usage cannot be debited twice
    await expect(db.tx((q) => debit(q, { userId: u.id, amount: cost, monthlyAllowance: 0, type: 'usage', usageId: 'use_7', now }))).rejects.toThrow(/UNIQUE/);
    expect(Number((await getWalletRow(db, u.id))!.balance_nusd)).toBe(usdToNano(100) - 100 * cost);
  });
});
