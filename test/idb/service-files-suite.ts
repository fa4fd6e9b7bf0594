import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EMPTY_GUID } from '../../src/idb/contract.ts';
import { MiB, writer, reader, sha256, bytes, fault, type ServiceSuiteContext } from './service-fixture.ts';

/** The file and document handlers: files of 0 bytes to 50 MiB stored, read, replaced and deleted; documents filed with their index fields and listed. Part of `serviceSuite` (service-suite.ts), inside its describe. */
export function serviceFilesSuite(ctx: ServiceSuiteContext): void {
  const { call, count } = ctx;

  describe('files and documents', () => {
    const file = (content: Uint8Array, name = 'bill.pdf') => ({
      Content: content,
      ContentType: 'application/pdf',
      CreatedUtc: '0001-01-01T00:00:00',
      FileId: EMPTY_GUID,
      FileName: name,
      Length: 0n,
      ModifiedUtc: '0001-01-01T00:00:00',
      Sha256: null,
    });

    it('stores, reads, replaces and deletes files of 0 bytes and 1 MiB', async () => {
      const empty = await call('NewFile', writer, { file: file(new Uint8Array(0), 'empty.txt') });
      const got = await call('GetFile', reader, { fileId: empty });
      expect(got).toEqual({
        Content: new Uint8Array(0),
        ContentType: 'application/pdf',
        CreatedUtc: '2026-01-02T03:04:05.678Z',
        FileId: empty,
        FileName: 'empty.txt',
        Length: 0n,
        ModifiedUtc: '2026-01-02T03:04:05.678Z',
        Sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      });

      const content = bytes(MiB);
      const id = await call('NewFile', writer, { file: file(content) });
      const keysBefore = await ctx.backend.keys();
      const replacement = bytes(1000);
      expect(
        await call('UpdateFile', writer, {
          file: { ...file(replacement, 'new.bin'), ContentType: null, FileId: id },
        }),
      ).toBe(true);
      const updated = await call('GetFile', reader, { fileId: id });
      expect(updated).toMatchObject({
        Content: replacement,
        FileName: 'new.bin',
        ContentType: null,
        Length: 1000n,
        Sha256: sha256(replacement),
      });
      // The old content is gone from the store, the new one is there: one key replaced by another.
      const keysAfter = await ctx.backend.keys();
      expect(keysAfter.length).toBe(keysBefore.length);
      expect(keysAfter.filter((k) => !keysBefore.includes(k))).toHaveLength(1);

      expect(await call('UpdateFile', writer, { file: { ...file(content), FileId: randomUUID() } })).toBe(false);
      expect((await ctx.backend.keys()).length).toBe(keysAfter.length);
      expect(await call('DeleteFile', writer, { fileId: id })).toBe(true);
      expect(await call('GetFile', reader, { fileId: id })).toBeNull();
      expect(await call('DeleteFile', writer, { fileId: id })).toBe(false);
      expect((await ctx.backend.keys()).length).toBe(keysAfter.length - 1);
      await fault(call('NewFile', writer, { file: { ...file(content), Content: null } }), 'InvalidArgument');
      await fault(call('GetFile', reader, { fileId: '{bad}' }), 'InvalidArgument');
    });

    it('stores and reads a 50 MiB file', async () => {
      const content = bytes(50 * MiB);
      const id = await call('NewFile', writer, { file: file(content) });
      const got = await call('GetFile', reader, { fileId: id });
      expect(got!.Length).toBe(BigInt(50 * MiB));
      expect(Buffer.from(got!.Content!).equals(Buffer.from(content))).toBe(true);
      await call('DeleteFile', writer, { fileId: id });
    }, 60_000);

    it('files documents with their index fields, replaces them idempotently, and lists a container', async () => {
      const fileId = await call('NewFile', writer, { file: file(new TextEncoder().encode('%PDF-1.7')) });
      const containerId = randomUUID();
      const fields = [
        { Name: 'Iban', Value: 'CH4431999123000889012' },
        { Name: 'Amount', Value: '1949.75' },
        { Name: 'Note', Value: null },
      ];
      const first = await call('NewFileIndex', writer, {
        index: {
          ContainerId: containerId,
          DocumentId: EMPTY_GUID,
          Fields: fields,
          FileId: fileId,
          Title: 'Invoice 1',
        },
      });
      expect(first).toMatch(/^[0-9a-f-]{36}$/);
      expect(await call('GetDocumentByDocumentId', reader, { documentId: first })).toEqual({
        ContainerId: containerId,
        ContentType: 'application/pdf',
        CreatedUtc: '2026-01-02T03:04:05.678Z',
        DocumentId: first,
        Fields: fields,
        FileId: fileId,
        FileName: 'bill.pdf',
        Length: 8n,
        Title: 'Invoice 1',
      });

      // A chosen id that does not exist yet is created under that id; the same call again replaces, not duplicates.
      const chosen = randomUUID();
      const index = {
        ContainerId: containerId,
        DocumentId: chosen,
        Fields: [{ Name: 'Ref', Value: '21 00000 00003 13947 14300 09017' }],
        FileId: fileId,
        Title: 'Invoice 2',
      };
      expect(await call('NewFileIndex', writer, { index })).toBe(chosen);
      expect(
        await call('NewFileIndex', writer, {
          index: { ...index, Fields: [{ Name: 'Ref', Value: 'changed' }], Title: null },
        }),
      ).toBe(chosen);
      const listed = await call('GetDocumentByContainerId', reader, { containerId });
      expect(listed.map((d) => [d.DocumentId, d.Title, d.Fields])).toEqual(
        expect.arrayContaining([
          [first, 'Invoice 1', fields],
          [chosen, null, [{ Name: 'Ref', Value: 'changed' }]],
        ]),
      );
      expect(listed).toHaveLength(2);
      expect(await call('GetDocumentByContainerId', reader, { containerId: randomUUID() })).toEqual([]);
      expect(await call('GetDocumentByDocumentId', reader, { documentId: randomUUID() })).toBeNull();
      await fault(call('NewFileIndex', writer, { index: { ...index, FileId: randomUUID() } }), 'FileNotFound');
      await fault(call('NewFileIndex', writer, { index: null }), 'InvalidArgument');

      // The service's tables are readable like any table; deleting the file removes its documents and fields.
      expect(Number(await count(`idb_documents WHERE file_id = '${fileId}'`))).toBe(2);
      expect(await call('DeleteFile', writer, { fileId })).toBe(true);
      expect(await call('GetDocumentByContainerId', reader, { containerId })).toEqual([]);
      expect(Number(await count(`idb_index_fields WHERE document_id = '${first}'`))).toBe(0);
    });
  });
}
