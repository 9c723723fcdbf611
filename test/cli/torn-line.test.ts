import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cutTornLine } from '../../src/cli/torn-line.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'paywidget-torn-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function cut(text: string): Promise<string> {
  const file = join(dir, 'out.ndjson');
  await writeFile(file, text);
  await cutTornLine(file);
  return readFile(file, 'utf8');
}

describe('cutTornLine', () => {
  it('leaves whole lines alone and cuts a torn last one, however long', async () => {
    expect(await cut('{"a":1}\n{"b":2}\n')).toBe('{"a":1}\n{"b":2}\n');
    expect(await cut('{"a":1}\n{"b":2}\n{"c":')).toBe('{"a":1}\n{"b":2}\n');
    // Longer than the 64 KiB read backwards at a time: the newline is found in an earlier chunk.
    expect(await cut(`{"a":1}\n{"c":"${'x'.repeat(200_000)}`)).toBe('{"a":1}\n');
    expect(await cut('{"c":')).toBe('');
    expect(await cut('')).toBe('');
  });

  it('does nothing to a file that does not exist yet', async () => {
    await expect(cutTornLine(join(dir, 'missing.ndjson'))).resolves.toBeUndefined();
  });
});
