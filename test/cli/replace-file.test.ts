import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replaceFile } from '../../src/cli/replace-file.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'paywidget-replace-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('replaceFile', () => {
  it('replaces the file whole, leaving no file of its own', async () => {
    const path = join(dir, 'state.json');
    await replaceFile(path, 'one');
    await replaceFile(path, 'two', { sync: true });
    expect(await readFile(path, 'utf8')).toBe('two');
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('removes its file when the rename fails (the path is a directory)', async () => {
    const path = join(dir, 'a-directory');
    await mkdir(join(path, 'inside'), { recursive: true });
    await expect(replaceFile(path, 'text')).rejects.toMatchObject({ code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/) });
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
