// Runs one build program: found on PATH (absolute directories only), started with an argument
// array in its own process group (nixpacks starts `docker build` below it: an abort must stop
// the whole tree), output lines streamed to the log, killed on abort.
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** The absolute path of program in the search path, or null. Relative entries ("." or "") are skipped. */
export function findProgram(program: string, searchPath: string): string | null {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const file = path.join(dir, program);
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

export interface ProgramRun {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  /** One line of output, already stripped of terminal colour codes. */
  line(text: string): void;
}

export interface ProgramExit {
  code: number | null;
  /** The signal that ended it when nothing here asked for it. */
  signal: NodeJS.Signals | null;
  /** The last non-empty output line, for the error message. */
  lastLine: string | null;
}

// Colour and cursor sequences that programs write even without a terminal.
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]/g;
const KILL_GRACE_MS = 5000;

/** Resolves when the program ends on its own; rejects with AbortError-like `aborted` when the signal fires first. */
export function runProgram(run: ProgramRun, aborted: () => Error): Promise<ProgramExit> {
  return new Promise((resolve, reject) => {
    if (run.signal.aborted) return reject(aborted());
    const child = spawn(run.file, run.args, { cwd: run.cwd, env: run.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let lastLine: string | null = null;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {
        // already gone
      }
    };
    const onAbort = () => {
      killGroup('SIGTERM');
      killTimer = setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS);
      killTimer.unref();
      settle(() => reject(aborted()));
    };
    const settle = (done: () => void) => {
      if (settled) return;
      settled = true;
      run.signal.removeEventListener('abort', onAbort);
      done();
    };
    const reader = () => {
      let pending = '';
      return {
        data(chunk: Buffer) {
          pending += chunk.toString();
          const parts = pending.split(/\r\n|\r|\n/);
          pending = parts.pop() ?? '';
          for (const p of parts) emit(p);
        },
        end() {
          if (pending) emit(pending);
          pending = '';
        },
      };
    };
    const emit = (raw: string) => {
      const text = raw.replace(ANSI, '').trimEnd();
      if (!text.trim() || settled) return;
      lastLine = text.trim();
      run.line(text);
    };
    const out = reader();
    const err = reader();
    child.stdout.on('data', out.data);
    child.stderr.on('data', err.data);
    run.signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', e => settle(() => reject(new Error(`Cannot start ${path.basename(run.file)}: ${e.message}`))));
    child.on('close', (code, signal) => {
      out.end();
      err.end();
      if (killTimer) clearTimeout(killTimer);
      settle(() => resolve({ code, signal, lastLine }));
    });
  });
}
