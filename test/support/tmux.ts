import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A real terminal for tests: an interactive bash (or zsh) in a tmux pane (its own
 * tmux server), as a user sees s3x. `screen()` is what the pane shows now;
 * `raw()` every byte written to it (tmux pipe-pane), escape codes included.
 */
export interface Terminal {
  /** Types a command line and waits until it has finished (the shell signals a tmux channel). */
  run(commandLine: string, options?: { whileRunning?: (t: Terminal) => Promise<void>; timeoutMs?: number }): Promise<void>;
  /** Sends keys as tmux names them (e.g. "C-c"). */
  keys(...keys: string[]): Promise<void>;
  /** The pane's lines (wrapped lines joined), scrollback included, trailing empty lines dropped. */
  screen(): Promise<string[]>;
  /** Waits until the screen matches `test` (checked whenever tmux is asked again, every 50 ms). */
  waitForScreen(test: (lines: string[]) => boolean, timeoutMs?: number): Promise<string[]>;
  /** The bytes written to the pane so far. */
  raw(): Promise<string>;
  /** Where the cursor is: column and row (0-based). */
  cursor(): Promise<{ x: number; y: number }>;
  close(): Promise<void>;
}

export const PROMPT = "PROMPT$ ";

export interface TerminalOptions {
  /** The interactive shell in the pane (default bash); zsh reads no global rc file, only the lines given here. */
  shell?: "bash" | "zsh";
  /** Lines the shell runs at start, after the environment and prompt are set (e.g. `source <(s3x completion bash)`). */
  init?: string[];
}

export async function openTerminal(env: NodeJS.ProcessEnv, size = { columns: 80, rows: 40 }, options: TerminalOptions = {}): Promise<Terminal> {
  const dir = await mkdtemp(join(tmpdir(), "s3x-tmux-"));
  const socket = join(dir, "socket");
  const shell = options.shell ?? "bash";
  const rcFile = join(dir, shell === "zsh" ? ".zshrc" : "bashrc");
  const rawFile = join(dir, "raw");
  const exports = Object.entries(env)
    .filter(([name, value]) => value !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    .map(([name, value]) => `export ${name}=${shellQuote(value!)}`);
  await writeFile(rcFile, [...exports, `PS1=${shellQuote(PROMPT)}`, "PROMPT_COMMAND=", "unset HISTFILE", ...(options.init ?? []), ""].join("\n"));
  const tmux = (...args: string[]) => run("tmux", ["-S", socket, ...args], { env: { PATH: process.env.PATH, TERM: "xterm-256color" } });
  const shellCommand = shell === "zsh" ? `ZDOTDIR=${shellQuote(dir)} zsh --no-globalrcs -i` : `bash --rcfile ${shellQuote(rcFile)} --noprofile -i`;
  await tmux("new-session", "-d", "-x", String(size.columns), "-y", String(size.rows), "-s", "t", shellCommand);
  await tmux("pipe-pane", "-o", "-t", "t", `cat >> ${shellQuote(rawFile)}`);
  let runs = 0;

  const terminal: Terminal = {
    async run(commandLine, options = {}) {
      const channel = `done-${++runs}`;
      const finished = tmux("wait-for", channel);
      await tmux("send-keys", "-t", "t", "-l", `${commandLine}; tmux -S ${shellQuote(socket)} wait-for -S ${channel}`);
      await tmux("send-keys", "-t", "t", "Enter");
      if (options.whileRunning) await options.whileRunning(terminal);
      await withTimeout(finished, options.timeoutMs ?? 120_000, `"${commandLine}" did not finish`);
      // The shell prints its prompt after the command's last byte: wait for it too.
      await terminal.waitForScreen((lines) => lines.at(-1) === PROMPT.trimEnd() || lines.at(-1) === PROMPT);
    },
    async keys(...keys) {
      await tmux("send-keys", "-t", "t", ...keys);
    },
    async screen() {
      const { stdout } = await tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "t");
      const lines = stdout.split("\n").map((l) => l.replace(/\s+$/, ""));
      while (lines.length > 0 && lines.at(-1) === "") lines.pop();
      return lines.map((l, i) => (i === lines.length - 1 && l === PROMPT.trimEnd() ? PROMPT.trimEnd() : l));
    },
    async waitForScreen(test, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const lines = await terminal.screen();
        if (test(lines)) return lines;
        if (Date.now() > deadline) throw new Error(`timed out waiting for the terminal; it shows:\n${lines.join("\n")}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async raw() {
      return readFile(rawFile, "utf8").catch(() => "");
    },
    async cursor() {
      const { stdout } = await tmux("display-message", "-p", "-t", "t", "#{cursor_x} #{cursor_y}");
      const [x, y] = stdout.trim().split(" ").map(Number);
      return { x, y };
    },
    async close() {
      await tmux("kill-server").catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
  return terminal;
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
