import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveLinks } from '../../src/cli/resolve-links.js';

let dir: string;
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'paywidget-links-')));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('resolveLinks', () => {
  it('follows links to a file that is there, and to one that is not there yet, relative targets from the link', async () => {
    await mkdir(join(dir, 'a/b'), { recursive: true });
    await writeFile(join(dir, 'a/b/there.txt'), '');
    await symlink('b/there.txt', join(dir, 'a/to-there'));
    await symlink('a/to-there', join(dir, 'twice'));
    await symlink('b/later.txt', join(dir, 'a/to-later'));
    await symlink('a/to-later', join(dir, 'twice-later'));
    expect(await resolveLinks(join(dir, 'twice'))).toBe(join(dir, 'a/b/there.txt'));
    expect(await resolveLinks(join(dir, 'twice-later'))).toBe(join(dir, 'a/b/later.txt'));
    expect(await resolveLinks(join(dir, 'a/../plain.txt'))).toBe(join(dir, 'plain.txt'));
  });

  it('reads a relative target from the link\'s real directory, when the link is reached through a linked directory', async () => {
    await mkdir(join(dir, 'real/sub'), { recursive: true });
    await symlink('real/sub', join(dir, 'subl'));
    await symlink('../today.ndjson', join(dir, 'real/sub/latest.ndjson')); // not there yet
    await writeFile(join(dir, 'today.ndjson'), 'an unrelated file');
    // The kernel's reading: real/today.ndjson, not the file beside subl.
    expect(await resolveLinks(join(dir, 'subl/latest.ndjson'))).toBe(join(dir, 'real/today.ndjson'));
  });

  it('ends on a loop of links, answering a path in it', async () => {
    await symlink('loop-b', join(dir, 'loop-a'));
    await symlink('loop-a', join(dir, 'loop-b'));
    expect([join(dir, 'loop-a'), join(dir, 'loop-b')]).toContain(await resolveLinks(join(dir, 'loop-a')));
  });
});
