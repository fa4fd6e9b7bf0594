/**
 * Live capture of one loopback TCP port with tshark: the tshark suite dissects what it captured, and
 * test/fixtures/nettcp/record.ts records the fixtures with it. Needs tshark (dumpcap) with capture rights (root).
 */
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';

/**
 * `tshark -i lo -f "tcp port <port>"` until stop(); undefined when tshark cannot capture here. "Capturing on" comes
 * before the filter sees packets, so the capture counts as started once a UDP datagram sent to a probe socket has
 * come through it (tshark -P prints each packet as it is written), and as complete once a second one, of another
 * length, has: loopback delivers in order, so every segment of the session is in the file by then. The probes are
 * filtered out when reading.
 */
export async function startLiveCapture(
  port: number,
  file: string,
  label: string,
): Promise<{ stop(): Promise<void> } | undefined> {
  const probe = createSocket('udp4');
  await new Promise<void>((resolve) => probe.bind(0, '127.0.0.1', resolve));
  const probePort = probe.address().port;
  const filter = `tcp port ${port} or (udp dst port ${probePort} and host 127.0.0.1)`;
  const child = spawn('tshark', ['-i', 'lo', '-f', filter, '-F', 'pcap', '-w', file, '-P', '-l'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('error', () => resolve());
    child.once('exit', () => resolve());
  }).then(() => {
    exited = true;
  });
  /** Sends a datagram of `size` bytes until tshark shows one; false on time-out or when tshark is gone. */
  const seen = async (size: number, timeoutMs: number): Promise<boolean> => {
    const marker = new RegExp(`UDP \\d+ \\d+ → ${probePort} Len=${size}\\b`);
    const deadline = Date.now() + timeoutMs;
    while (!exited && Date.now() < deadline && !marker.test(stdout)) {
      probe.send(new Uint8Array(size), probePort, '127.0.0.1');
      await new Promise((r) => setTimeout(r, 100));
    }
    return !exited && marker.test(stdout);
  };
  if (!(await seen(5, 15_000))) {
    child.kill('SIGKILL');
    await exit;
    probe.close();
    console.warn(
      `[${label}] live capture on lo not possible (${stderr.trim().split('\n').pop() || 'no packet seen'}): recording the bytes through a proxy instead.`,
    );
    return undefined;
  }
  return {
    async stop() {
      const complete = await seen(3, 10_000);
      probe.close();
      child.kill('SIGINT'); // dumpcap flushes and exits
      await exit;
      if (!complete) throw new Error(`the capture did not see the closing probe: ${stderr}`);
    },
  };
}
