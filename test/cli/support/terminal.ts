import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real terminal for the CLI: a private tmux server (its own socket, its own environment) runs bash
 * in a 120x40 pane, the test types the command like a person would, reads the screen with
 * capture-pane, presses Ctrl-C with send-keys, and gets the raw bytes the program wrote through
 * pipe-pane (to see in-place rewrites, which a screen capture cannot show).
 */
export class Terminal {
  readonly #dir: string;
  readonly #socket: string;
  readonly #log: string;

  private constructor(env: Record<string, string | undefined>) {
    if (spawnSync('which', ['tmux']).status !== 0) throw new Error('the CLI tests need tmux (Debian package tmux); run npm run setup');
    this.#dir = mkdtempSync(join(tmpdir(), 'soundclone-tty-'));
    this.#socket = join(this.#dir, 'tmux.sock');
    this.#log = join(this.#dir, 'raw.log');
    const clean: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) if (v !== undefined) clean[k] = v;
    execFileSync('tmux', ['-S', this.#socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'cli', '-x', '120', '-y', '40', 'bash --noprofile --norc'], { env: { ...clean, TERM: 'xterm-256color', PS1: '$ ' } });
    this.#tmux('set-option', '-t', 'cli', 'history-limit', '5000');
    this.#tmux('pipe-pane', '-t', 'cli', '-o', `cat >> ${this.#log}`);
  }

  /** Opens a terminal whose shell has exactly `env` (plus TERM). */
  static open(env: Record<string, string | undefined>): Terminal {
    return new Terminal(env);
  }

  /** Types a command line and Enter; its exit status is printed after it as EXIT:<code>. */
  run(commandLine: string): void {
    this.#tmux('send-keys', '-t', 'cli', '-l', `${commandLine}; echo EXIT:$?`);
    this.#tmux('send-keys', '-t', 'cli', 'Enter');
  }

  ctrlC(): void {
    this.#tmux('send-keys', '-t', 'cli', 'C-c');
  }

  /** The screen and its scrollback, as a person would read it. */
  screen(): string {
    return execFileSync('tmux', ['-S', this.#socket, 'capture-pane', '-p', '-J', '-t', 'cli', '-S', '-5000'], { encoding: 'utf8' });
  }

  /** Every byte the pane received. */
  raw(): string {
    try {
      return readFileSync(this.#log, 'utf8');
    } catch {
      return '';
    }
  }

  async waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = this.screen().match(pattern);
      if (match !== null) return match;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(pattern)}; screen:\n${this.screen()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  close(): void {
    spawnSync('tmux', ['-S', this.#socket, 'kill-server']);
    rmSync(this.#dir, { recursive: true, force: true });
  }

  #tmux(...args: string[]): void {
    execFileSync('tmux', ['-S', this.#socket, ...args]);
  }
}
