/**
 * The QR bench's peer: poppler (pdfinfo, pdftoppm) and zbar (zbarimg) reading the last page of a PDF in one shell
 * call; bench/degraded.ts calls it too.
 */
import { spawn, spawnSync } from 'node:child_process';
import { track } from './server.ts';
import { log, normalize, type Row } from './qr-cases.ts';

/** The peer's rendering resolution. */
export const PEER_DPI = 300;
/** A peer call that ends under this gets a second run (the median of two is the faster one, nearest rank). */
export const PEER_SECOND_RUN_UNDER_MS = 500;
const PEER_CALL_TIMEOUT_MS = 30_000;

/** Versions of the peer's tools, or undefined when one is missing. */
export function peerTools(): string | undefined {
  const found = spawnSync('bash', ['-c', 'command -v pdfinfo && command -v pdftoppm && command -v zbarimg'], {
    encoding: 'utf8',
    timeout: 5000,
  });
  if (found.status !== 0) return undefined;
  const poppler = spawnSync('pdftoppm', ['-v'], { encoding: 'utf8', timeout: 5000 });
  const zbar = spawnSync('zbarimg', ['--version'], { encoding: 'utf8', timeout: 5000 });
  const popplerVersion = /version\s+(\S+)/.exec(`${poppler.stdout}${poppler.stderr}`)?.[1] ?? '?';
  return `poppler ${popplerVersion} (pdfinfo, pdftoppm), zbar ${zbar.stdout.trim() || '?'} (zbarimg)`;
}

/**
 * One call: the last page number from pdfinfo, then that page rendered at PEER_DPI to PNG and piped into zbarimg.
 * fd 3 gets the step times (bash 5's EPOCHREALTIME), the exit codes of the pipeline and `times` (the second line is
 * user and system CPU of every child the shell waited for: pdfinfo, sed, pdftoppm, zbarimg).
 */
const PEER_SCRIPT = `
f=$1; dpi=$2
t0=$EPOCHREALTIME
n=$(pdfinfo "$f" 2>/dev/null | sed -n 's/^Pages:[[:space:]]*//p')
t1=$EPOCHREALTIME
if [ -z "$n" ]; then echo "nopages - $t0 $t1 $t1 - -" >&3; times >&3; exit 3; fi
pdftoppm -r "$dpi" -f "$n" -l "$n" -png "$f" | zbarimg -q --raw -Sdisable -Sqrcode.enable -
st=("\${PIPESTATUS[@]}")
t2=$EPOCHREALTIME
echo "ok $n $t0 $t1 $t2 \${st[0]} \${st[1]}" >&3
times >&3
`;

interface PeerCall {
  wallMs: number;
  cpuMs?: number;
  pdfinfoMs?: number;
  pages?: number;
  stdout: string;
  /** Why the call failed, if it did (zbar's "nothing found" is not a failure). */
  error?: string;
}

export async function peerCall(path: string, timeoutMs = PEER_CALL_TIMEOUT_MS): Promise<PeerCall> {
  const started = performance.now();
  const child = spawn('bash', ['-c', PEER_SCRIPT, 'qr-peer', path, String(PEER_DPI)], {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    detached: true, // its own process group: a timeout or exit kills the whole pipeline
    env: { ...process.env, LC_ALL: 'C' },
  });
  track(child);
  const chunks: Buffer[] = [];
  let stderr = '';
  let fd3 = '';
  child.stdout!.on('data', (d: Buffer) => chunks.push(d));
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-2000)));
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => (fd3 += d.toString('utf8')));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  }, timeoutMs);
  let wallMs = NaN;
  child.once('exit', () => (wallMs = performance.now() - started));
  const code = await new Promise<number | null>((r) => {
    child.once('close', (c) => r(c));
    child.once('error', () => r(null));
  });
  clearTimeout(timer);
  if (!Number.isFinite(wallMs)) wallMs = performance.now() - started;
  const stdout = normalize(Buffer.concat(chunks).toString('utf8'));
  if (timedOut) return { wallMs, stdout, error: `killed after ${(timeoutMs / 1000).toFixed(1)} s` };
  const [status, pages, t0, t1, t2, renderRc, zbarRc] = (fd3.split('\n')[0] ?? '').trim().split(/\s+/);
  const secs = (s: string | undefined) => Number((s ?? '').replace(',', '.'));
  const cpuLine = fd3.split('\n')[2] ?? '';
  const cpuParts = [...cpuLine.matchAll(/(\d+)m([\d.,]+)s/g)].map((m) => Number(m[1]) * 60_000 + secs(m[2]) * 1000);
  const call: PeerCall = {
    wallMs,
    stdout,
    cpuMs: cpuParts.length === 2 ? cpuParts[0]! + cpuParts[1]! : undefined,
    pdfinfoMs: Number.isFinite(secs(t1) - secs(t0)) ? (secs(t1) - secs(t0)) * 1000 : undefined,
    pages: Number(pages) || undefined,
  };
  void t2;
  if (status === 'nopages') call.error = 'pdfinfo found no page count';
  else if (status !== 'ok') call.error = `failed (exit ${code}): ${stderr.trim().split('\n').pop() ?? ''}`;
  else if (renderRc !== '0') call.error = `pdftoppm exit ${renderRc}`;
  // zbarimg: 0 = symbols found, 4 = none found; anything else is an error
  else if (zbarRc !== '0' && zbarRc !== '4') call.error = `zbarimg exit ${zbarRc}`;
  return call;
}

export async function runPeer(rows: Row[], deadline: number): Promise<void> {
  // binaries, fonts and libraries into the page cache before anything is timed
  const firstRow = rows[0];
  if (firstRow && performance.now() < deadline) await peerCall(firstRow.c.path, 5000);
  for (const row of rows) {
    const c = row.c;
    if (performance.now() > deadline) {
      row.note = 'peer skipped (bench time budget)';
      continue;
    }
    log(`QR peer: ${c.file}`);
    // each call is bounded by the per-call limit and by what is left of the bench's time
    const limit = () => Math.max(1000, Math.min(PEER_CALL_TIMEOUT_MS, deadline - performance.now()));
    const calls = [await peerCall(c.path, limit())];
    if (calls[0]!.wallMs < PEER_SECOND_RUN_UNDER_MS && !calls[0]!.error) calls.push(await peerCall(c.path, limit()));
    const first = calls[0]!;
    const readBill = c.expectedStatus === 200 && c.payloads.some((p) => first.stdout.includes(p));
    const outcome = first.error
      ? first.error
      : readBill
        ? 'read'
        : first.stdout.trim() === ''
          ? 'no code'
          : /(^|\n)SPC\n/.test(first.stdout)
            ? c.expectedStatus === 200
              ? 'SPC text, not the expected one'
              : 'SPC text (not validated)'
            : 'other code(s)';
    const cpus = calls.map((x) => x.cpuMs).filter((x): x is number => x !== undefined);
    const pdfinfo = calls.map((x) => x.pdfinfoMs).filter((x): x is number => x !== undefined);
    row.peer = {
      sample: { ms: calls.map((x) => x.wallMs) },
      cpuMsPerRun: cpus.length > 0 ? cpus.reduce((a, b) => a + b, 0) / cpus.length : undefined,
      pdfinfoMs: pdfinfo.length > 0 ? Math.min(...pdfinfo) : undefined,
      readBill,
      outcome,
      pages: first.pages,
    };
  }
}
