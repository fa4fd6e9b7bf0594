/** A file stored through the service itself (NewFile), before a bridge on the same database and file store starts. */
import type { Caller } from '#idb';
import { readBridgeConfig } from '../../../tcp-bridge/src/config.ts';
import { openNodeIdbService } from '../../../src/runtime/node/idb/idb-service.ts';

/** Stores `bytes` (a patterned file) as `caller` in the bridge's stores of `env`; resolves with the new file's id. */
export async function storeFile(env: Record<string, string>, caller: Caller, bytes: number): Promise<string> {
  const service = await openNodeIdbService(readBridgeConfig(env), { log: () => {} });
  try {
    return await service.call('NewFile', caller, {
      file: {
        Content: new Uint8Array(bytes).map((_, i) => (i * 31) & 0xff),
        ContentType: 'application/octet-stream',
        CreatedUtc: '2026-01-01T00:00:00Z',
        FileId: '00000000-0000-0000-0000-000000000000',
        FileName: 'big.bin',
        Length: BigInt(bytes),
        ModifiedUtc: '2026-01-01T00:00:00Z',
        Sha256: null,
      },
    });
  } finally {
    await service.close();
  }
}
