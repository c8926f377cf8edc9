import { Type, type Static } from 'typebox';
import { DateTime } from './common.js';

/** Request and response shapes of the skill marketplace (spec "Skills", contract "What the spec leaves open"). */

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const SkillStatus = Type.Union([Type.Literal('draft'), Type.Literal('published'), Type.Literal('archived')]);
export type SkillStatusT = Static<typeof SkillStatus>;

export const Skill = Type.Object(
  {
    id: Type.Integer(),
    slug: Type.String(),
    name: Type.String(),
    description: Type.String(),
    category: Type.String(),
    price: Type.Number({ description: 'USD; 0 = free' }),
    status: SkillStatus,
    currentVersion: NullableString,
    ownerId: Type.String(),
    ownerName: Type.String(),
    installCount: Type.Integer(),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { title: 'Skill' },
);
export type SkillT = Static<typeof Skill>;

export const SkillIdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });
export const SkillSlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 200 }) });
export const SkillVersionParams = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  version: Type.String({ minLength: 1, maxLength: 200 }),
});

export const SkillSearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'Words matched in name, slug and description' })),
    category: Type.Optional(Type.String({ maxLength: 100 })),
    owner: Type.Optional(Type.String({ maxLength: 100, description: 'Only the skills of this user id (ownerId of the Skill record)' })),
    sort: Type.Optional(
      Type.Union([Type.Literal('popular'), Type.Literal('recent'), Type.Literal('name'), Type.Literal('price')], {
        default: 'popular',
        description: 'popular = most installs, recent = last updated, name = A-Z, price = cheapest first',
      }),
    ),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000, default: 1 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  },
  { additionalProperties: false },
);
export type SkillSearchQueryT = Static<typeof SkillSearchQuery>;

export const SkillSearchResult = Type.Object(
  { items: Type.Array(Skill), total: Type.Integer(), page: Type.Integer(), limit: Type.Integer() },
  { title: 'SkillSearchResult' },
);

export const SkillCategories = Type.Object(
  { items: Type.Array(Type.String(), { description: 'marketplace.categories, in configured order' }) },
  { title: 'SkillCategories' },
);
export type SkillCategoriesT = Static<typeof SkillCategories>;

/** Version strings appear in URL paths: printable, no whitespace and no "/". */
const VERSION_PATTERN = '^[^\\s/\\u0000-\\u001f\\u007f]+$';

const publishFields = {
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Display name; default: the SKILL.md name' })),
  slug: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Unique slug; default: the SKILL.md name' })),
  category: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'One of marketplace.categories' })),
  version: Type.String({ minLength: 1, maxLength: 64, pattern: VERSION_PATTERN, description: 'SemVer recommended' }),
  price: Type.Optional(Type.Number({ minimum: 0, maximum: 10000, description: 'USD, 0 = free' })),
  description: Type.Optional(Type.String({ maxLength: 1024, description: 'Default: the SKILL.md description' })),
  notes: Type.Optional(Type.String({ maxLength: 20000, description: 'Release notes of this version' })),
  overwrite: Type.Optional(Type.Boolean({ description: 'Replace an existing version' })),
  status: Type.Optional(Type.Union([Type.Literal('published'), Type.Literal('draft')], { default: 'published' })),
};

/** multipart/form-data: the fields above as form fields, one part named `files` per file (filename = bundle path). */
export const PublishForm = Type.Object(
  {
    ...publishFields,
    files: Type.Optional(
      Type.Array(Type.String({ contentMediaType: 'application/octet-stream' }), {
        description: 'One part per file; the part’s filename is the path inside the bundle',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PublishFormT = Static<typeof PublishForm>;

export const PublishFile = Type.Object(
  {
    path: Type.String({ description: 'Relative path inside the bundle' }),
    content: Type.String({ description: 'UTF-8 text, or base64 when encoding is "base64"' }),
    encoding: Type.Optional(Type.Union([Type.Literal('utf8'), Type.Literal('base64')], { default: 'utf8' })),
  },
  { additionalProperties: false },
);

export const PublishJson = Type.Object({ ...publishFields, files: Type.Optional(Type.Array(PublishFile)) }, { additionalProperties: false });
export type PublishJsonT = Static<typeof PublishJson>;
export type PublishFieldsT = Omit<PublishJsonT, 'files'>;

export const PublishResult = Type.Object({ id: Type.Integer(), version: Type.String() }, { title: 'PublishResult' });

/** A version's digest: `sha256:` + hex over its files (docs/marketplace.md "Trust" gives the framing). */
export const Digest = Type.String({ pattern: '^sha256:[0-9a-f]{64}$', description: 'sha256 over the version\'s files\' paths and bytes in path order (docs/marketplace.md, "Trust")' });

export const VersionSignature = Type.Object(
  {
    kid: Type.String({ description: 'The signing key, as listed at /.well-known/agw-skill-keys.json' }),
    sig: Type.String({ description: 'Ed25519 signature over the digest string\'s UTF-8 bytes, base64url' }),
  },
  { title: 'VersionSignature' },
);

export const ScanFinding = Type.Object(
  {
    rule: Type.String({ description: 'The scan rule (docs/marketplace.md, "Trust")' }),
    severity: Type.Union([Type.Literal('error'), Type.Literal('warning')]),
    path: Type.String(),
    line: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: '1-based; null for the whole file or its name' }),
    message: Type.String(),
  },
  { title: 'ScanFinding' },
);
export type ScanFindingT = Static<typeof ScanFinding>;

export const VersionScan = Type.Object(
  { digest: Digest, signature: VersionSignature, findings: Type.Array(ScanFinding, { description: 'What the scan reported at publish (warnings; an error refuses a publish)' }) },
  { title: 'VersionScan' },
);
export type VersionScanT = Static<typeof VersionScan>;

export const SkillKeys = Type.Object(
  {
    keys: Type.Array(
      Type.Object({
        kty: Type.Literal('OKP'),
        crv: Type.Literal('Ed25519'),
        x: Type.String(),
        kid: Type.String(),
        alg: Type.Optional(Type.String()),
        use: Type.Optional(Type.String()),
      }),
      { description: 'The current key first; retired keys stay, as the versions they signed still verify' },
    ),
  },
  { title: 'SkillKeys' },
);
export type SkillKeysT = Static<typeof SkillKeys>;

const VersionCommon = {
  version: Type.String(),
  publishedAt: DateTime(),
  installerCount: Type.Integer(),
  isCurrent: Type.Boolean(),
  notes: Type.String(),
  notesUpdatedAt: Type.Union([DateTime(), Type.Null()]),
  notesUpdatedByName: Type.Union([Type.String(), Type.Null()]),
  digest: Digest,
  signature: VersionSignature,
  /** published; archived (withdrawn by its owner: listed for the owner and earlier installers only); draft (the owner's list) */
  status: SkillStatus,
  prerelease: Type.Boolean({ description: 'A SemVer prerelease (1.2.0-beta.1): never current over a release unless the owner makes it so' }),
};

export const PublicVersions = Type.Object(
  {
    skillId: Type.Integer(),
    slug: Type.String(),
    currentVersion: NullableString,
    versions: Type.Array(Type.Object(VersionCommon)),
  },
  { title: 'PublicVersions' },
);
export type PublicVersionsT = Static<typeof PublicVersions>;

export const OwnerVersions = Type.Object(
  {
    skillId: Type.Integer(),
    slug: Type.String(),
    currentVersion: NullableString,
    currentVersionPinned: Type.Boolean({ description: 'The owner chose the current version (PATCH {currentVersion}); false: the rule decides' }),
    versions: Type.Array(Type.Object({ ...VersionCommon, fileCount: Type.Integer(), size: Type.Integer() })),
  },
  { title: 'OwnerVersions' },
);
export type OwnerVersionsT = Static<typeof OwnerVersions>;

export const PatchSkillBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 1024 })),
    category: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    price: Type.Optional(Type.Number({ minimum: 0, maximum: 10000, description: 'USD' })),
    status: Type.Optional(SkillStatus),
    currentVersion: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 64, pattern: VERSION_PATTERN }), Type.Null()], {
        description: 'Make this published version current (a prerelease too); null: back to the rule, the highest published release',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PatchSkillBodyT = Static<typeof PatchSkillBody>;

export const PatchVersionBody = Type.Object({ notes: Type.String({ maxLength: 20000 }) }, { additionalProperties: false });

export const VersionFiles = Type.Object(
  { files: Type.Array(Type.Object({ path: Type.String(), size: Type.Integer(), sha256: Type.String() })), digest: Digest, signature: VersionSignature },
  { title: 'VersionFiles' },
);

export const InstallQuery = Type.Object(
  {
    version: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, pattern: VERSION_PATTERN, description: 'Install this version instead of the current one (an archived one only for accounts that installed it before)' }),
    ),
  },
  { additionalProperties: false },
);

export const InstallResult = Type.Object(
  {
    skillId: Type.Integer(),
    version: Type.String(),
    charged: Type.Number({ description: 'USD charged by this call (0 for free skills and repeat installs)' }),
    alreadyInstalled: Type.Boolean(),
    digest: Digest,
    signature: VersionSignature,
  },
  { title: 'InstallResult' },
);
export type InstallResultT = Static<typeof InstallResult>;

export const MySkills = Type.Object(
  {
    items: Type.Array(
      Type.Object({
        ...Skill.properties,
        revenue: Type.Number({ description: 'USD credited to the owner, after the platform fee' }),
        installs: Type.Integer(),
      }),
    ),
  },
  { title: 'MySkills' },
);
export type MySkillsT = Static<typeof MySkills>;

export const TimeseriesQuery = Type.Object(
  { days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, default: 30 })) },
  { additionalProperties: false },
);

export const Timeseries = Type.Object(
  {
    days: Type.Integer(),
    series: Type.Array(
      Type.Object({ date: Type.String({ format: 'date' }), installs: Type.Integer(), revenue: Type.Number({ description: 'USD' }) }),
    ),
  },
  { title: 'SkillTimeseries' },
);
export type TimeseriesT = Static<typeof Timeseries>;
