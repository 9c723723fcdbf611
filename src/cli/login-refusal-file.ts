import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { MemoryAdminTokenStore, type AdminTokenStore } from '../core/stores/admin-token-store.js';
import { REFUSAL_KEY_SUFFIX } from '../core/commerce/login-refusal.js';
import { replaceFile } from './replace-file.js';


/**
 * The admin-token store of a CLI run without Redis. A run is one process, so a refused login kept in
 * memory would be forgotten at exit, and a cron job would try the wrong password once a run until
 * Magento locks the account (for the merchant's servers too). The refusals go to a file, kept across
 * runs; the token itself stays in memory, never on disk.
 */
export class LoginRefusalFile implements AdminTokenStore {
  readonly #tokens = new MemoryAdminTokenStore();

  constructor(readonly path: string) {}

  async get(key: string): Promise<string | undefined> {
    if (!key.endsWith(REFUSAL_KEY_SUFFIX)) return this.#tokens.get(key);
    const entry = (await this.#read())[key];
    return entry !== undefined && Date.now() < entry.expiresAt ? entry.value : undefined;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    if (!key.endsWith(REFUSAL_KEY_SUFFIX)) return this.#tokens.set(key, value, ttlMs);
    const now = Date.now();
    // Expired entries go as the file is rewritten, so it holds one line per platform and user at most.
    const kept = Object.entries(await this.#read()).filter(([k, entry]) => k !== key && now < entry.expiresAt);
    const all = Object.fromEntries([...kept, [key, { value, expiresAt: now + Math.max(1, ttlMs) }]]);
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    await replaceFile(this.path, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
  }

  /** A missing or unreadable file holds no refusal (the run then logs in, as without the file). */
  async #read(): Promise<Record<string, { value: string; expiresAt: number }>> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed !== 'object' || parsed === null) return {};
      const entries = Object.entries(parsed as Record<string, { value?: unknown; expiresAt?: unknown } | null>);
      return Object.fromEntries(entries.filter(([, e]) => typeof e?.value === 'string' && typeof e.expiresAt === 'number')) as Record<string, { value: string; expiresAt: number }>;
    } catch {
      return {};
    }
  }
}

/**
 * Where the CLI keeps what outlives a run: PAYWIDGET_STATE_DIR, else the XDG state directory
 * ($XDG_STATE_HOME/paywidget, by default ~/.local/state/paywidget). Undefined without a home.
 */
export function stateDirectory(env: Record<string, string | undefined>): string | undefined {
  if (env.PAYWIDGET_STATE_DIR) return env.PAYWIDGET_STATE_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'paywidget');
  return env.HOME ? join(env.HOME, '.local', 'state', 'paywidget') : undefined;
}
