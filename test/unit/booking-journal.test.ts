import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Booking } from '../../src/daemon/money/bookings.js';
import { BookingJournal } from '../../src/daemon/money/sqlite/journal.js';
import { settledCall } from '../helpers/bookings.js';
import { MMAP_WAYS, useMmapWay } from '../helpers/mapped-files.js';

/**
 * The booking journal holds every settled call until the store has it: a line lost is a call
 * never charged, a line read twice must not be charged twice (the replay skips what the store
 * has). These tests write it mapped (native/mmap.c, built by `npm install`) and with write(2)
 * (AGW_MMAP=off), and read it as a restarted daemon does: after a clean stop, after a kill
 * (lines followed by the reserved room's NULs, the last line perhaps cut short), after growth
 * past the first MiB and after being emptied.
 */
const dir = mkdtempSync(join(tmpdir(), 'agw-journal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A settled call as the gateway books it (the same instant for every test). */
const booking = (id: string, customerNano = 3000): Booking => settledCall(id, 'usr_1', 1_790_000_000_000, customerNano);

const ids = (j: BookingJournal) => j.readAll().map((b) => b.id);
/** The journal's text up to the reserved room (what `cat` shows before the NULs). */
const text = (path: string) => readFileSync(path, 'utf8').replace(/\0+$/, '');

/** KiB of `path`'s mappings in this process written to and not yet written back, and the kernel's page size there (Linux: /proc/self/smaps). */
function dirtyKiB(path: string): { kib: number; pageKiB: number } {
  let kib = 0;
  let pageKiB = 0;
  let inside = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inside = line.endsWith(path);
    else if (inside && /^(Shared|Private)_Dirty:/.test(line)) kib += Number(line.split(/\s+/)[1]);
    else if (inside && line.startsWith('KernelPageSize:')) pageKiB = Number(line.split(/\s+/)[1]);
  }
  return { kib, pageKiB };
}

/** KiB of `path`'s mappings resident in this process (Linux: /proc/self/smaps). */
function residentKiB(path: string): number {
  let kib = 0;
  let inside = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inside = line.endsWith(path);
    else if (inside && line.startsWith('Rss:')) kib += Number(line.split(/\s+/)[1]);
  }
  return kib;
}

describe.each(MMAP_WAYS)('BookingJournal, $way', ({ env, mapped }) => {
  let n = 0;
  const file = () => join(dir, `${env ?? 'mapped'}-${++n}.bookings`);
  useMmapWay(env);

  it('reads back what it wrote; a clean stop leaves the lines only', () => {
    const path = file();
    const j = new BookingJournal(path);
    // mapped unless the native helper is not built: npm install builds it (native/README.md), so this fails on purpose without it
    expect(j.isMapped, 'the journal is mapped (native/mmap.c built by npm install)').toBe(mapped);
    j.append([booking('use_a')]);
    j.append([booking('use_b'), booking('use_c', 5000)]);
    expect(ids(j)).toEqual(['use_a', 'use_b', 'use_c']);
    expect(j.readAll()[2]).toEqual(booking('use_c', 5000));
    // while it is open a mapped file has its room reserved after the lines
    expect(statSync(path).size).toBe(mapped ? 1024 * 1024 : j.size);
    j.close();
    expect(statSync(path).size).toBe(text(path).length);
    expect(text(path).split('\n').filter(Boolean)).toHaveLength(3);
    const lines = statSync(path).size;
    const again = new BookingJournal(path);
    expect(again.size).toBe(lines);
    expect(ids(again)).toEqual(['use_a', 'use_b', 'use_c']);
    again.close();
  });

  it('a journal left by a killed daemon (its last line cut short, NULs after it) is read up to the cut, and written on after it', () => {
    const path = file();
    const j = new BookingJournal(path);
    j.append([booking('use_a'), booking('use_b')]);
    j.close();
    // what a kill during a line's copy leaves: part of a line, then the reserved room
    appendFileSync(path, `${readFileSync(path, 'utf8').split('\n')[0].slice(0, 60)}${'\0'.repeat(5000)}`);
    const after = new BookingJournal(path);
    expect(ids(after)).toEqual(['use_a', 'use_b']);
    after.append([booking('use_c')]);
    expect(ids(after)).toEqual(['use_a', 'use_b', 'use_c']);
    after.close();
    const last = new BookingJournal(path);
    expect(ids(last)).toEqual(['use_a', 'use_b', 'use_c']);
    last.close();
  });

  it('a line whose copy was cut in two places (its start, NULs, its end) is skipped; the lines around it are read', () => {
    const path = file();
    const j = new BookingJournal(path);
    j.append([booking('use_a')]);
    j.close();
    const line = readFileSync(path, 'utf8').split('\n')[0].replace('use_a', 'use_b');
    appendFileSync(path, `${line.slice(0, 50)}${'\0'.repeat(300)}${line.slice(350)}\n`);
    const after = new BookingJournal(path);
    after.append([booking('use_c')]);
    expect(ids(after)).toEqual(['use_a', 'use_c']);
    after.close();
  });

  it('a daemon killed with SIGKILL right after its appends returned: every line is in the file', () => {
    const path = file();
    // the built journal (npm test builds dist/ first), in a process that writes, then kills itself
    const journalModule = fileURLToPath(new URL('../../dist/daemon/money/sqlite/journal.js', import.meta.url));
    const script = `
      const { BookingJournal } = await import(${JSON.stringify(journalModule)});
      const j = new BookingJournal(${JSON.stringify(path)});
      for (let i = 0; i < 500; i++) j.append([${JSON.stringify(booking('use_x'))}].map((b) => ({ ...b, id: 'use_' + i })));
      process.kill(process.pid, 'SIGKILL');`;
    try {
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env }, stdio: 'pipe' });
      expect.unreachable('the writer was not killed');
    } catch (e) {
      expect((e as { signal?: string }).signal).toBe('SIGKILL');
    }
    // killed without closing: a mapped journal still has its reserved room (the child took the mapped path)
    if (mapped) expect(statSync(path).size).toBe(1024 * 1024);
    const j = new BookingJournal(path);
    expect(ids(j)).toEqual(Array.from({ length: 500 }, (_, i) => `use_${i}`));
    j.close();
  });

  it.runIf(mapped)('the pages ahead of its lines are written after the turn that wrote them: the next copy takes no page fault on a call\'s path', async (ctx) => {
    const path = file();
    const j = new BookingJournal(path);
    const turn = () => new Promise((r) => setImmediate(r));
    /** KiB of the pages the lines are in (whole pages) */
    const linesKiB = () => Math.ceil(j.size / 4096) * 4;
    j.append([booking('use_first')]);
    // in the turn that wrote it (a call's, before its answer): only the lines' pages are written
    const now = dirtyKiB(path);
    // the counts below are in 4 KiB pages: elsewhere the test says it did not run (not that it passed)
    if (now.pageKiB !== 4) {
      j.close();
      return ctx.skip(`the kernel's pages here are ${now.pageKiB} KiB`);
    }
    expect(now.kib).toBe(linesKiB());
    await turn();
    // after it: pages ahead of the lines are written too (each byte as it was), so a copy there takes no fault
    expect(dirtyKiB(path).kib).toBeGreaterThanOrEqual(linesKiB() + 12);
    // below the first 256 KiB, where the written pages are given back
    let n = 0;
    for (; j.size < 200 * 1024; n++) {
      j.append([booking(`use_${n}`)]);
      await turn();
      expect(dirtyKiB(path).kib, `after ${n + 1} calls`).toBeGreaterThanOrEqual(linesKiB() + 8);
    }
    expect(n).toBeGreaterThan(100);
    expect(ids(j)).toEqual(['use_first', ...Array.from({ length: n }, (_, i) => `use_${i}`)]);
    j.close();
    expect(statSync(path).size).toBe(text(path).length);
  });

  it('grows past its first MiB, and is emptied once applied', () => {
    const path = file();
    const j = new BookingJournal(path);
    const many = Array.from({ length: 4000 }, (_, i) => booking(`use_${i}`));
    for (let i = 0; i < many.length; i += 7) j.append(many.slice(i, i + 7));
    expect(j.size).toBeGreaterThan(1.5 * 1024 * 1024);
    expect(j.isMapped).toBe(mapped);
    // written pages leave the process's memory every 256 KiB: what stays resident is the stretch in progress
    if (mapped) {
      const kib = residentKiB(path);
      expect(kib).toBeGreaterThan(0); // the mapping was found: the stretch in progress is resident
      expect(kib).toBeLessThanOrEqual(256);
    }
    expect(ids(j)).toEqual(many.map((b) => b.id));
    j.truncate(join(dir, 'no-such-wal'));
    expect(j.size).toBe(0);
    expect(j.readAll()).toEqual([]);
    expect(text(path)).toBe('');
    j.append([booking('use_after')]);
    expect(ids(j)).toEqual(['use_after']);
    j.close();
    const last = new BookingJournal(path);
    expect(ids(last)).toEqual(['use_after']);
    last.close();
  });
});
