import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import { Header } from 'tar';
import { readTarGz, verifyFiles } from '../../src/cli/commands/skill/extract.js';

/** A downloaded bundle is read in memory and checked before anything reaches the disk. */
type Entry = { path: string; content?: string; type?: 'File' | 'SymbolicLink' | 'Link' | 'Directory'; linkpath?: string; mode?: number };

function tgz(entries: Entry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.content ?? '');
    const block = Buffer.alloc(512);
    new Header({ path: e.path, type: e.type ?? 'File', size: e.type && e.type !== 'File' ? 0 : body.length, mode: e.mode ?? 0o644, mtime: new Date(0), linkpath: e.linkpath }).encode(block, 0);
    blocks.push(block);
    if (!e.type || e.type === 'File') blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('readTarGz', () => {
  test('reads regular files with their paths and bytes; directory entries are implied', async () => {
    const files = await readTarGz(tgz([{ path: 'SKILL.md', content: 'hi' }, { path: 'tools/', type: 'Directory' }, { path: 'tools/a.json', content: '{}', mode: 0o755 }]));
    expect(files.map((f) => [f.path, f.content.toString(), f.executable])).toEqual([['SKILL.md', 'hi', false], ['tools/a.json', '{}', true]]);
  });

  test.each([
    ['a ".." path', [{ path: '../evil.sh', content: 'x' }], /"\.\.\/evil\.sh": path contains a "\.\." segment/],
    ['an absolute path', [{ path: '/etc/cron.d/x', content: 'x' }], /must be relative/],
    ['a symlink', [{ path: 'link', type: 'SymbolicLink', linkpath: '/etc/passwd' }], /link: SymbolicLink entries are not allowed/],
    ['a hard link', [{ path: 'hard', type: 'Link', linkpath: 'SKILL.md' }], /hard: Link entries are not allowed/],
    ['a duplicate path', [{ path: 'a.md', content: '1' }, { path: 'a.md', content: '2' }], /a\.md: path appears more than once/],
    ['names differing only in case', [{ path: 'A.md', content: '1' }, { path: 'a.md', content: '2' }], /only in letter case/],
  ] as [string, Entry[], RegExp][])('refuses %s (UNSAFE_BUNDLE)', async (_name, entries, message) => {
    const err = await readTarGz(tgz(entries)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'UNSAFE_BUNDLE', exitCode: 1 });
    expect((err as Error).message).toMatch(message);
  });

  test('a truncated or non-gzip download is BAD_BUNDLE', async () => {
    const good = tgz([{ path: 'SKILL.md', content: 'hi'.repeat(1000) }]);
    await expect(readTarGz(good.subarray(0, good.length / 2))).rejects.toMatchObject({ code: 'BAD_BUNDLE' });
    await expect(readTarGz(Buffer.from('<html>not a tar</html>'))).rejects.toMatchObject({ code: 'BAD_BUNDLE' });
  });
});

describe('verifyFiles', () => {
  const files = [
    { path: 'SKILL.md', content: Buffer.from('hi'), executable: false },
    { path: 'x.txt', content: Buffer.from('x'), executable: false },
  ];
  test('passes when every listed file is there with its sha256 and size, and nothing else', () => {
    expect(() => verifyFiles(files, [{ path: 'SKILL.md', size: 2, sha256: sha('hi') }, { path: 'x.txt', size: 1, sha256: sha('x') }])).not.toThrow();
  });
  test('names every changed, extra and missing file (CHECKSUM_MISMATCH)', () => {
    let err: unknown;
    try {
      verifyFiles(files, [{ path: 'SKILL.md', size: 2, sha256: sha('ho') }, { path: 'gone.md', size: 1, sha256: sha('g') }]);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'CHECKSUM_MISMATCH' });
    expect((err as Error).message).toContain('(3)');
    for (const part of ['SKILL.md: sha256 mismatch', "x.txt: not in the version's file list", 'gone.md: missing from the bundle']) {
      expect((err as Error).message).toContain(part);
    }
  });
});
