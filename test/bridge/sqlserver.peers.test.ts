/**
 * The bridge on SQL Server (Babelfish, test/support/peers/babelfish.ts) as a process of its own: a reader's write
 * through it is AccessDenied (the read-only login lacks the permission); a bridge killed with
 * SIGKILL in the middle of a database request leaves nothing of it committed and no lock behind (the server rolls
 * the transaction of a vanished connection back); and a bridge whose roles file names readers refuses to start on a
 * SQL Server database without a read-only login, saying why.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { element, stringText, uuidText, type XmlElement } from '../../tcp-bridge/src/binary-xml/index.ts';
import { NetTcpChannel, SoapFaultError, elementText } from '../../bench/nettcp-client.ts';
import { type RunningBabelfish, startBabelfish } from '../support/peers/babelfish.ts';
import { freePort } from '../support/net.ts';
import { needPeers, PEERS } from '../support/peers.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

interface BridgeProcess {
  child: ChildProcess;
  port: number;
  /** stdout and stderr so far */
  output(): string;
  exited: Promise<number | null>;
}

/** `npm run bridge`'s entry from source (tsx), with `env`; resolves once it listens or has exited. */
async function spawnBridge(env: Record<string, string>): Promise<BridgeProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'tcp-bridge/src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env, BRIDGE_PORT: String(port), BRIDGE_SECURITY: 'none', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  await new Promise<void>((ready) => {
    const take = (d: Buffer) => {
      output += d.toString();
      if (output.includes('"bridge listening"')) ready();
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    void exited.then(() => ready());
  });
  return { child, port, output: () => output, exited };
}

function databaseCall(channel: NetTcpChannel, operation: string, requestId: string, sql: string) {
  return channel.call(operation, [
    element('', 'requestId', [], [uuidText(requestId)]),
    element('', 'sql', [], [stringText(sql)]),
    element('', 'parameters', [], []),
  ]);
}

describe.skipIf(needPeers('bridge sqlserver', PEERS.babelfish))(
  'the bridge on SQL Server (Babelfish), as a process',
  () => {
    let bbf: RunningBabelfish;
    let folder: string;

    beforeAll(async () => {
      [bbf, folder] = await Promise.all([startBabelfish(), mkdtemp(join(tmpdir(), 'bridge-sqlserver-'))]);
      await bbf.admin('CREATE TABLE items (id int PRIMARY KEY, name nvarchar(50))');
    }, 120_000);

    afterAll(async () => {
      await bbf?.stop();
      if (folder) await rm(folder, { recursive: true, force: true });
    });

    it('refuses to start with readers in the roles file and no read-only login, and says why', async () => {
      const roles = join(folder, 'readers.json');
      await writeFile(roles, JSON.stringify({ writer: ['anonymous'], reader: ['CORP\\auditor'] }));
      const withoutReader = bbf.url.replace(/&readerUser=[^&]*&readerPasswordFile=[^&]*/, '');
      const bridge = await spawnBridge({
        DATABASE_URL: withoutReader,
        BRIDGE_ROLES_FILE: roles,
        FILES_URL: `file:${folder}/f`,
      });
      expect(await bridge.exited).toBe(1);
      expect(bridge.output()).toMatch(/no read-only login/);
      expect(bridge.output()).not.toMatch(/Passw0rd/);
    }, 60_000);

    it("answers a reader's write AccessDenied: the server refuses the read-only login", async () => {
      const roles = join(folder, 'reader-only.json');
      await writeFile(roles, JSON.stringify({ reader: ['anonymous'] }));
      const bridge = await spawnBridge({
        DATABASE_URL: bbf.url,
        BRIDGE_ROLES_FILE: roles,
        FILES_URL: `file:${folder}/f`,
      });
      try {
        expect(bridge.output()).toContain('"bridge listening"');
        const channel = await NetTcpChannel.open(`net.tcp://localhost:${bridge.port}/IDBService`);
        expect(await channel.returnScalar('SELECT count(*) FROM items')).toEqual({ type: 'int', text: '0' });
        const refused = await channel
          .returnScalar("INSERT INTO items (id, name) OUTPUT INSERTED.id VALUES (7, 'reader')")
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        expect(refused).toBeInstanceOf(SoapFaultError);
        expect((refused as SoapFaultError).subcode).toMatch(/AccessDenied/);
        expect((refused as SoapFaultError).reason).toMatch(/permission/i);
        await channel.close();
      } finally {
        bridge.child.kill('SIGKILL');
        await bridge.exited;
      }
      expect(await bbf.admin('SELECT count(*) FROM items')).toEqual([[0]]);
    }, 60_000);

    it('leaves nothing of a request committed, and no lock held, when the bridge is killed in the middle of it', async () => {
      const roles = join(folder, 'writers.json');
      await writeFile(roles, JSON.stringify({ writer: ['anonymous'] }));
      const bridge = await spawnBridge({
        DATABASE_URL: bbf.url,
        BRIDGE_ROLES_FILE: roles,
        FILES_URL: `file:${folder}/f`,
      });
      try {
        expect(bridge.output()).toContain('"bridge listening"');
        const channel = await NetTcpChannel.open(`net.tcp://localhost:${bridge.port}/IDBService`);
        const created = await channel.call('CreateDatabaseRequest', [
          element('', 'database', [], [stringText('default')]),
        ]);
        const result = created.body.children.find(
          (c): c is XmlElement => c.kind === 'element' && c.localName === 'CreateDatabaseRequestResult',
        );
        const requestId = result === undefined ? '' : elementText(result);
        expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
        await databaseCall(channel, 'ExecuteNonQuery', requestId, "INSERT INTO items VALUES (1, 'half')");
        // The second statement is on its way (or running) when the bridge dies.
        const inFlight = databaseCall(channel, 'ExecuteNonQuery', requestId, "INSERT INTO items VALUES (2, 'half')");
        inFlight.catch(() => {});
        bridge.child.kill('SIGKILL');
        expect(await bridge.exited).toBeNull();
        channel.destroy();
      } finally {
        bridge.child.kill('SIGKILL');
      }
      expect(await bbf.admin('SELECT count(*) FROM items')).toEqual([[0]]);
      // The rows the request had locked are free again: the server rolled it back when the connection vanished.
      expect(await bbf.admin("SET LOCK_TIMEOUT 20000; INSERT INTO items VALUES (1, 'after'), (2, 'after')")).toEqual(
        [],
      );
      expect(await bbf.admin('SELECT id, name FROM items ORDER BY id')).toEqual([
        [1, 'after'],
        [2, 'after'],
      ]);
    }, 120_000);
  },
);
