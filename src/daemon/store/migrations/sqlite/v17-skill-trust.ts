/**
 * Version 17: skill versions people can trust (issue #31, CONTRACT third round "Skill
 * versions are fixed by their digest", "Signed versions", "Skill scan").
 * - skill_versions gains `digest` (`sha256:` + hex over the version's files, framed as
 *   docs/marketplace.md "Trust" says), the store's Ed25519 signature over that digest
 *   (`signature_kid`, `signature`: base64url) and `scan`, the findings the scanner reported
 *   when the version was published (a JSON array; warnings only, an error refuses the
 *   publish). Versions published before this migration have NULLs here and get all three
 *   at their first read (marketplace/trust/seal.ts): SQL cannot hash the blobs, and doing it
 *   lazily needs no downtime.
 * - skill_signing_keys: the Ed25519 keys, private key as a JWK (protect the data directory
 *   as for oauth_keys). One is current (`retired_at` NULL); a retired key is kept, since
 *   the versions it signed still verify with it.
 */
export const SCHEMA_V17_SKILL_TRUST = `
ALTER TABLE skill_versions ADD COLUMN digest TEXT;
ALTER TABLE skill_versions ADD COLUMN signature_kid TEXT;
ALTER TABLE skill_versions ADD COLUMN signature TEXT;
ALTER TABLE skill_versions ADD COLUMN scan TEXT;
CREATE TABLE skill_signing_keys (
  kid TEXT PRIMARY KEY,
  private_jwk TEXT NOT NULL,
  public_jwk TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  retired_at INTEGER
);
`;
