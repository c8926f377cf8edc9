/**
 * Version 1 of the schema: every table of the service. Times are epoch milliseconds,
 * money is integer nano-USD (see shared/money.ts), booleans are 0/1.
 */
export const SCHEMA_V1 = `
CREATE TABLE tiers (
  id TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE COLLATE NOCASE,
  name TEXT,
  tier TEXT NOT NULL DEFAULT 'free',
  password_hash TEXT,
  created_at INTEGER NOT NULL
);
CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  tier TEXT NOT NULL,
  active INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL
);
CREATE TABLE org_members (
  org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role TEXT NOT NULL DEFAULT 'member',
  created_at INTEGER NOT NULL,
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX org_members_user ON org_members(user_id);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT,
  lookup TEXT NOT NULL UNIQUE,
  hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER,
  revoked_at INTEGER
);
CREATE INDEX api_keys_user ON api_keys(user_id);
CREATE TABLE wallets (
  user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  balance_nusd INTEGER NOT NULL DEFAULT 0,
  currency TEXT NOT NULL DEFAULT 'USD',
  unlimited INTEGER NOT NULL DEFAULT 0,
  allowance_month TEXT,
  allowance_used_nusd INTEGER NOT NULL DEFAULT 0,
  last_allowance_at INTEGER,
  updated_at INTEGER NOT NULL
);
CREATE TABLE wallet_transactions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  amount_nusd INTEGER NOT NULL,
  allowance_nusd INTEGER NOT NULL DEFAULT 0,
  balance_after_nusd INTEGER NOT NULL,
  description TEXT,
  provider_id TEXT,
  model TEXT,
  project_id TEXT,
  skill_id INTEGER,
  usage_id TEXT UNIQUE,
  created_at INTEGER NOT NULL
);
CREATE INDEX wallet_tx_user ON wallet_transactions(user_id, id);
CREATE TABLE projects (
  uid TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL
);
CREATE TABLE project_roles (
  project_uid TEXT NOT NULL REFERENCES projects(uid) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role TEXT NOT NULL DEFAULT 'member',
  created_at INTEGER NOT NULL,
  PRIMARY KEY (project_uid, user_id)
);
CREATE INDEX project_roles_user ON project_roles(user_id);
CREATE TABLE usage_records (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  usage_type TEXT NOT NULL,
  status TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  provider_id TEXT NOT NULL,
  model TEXT,
  alias TEXT,
  project_id TEXT,
  prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  units REAL NOT NULL DEFAULT 0,
  raw_cost_nusd INTEGER NOT NULL DEFAULT 0,
  customer_cost_nusd INTEGER NOT NULL DEFAULT 0,
  http_status INTEGER,
  period_start TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  finalized_at INTEGER
);
CREATE INDEX usage_user_time ON usage_records(user_id, created_at);
CREATE INDEX usage_project_time ON usage_records(project_id, created_at);
CREATE INDEX usage_reserved ON usage_records(status, created_at);
CREATE TABLE quota_counters (
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  usage_type TEXT NOT NULL,
  period_start TEXT NOT NULL,
  used INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, usage_type, period_start)
);
CREATE TABLE quota_overrides (
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  usage_type TEXT NOT NULL,
  quota_limit INTEGER NOT NULL,
  PRIMARY KEY (user_id, usage_type)
);
CREATE TABLE oauth_clients (
  client_id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  redirect_uris TEXT NOT NULL,
  trusted INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);
CREATE TABLE oauth_keys (
  kid TEXT PRIMARY KEY,
  private_jwk TEXT NOT NULL,
  public_jwk TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  retired_at INTEGER
);
CREATE TABLE oauth_codes (
  code_hash TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  redirect_uri TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  scope TEXT NOT NULL,
  nonce TEXT,
  expires_at INTEGER NOT NULL,
  used_at INTEGER
);
CREATE TABLE oauth_refresh_tokens (
  token_hash TEXT PRIMARY KEY,
  family_id TEXT NOT NULL,
  client_id TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  scope TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER,
  revoked_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX oauth_refresh_family ON oauth_refresh_tokens(family_id);
CREATE TABLE sessions (
  id_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  csrf_token TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL
);
CREATE INDEX sessions_user ON sessions(user_id);
CREATE TABLE skills (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  category TEXT NOT NULL,
  price_nusd INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL DEFAULT 'published',
  current_version TEXT,
  owner_id TEXT NOT NULL REFERENCES users(id),
  install_count INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX skills_status ON skills(status, category);
CREATE TABLE skill_versions (
  skill_id INTEGER NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
  version TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'published',
  notes TEXT NOT NULL DEFAULT '',
  notes_updated_at INTEGER,
  notes_updated_by TEXT,
  manifest TEXT NOT NULL,
  published_at INTEGER NOT NULL,
  PRIMARY KEY (skill_id, version)
);
CREATE TABLE blobs (
  sha256 TEXT PRIMARY KEY,
  size INTEGER NOT NULL,
  data BLOB NOT NULL
);
CREATE TABLE skill_installs (
  skill_id INTEGER NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  version TEXT NOT NULL,
  charged_nusd INTEGER NOT NULL DEFAULT 0,
  owner_credit_nusd INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (skill_id, user_id)
);
CREATE INDEX skill_installs_user ON skill_installs(user_id);
`;
