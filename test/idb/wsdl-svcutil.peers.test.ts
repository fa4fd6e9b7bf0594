/**
 * The served WSDL imported by Mono's svcutil and the proxy compiled with mcs (test/support/peers/mono.ts): what a WCF
 * client's tooling makes of GET /IDBService?wsdl. The document itself is tested in wsdl.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/idb/contract.ts';
import { testApp } from '../support/http/app.ts';
import { compileCSharp, svcutil } from '../support/peers/mono.ts';
import { freePort } from '../support/net.ts';
import { needPeers, PEERS } from '../support/peers.ts';

describe.skipIf(needPeers('idb wsdl svcutil', PEERS.mono))("Mono's svcutil on the served WSDL", () => {
  const MONO_TIMEOUT = 180_000;
  let server: ServerType;
  let base: string;
  let dir: string;

  beforeAll(async () => {
    const { app } = await testApp();
    const port = await freePort();
    await new Promise<void>((listening) => {
      server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => listening());
    });
    base = `http://127.0.0.1:${port}/IDBService`;
    dir = mkdtempSync(join(tmpdir(), 'idb-wsdl-mono-'));
  });
  afterAll(async () => {
    await new Promise((closed) => server?.close(closed));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The generated service contract's methods, as written: `{ name: 'System.Guid NewFile(...)' }`. */
  function contractMethods(source: string): Map<string, string> {
    const body = /public interface IIDBService \{([\s\S]*?)\n\}/.exec(source)?.[1] ?? '';
    return new Map(
      Array.from(body.matchAll(/^\s*([\w.[\]<>]+) (\w+)\(([^)]*)\);$/gm), (m) => [m[2]!, `${m[1]} ${m[2]}(${m[3]})`]),
    );
  }

  const C = 'IDBService.Contracts';
  const SQL = `System.Guid requestId, string sql, ${C}.QueryParameter[] parameters`;
  const SIGNATURES: Record<string, string> = {
    Heartbeat: 'bool Heartbeat()',
    CreateDatabaseRequest: 'System.Guid CreateDatabaseRequest(string database)',
    CloseDatabaseRequest: 'bool CloseDatabaseRequest(System.Guid requestId, bool commit)',
    ReturnDatatable: `object ReturnDatatable(${SQL})`,
    ReturnScalar: `object ReturnScalar(${SQL})`,
    ExecuteNonQuery: `int ExecuteNonQuery(${SQL})`,
    NewFile: `System.Guid NewFile(${C}.FileData file)`,
    UpdateFile: `bool UpdateFile(${C}.FileData file)`,
    GetFile: `${C}.FileData GetFile(System.Guid fileId)`,
    DeleteFile: 'bool DeleteFile(System.Guid fileId)',
    GetDocumentByDocumentId: `${C}.DocumentData GetDocumentByDocumentId(System.Guid documentId)`,
    GetDocumentByContainerId: `${C}.DocumentData[] GetDocumentByContainerId(System.Guid containerId)`,
    NewFileIndex: `System.Guid NewFileIndex(${C}.FileIndexData index)`,
  };

  // A client written against the contract of docs/contract/iidbservice.md: it compiles only if the proxy's types line
  // up.
  const USAGE = `
using System;
using IDBService.Contracts;
public static class Usage {
  public static void Calls(IIDBService s) {
    bool alive = s.Heartbeat();
    Guid request = s.CreateDatabaseRequest("main");
    bool closed = s.CloseDatabaseRequest(request, true);
    QueryParameter[] parameters = { new QueryParameter { Name = "@id", Value = 42 } };
    object table = s.ReturnDatatable(request, "select * from t where id = @id", parameters);
    object scalar = s.ReturnScalar(Guid.Empty, "select count(*) from t", null);
    int affected = s.ExecuteNonQuery(request, "delete from t", parameters);
    FileData file = new FileData { Content = new byte[0], ContentType = "application/pdf", FileName = "a.pdf", Length = 0L, CreatedUtc = DateTime.UtcNow, Sha256 = "" };
    Guid fileId = s.NewFile(file);
    bool updated = s.UpdateFile(file);
    FileData read = s.GetFile(fileId);
    bool deleted = s.DeleteFile(fileId);
    DocumentData document = s.GetDocumentByDocumentId(Guid.NewGuid());
    DocumentData[] documents = s.GetDocumentByContainerId(Guid.NewGuid());
    IndexField[] fields = document.Fields;
    Guid documentId = s.NewFileIndex(new FileIndexData { ContainerId = Guid.NewGuid(), DocumentId = Guid.Empty, FileId = fileId, Title = "t", Fields = new[] { new IndexField { Name = "k", Value = "v" } } });
  }
  public static IDBServiceClient Client() {
    return new IDBServiceClient(new System.ServiceModel.NetTcpBinding(System.ServiceModel.SecurityMode.None), new System.ServiceModel.EndpointAddress("net.tcp://localhost:8808/IDBService"));
  }
}
`;

  it(
    'anytype: a proxy with the 13 operations of the contract that compiles with a client using them',
    async () => {
      const { source, file } = await svcutil(`${base}?wsdl&datatable=anytype`, dir, { out: 'AnyTypeProxy.cs' });
      const methods = contractMethods(source);
      expect([...methods.keys()]).toEqual([...OPERATIONS]);
      for (const op of OPERATIONS) {
        expect(methods.get(op)).toBe(SIGNATURES[op]);
        expect(source).toContain(
          `Action="http://tempuri.org/IIDBService/${op}", ReplyAction="http://tempuri.org/IIDBService/${op}Response"`,
        );
      }
      expect(source).toContain(
        `DataContractAttribute(Name="FileData", Namespace="http://schemas.datacontract.org/2004/07/IDBService.Contracts")`,
      );
      const usage = join(dir, 'Usage.cs');
      writeFileSync(usage, USAGE);
      await compileCSharp([file, usage], { out: join(dir, 'AnyTypeProxy.dll') });
    },
    MONO_TIMEOUT,
  );

  /*
   * What Mono 6.8's svcutil makes of the DataTable form (recorded here, not asserted, as the spec says it
   * mis-imports it): it finishes and writes a proxy whose operations keep their names and actions in order, but the
   * signatures are shifted: Heartbeat gets `NewFileIndexResponse Heartbeat(NewFileIndex NewFileIndex)` under
   * [XmlSerializerFormat], CreateDatabaseRequest..ReturnDatatable are right, ReturnScalar returns int,
   * ExecuteNonQuery takes FileData, ... and NewFileIndex becomes `void NewFileIndex()`; the proxy does not compile
   * (NewFileIndexResponse is unknown). Hence `datatable=anytype`.
   */
  it(
    "dataset: svcutil does not fail, and the proxy keeps the 13 actions (the signatures are Mono's mis-import)",
    async () => {
      const { source } = await svcutil(`${base}?wsdl`, dir, { out: 'DataTableProxy.cs' });
      expect(source).toContain('public interface IIDBService {');
      const actions = Array.from(source.matchAll(/OperationContractAttribute\(Action="([^"]+)"/g), (m) => m[1]);
      expect(actions).toEqual(OPERATIONS.map((op) => `http://tempuri.org/IIDBService/${op}`));
    },
    MONO_TIMEOUT,
  );
});
