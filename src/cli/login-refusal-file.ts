import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { MemoryAdminTokenStore, type AdminTokenStore } from '../core/stores/admin-token-store.js';
import { NO_REFUSAL, REFUSAL_KEY_SUFFIX } from '../core/commerce/login-refusal.js';
import { replaceFile } from './replace-file.js';

/**
 * The admin-token store of a CLI run without Redis. A run is one process, so a refused login kept in
 * memory would be forgotten at exit, and a cron job would try the wrong password once a run until
 * Magento locks the account (for the merchant's servers too). The refusals go to a file, kept across
 * runs; the token itself stays in memory, never on disk.
 *
 * A file it cannot read or write is said through `warn` (the CLI's stderr, once a run): the core only
 * logs a store's failure, and the CLI's logger is silent, so a cron job would lose the refusals unheard.
 */
/** What a refusal not kept costs, and the fix: said whichever way the file could not be used. */
const NOT_KEPT = "so the next run will try the same credentials again, and each refused login counts towards Magento's lockout. Set PAYWIDGET_STATE_DIR to a directory this user can write.";

export class LoginRefusalFile implements AdminTokenStore {
  readonly #tokens = new MemoryAdminTokenStore();
  readonly #warn: (message: string) => void;
  #warned = false;

  /** `path` undefined: there is no state directory (no HOME), and a refusal is only said to be lost. */
  constructor(readonly path: string | undefined, warn: (message: string) => void = () => {}) {
    this.#warn = warn;
  }

  async get(key: string): Promise<string | undefined> {
    if (!key.endsWith(REFUSAL_KEY_SUFFIX)) return this.#tokens.get(key);
    const entry = (await this.#read())[key];
    return entry !== undefined && Date.now() < entry.expiresAt ? entry.value : undefined;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    if (!key.endsWith(REFUSAL_KEY_SUFFIX)) return this.#tokens.set(key, value, ttlMs);
    if (this.path === undefined) {
      if (value !== NO_REFUSAL) this.#warnOnce(`could not keep the refused admin login: there is no state directory (HOME, XDG_STATE_HOME and PAYWIDGET_STATE_DIR are all unset), ${NOT_KEPT}`);
      return;
    }
    const path = this.path;
    const now = Date.now();
    // Expired entries go as the file is rewritten, so it holds one line per platform and user at most.
    const kept = Object.entries(await this.#read()).filter(([k, entry]) => k !== key && now < entry.expiresAt);
    const all = Object.fromEntries([...kept, [key, { value, expiresAt: now + Math.max(1, ttlMs) }]]);
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      await replaceFile(path, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
    } catch (error) {
      this.#warnOnce(`could not keep the refused admin login in ${path} (${describe(error)}), ${NOT_KEPT}`);
      throw error;
    }
  }

  /** A missing or unreadable file holds no refusal (the run then logs in, as without the file; unreadable, it says so). */
  async #read(): Promise<Record<string, { value: string; expiresAt: number }>> {
    if (this.path === undefined) return {};
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      this.#warnOnce(`could not read the refused admin logins kept in ${this.path} (${describe(error)}), so this run logs in without knowing of an earlier refusal, and a wrong password counts again towards Magento's lockout. Set PAYWIDGET_STATE_DIR to a directory this user can read and write.`);
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

  #warnOnce(message: string): void {
    if (this.#warned) return;
    this.#warned = true;
    this.#warn(message);
  }
}

/** An fs error as `EACCES on open`: its code and call, without the path the message already names. */
function describe(error: unknown): string {
  const { code, syscall } = error as NodeJS.ErrnoException;
  return code !== undefined ? `${code}${syscall ? ` on ${syscall}` : ''}` : String(error);
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
