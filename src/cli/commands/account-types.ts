/**
 * The API shapes the account commands read: the same TypeBox schemas that validate and
 * document the daemon's answers (type-only imports: nothing is loaded at run time).
 */
export type { WalletT as Wallet, WalletTransactionsT as Transactions } from '../../shared/schemas/wallet.js';
export type { EntitlementsT as Entitlements, AliasesResponseT as Aliases } from '../../shared/schemas/gateway.js';
export type { PublicCatalogT as ProviderCatalog } from '../../shared/schemas/catalog.js';
