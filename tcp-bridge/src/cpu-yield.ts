/**
 * The operating system's "let another thread run first" call (`sched_yield` on Linux and macOS, `SwitchToThread` on
 * Windows) through koffi, for the polling after a reply (reply-polling.ts). Node has no such call of its own.
 *
 * It returns at once when nothing else waits for this thread's CPU, so a polling loop that calls it keeps the CPU
 * from halting as before; when a thread does wait there (a client's thread woken by the reply onto this CPU), that
 * thread runs first instead of waiting out the window.
 *
 * Undefined where koffi or the library cannot be loaded: the polling then goes on without it, as before.
 */
import { createRequire } from 'node:module';

interface Koffi {
  load(path: string): { func(definition: string): () => number };
}

/** Where the call lives, per platform. */
const LIBRARIES: Partial<Record<NodeJS.Platform, { paths: string[]; definition: string }>> = {
  // glibc, then musl (Alpine).
  linux: { paths: ['libc.so.6', 'libc.musl-x86_64.so.1', 'libc.musl-aarch64.so.1'], definition: 'int sched_yield()' },
  darwin: { paths: ['/usr/lib/libSystem.B.dylib'], definition: 'int sched_yield()' },
  win32: { paths: ['kernel32.dll'], definition: 'int __stdcall SwitchToThread()' },
};

export function loadCpuYield(platform: NodeJS.Platform = process.platform): (() => void) | undefined {
  const library = LIBRARIES[platform];
  if (library === undefined) return undefined;
  let koffi: Koffi;
  try {
    koffi = createRequire(import.meta.url)('koffi') as Koffi;
  } catch {
    return undefined;
  }
  for (const path of library.paths) {
    try {
      const call = koffi.load(path).func(library.definition);
      return () => void call();
    } catch {
      // the next candidate
    }
  }
  return undefined;
}
