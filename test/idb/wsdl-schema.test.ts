/**
 * The XSD inside the published description of IIDBService (docs/contract/iidbservice.md, "Published description"):
 * the data contracts as DataContractSerializer exports them, ReturnDatatable's result in both forms, and the inline
 * XSD compiled by libxml2 (xmllint) to validate requests and replies as a WCF client writes them. The WSDL around it
 * (operations, policy, port, serving) is in wsdl.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NS, xmllint, path, xpath, text, count, qname, wsdlFor, DEFS, SCHEMA } from './wsdl-xpath.ts';

describe('writeWsdl', () => {
  beforeAll(() => {
    xmllint(['--version'], '');
  });

  describe('data contracts', () => {
    const wsdl = wsdlFor();
    const DC = SCHEMA(NS.dc);
    const ser = (local: string) => `{${NS.ser}}${local}`;
    const xsd = (local: string) => `{${NS.xs}}${local}`;
    const dc = (local: string) => `{${NS.dc}}${local}`;
    // [name, type, nillable]: DataContractSerializer makes reference types nillable, value types not.
    const CLASSES: Record<string, [string, string, boolean][]> = {
      QueryParameter: [
        ['Name', xsd('string'), true],
        ['Value', xsd('anyType'), true],
      ],
      IndexField: [
        ['Name', xsd('string'), true],
        ['Value', xsd('string'), true],
      ],
      FileData: [
        ['Content', xsd('base64Binary'), true],
        ['ContentType', xsd('string'), true],
        ['CreatedUtc', xsd('dateTime'), false],
        ['FileId', ser('guid'), false],
        ['FileName', xsd('string'), true],
        ['Length', xsd('long'), false],
        ['ModifiedUtc', xsd('dateTime'), false],
        ['Sha256', xsd('string'), true],
      ],
      DocumentData: [
        ['ContainerId', ser('guid'), false],
        ['ContentType', xsd('string'), true],
        ['CreatedUtc', xsd('dateTime'), false],
        ['DocumentId', ser('guid'), false],
        ['Fields', dc('ArrayOfIndexField'), true],
        ['FileId', ser('guid'), false],
        ['FileName', xsd('string'), true],
        ['Length', xsd('long'), false],
        ['Title', xsd('string'), true],
      ],
      FileIndexData: [
        ['ContainerId', ser('guid'), false],
        ['DocumentId', ser('guid'), false],
        ['Fields', dc('ArrayOfIndexField'), true],
        ['FileId', ser('guid'), false],
        ['Title', xsd('string'), true],
      ],
    };

    it.each(Object.entries(CLASSES))(
      '%s: members in alphabetical order, optional, nillable as DCS writes them',
      (name, members) => {
        const element = (i: number) => `${DC}/xs:complexType[@name='${name}']/xs:sequence/xs:element[${i}]`;
        expect(count(wsdl, `${DC}/xs:complexType[@name='${name}']/xs:sequence/xs:element`)).toBe(members.length);
        for (const [i, [member, type, nillable]] of members.entries()) {
          expect(text(wsdl, `${element(i + 1)}/@name`)).toBe(member);
          expect(qname(wsdl, element(i + 1))).toBe(type);
          expect(text(wsdl, `${element(i + 1)}/@minOccurs`)).toBe('0');
          expect(text(wsdl, `${element(i + 1)}/@nillable`)).toBe(nillable ? 'true' : '');
        }
        expect(qname(wsdl, `${DC}/xs:element[@name='${name}']`)).toBe(dc(name));
        expect(text(wsdl, `${DC}/xs:element[@name='${name}']/@nillable`)).toBe('true');
      },
    );

    it.each(['QueryParameter', 'IndexField', 'DocumentData'])(
      'ArrayOf%s: an unbounded sequence of nillable items',
      (item) => {
        const element = `${DC}/xs:complexType[@name='ArrayOf${item}']/xs:sequence/xs:element`;
        expect(count(wsdl, element)).toBe(1);
        expect(text(wsdl, `${element}/@name`)).toBe(item);
        expect(qname(wsdl, element)).toBe(dc(item));
        expect(text(wsdl, `${element}/@minOccurs`)).toBe('0');
        expect(text(wsdl, `${element}/@maxOccurs`)).toBe('unbounded');
        expect(text(wsdl, `${element}/@nillable`)).toBe('true');
        expect(qname(wsdl, `${DC}/xs:element[@name='ArrayOf${item}']`)).toBe(dc(`ArrayOf${item}`));
      },
    );

    it('parameters and results reference them, Guid as the serialization namespace guid', () => {
      const op = (name: string, member: string) =>
        `${SCHEMA('http://tempuri.org/')}/xs:element[@name='${name}']/xs:complexType/xs:sequence/xs:element[@name='${member}']`;
      expect(qname(wsdl, op('CloseDatabaseRequest', 'requestId'))).toBe(ser('guid'));
      expect(qname(wsdl, op('CloseDatabaseRequest', 'commit'))).toBe(xsd('boolean'));
      expect(qname(wsdl, op('ReturnScalar', 'parameters'))).toBe(dc('ArrayOfQueryParameter'));
      expect(text(wsdl, `${op('ReturnScalar', 'sql')}/@nillable`)).toBe('true');
      expect(qname(wsdl, op('ReturnScalarResponse', 'ReturnScalarResult'))).toBe(xsd('anyType'));
      expect(qname(wsdl, op('ExecuteNonQueryResponse', 'ExecuteNonQueryResult'))).toBe(xsd('int'));
      expect(qname(wsdl, op('NewFile', 'file'))).toBe(dc('FileData'));
      expect(qname(wsdl, op('GetDocumentByContainerIdResponse', 'GetDocumentByContainerIdResult'))).toBe(
        dc('ArrayOfDocumentData'),
      );
      expect(qname(wsdl, op('NewFileIndex', 'index'))).toBe(dc('FileIndexData'));
      expect(qname(wsdl, op('NewFileIndexResponse', 'NewFileIndexResult'))).toBe(ser('guid'));
    });

    it('the serialization namespace schema is there, with the guid pattern', () => {
      const SER = SCHEMA(NS.ser);
      expect(text(wsdl, `${SER}/xs:simpleType[@name='guid']/xs:restriction/xs:pattern/@value`)).toBe(
        '[\\da-fA-F]{8}-[\\da-fA-F]{4}-[\\da-fA-F]{4}-[\\da-fA-F]{4}-[\\da-fA-F]{12}',
      );
      expect(qname(wsdl, `${SER}/xs:simpleType[@name='guid']/xs:restriction`, 'base')).toBe(xsd('string'));
      expect(qname(wsdl, `${SER}/xs:element[@name='guid']`)).toBe(ser('guid'));
      for (const primitive of [
        'anyType',
        'base64Binary',
        'boolean',
        'dateTime',
        'decimal',
        'double',
        'int',
        'long',
        'string',
      ]) {
        expect(qname(wsdl, `${SER}/xs:element[@name='${primitive}']`)).toBe(xsd(primitive));
      }
      expect(count(wsdl, `${SER}/xs:attribute[@name='Id' or @name='Ref' or @name='FactoryType']`)).toBe(3);
    });
  });

  describe('ReturnDatatableResult', () => {
    const RESULT = `${SCHEMA('http://tempuri.org/')}/xs:element[@name='ReturnDatatableResponse']/xs:complexType/xs:sequence/xs:element[@name='ReturnDatatableResult']`;

    it('dataset: typed {System.Data}DataTable, the annotated type of schema and diffgram (dotnet-svcutil maps it)', () => {
      const wsdl = wsdlFor();
      expect(qname(wsdl, RESULT)).toBe(`{${NS.data}}DataTable`);
      expect(text(wsdl, `${RESULT}/@nillable`)).toBe('true');
      expect(count(wsdl, `${SCHEMA('http://tempuri.org/')}/xs:import[@namespace='${NS.data}']`)).toBe(1);
      const TYPE = `${SCHEMA(NS.data)}/xs:complexType[@name='DataTable']`;
      const actualType = `${TYPE}/xs:annotation/xs:appinfo/ser:ActualType`;
      expect(text(wsdl, `${actualType}/@Name`)).toBe('DataTable');
      expect(text(wsdl, `${actualType}/@Namespace`)).toBe(NS.data);
      const any = (i: number, attribute: string) => text(wsdl, `${TYPE}/xs:sequence/xs:any[${i}]/@${attribute}`);
      expect(count(wsdl, `${TYPE}/xs:sequence/*`)).toBe(2);
      expect([any(1, 'namespace'), any(1, 'minOccurs'), any(1, 'maxOccurs'), any(1, 'processContents')]).toEqual([
        NS.xs,
        '0',
        'unbounded',
        'lax',
      ]);
      expect([any(2, 'namespace'), any(2, 'minOccurs'), any(2, 'maxOccurs'), any(2, 'processContents')]).toEqual([
        NS.diffgr,
        '1',
        '',
        'lax',
      ]);
      expect(qname(wsdl, `${SCHEMA(NS.data)}/xs:element[@name='DataTable']`)).toBe(`{${NS.data}}DataTable`);
    });

    it('anytype: typed xs:anyType, no DataTable anywhere', () => {
      const wsdl = wsdlFor({}, 'anytype');
      expect(qname(wsdl, RESULT)).toBe(`{${NS.xs}}anyType`);
      expect(text(wsdl, `${RESULT}/@nillable`)).toBe('true');
      expect(count(wsdl, '//ser:ActualType')).toBe(0);
      expect(count(wsdl, SCHEMA(NS.data))).toBe(0);
      // Line by line, the prefixes of foreign types aside (the dataset form spends one on DataTable).
      const lines = (xml: string) => xml.replace(/\bq\d+\b/g, 'q').split('\n');
      const dataset = new Set(lines(wsdlFor({}, 'dataset')));
      expect(lines(wsdl).filter((line) => !dataset.has(line))).toEqual([
        expect.stringMatching(/name="ReturnDatatableResult" nillable="true" type="xs:anyType"/),
      ]);
      expect(count(wsdl, `//xs:import[@namespace='${NS.data}']`)).toBe(0);
    });
  });

  describe('the inline XSD, compiled by libxml2, validates messages', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'idb-wsdl-xsd-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    /** Writes each inline schema to a file, its imports pointed at the others; returns the operation schema's file. */
    function schemaFiles(wsdl: string, name: string): string {
      const n = count(wsdl, `${DEFS}/wsdl:types/xs:schema`);
      const schemas = Array.from({ length: n }, (_, i) =>
        xpath(wsdl, `${path(`${DEFS}/wsdl:types/xs:schema`)}[${i + 1}]`),
      );
      const files = new Map(
        schemas.map((s, i) => [/targetNamespace="([^"]*)"/.exec(s)![1]!, join(dir, `${name}-${i}.xsd`)]),
      );
      for (const [i, s] of schemas.entries()) {
        const located = s.replace(
          /<xs:import namespace="([^"]*)"\/>/g,
          (_, ns: string) => `<xs:import namespace="${ns}" schemaLocation="${files.get(ns)}"/>`,
        );
        writeFileSync(join(dir, `${name}-${i}.xsd`), located);
      }
      return files.get('http://tempuri.org/')!;
    }

    const validate = (schema: string, message: string) => {
      const r = xmllint(['--noout', '--schema', schema, '-'], message);
      return { valid: r.code === 0, errors: r.stderr };
    };

    const GUID = '3f2504e0-4f89-11d3-9a0c-0305e82c3301';
    const fileDataMembers = `<d:Content>AAE=</d:Content><d:ContentType>application/pdf</d:ContentType><d:CreatedUtc>2026-01-02T03:04:05Z</d:CreatedUtc><d:FileId>${GUID}</d:FileId><d:FileName>a.pdf</d:FileName><d:Length>2</d:Length><d:ModifiedUtc>2026-01-02T03:04:05Z</d:ModifiedUtc><d:Sha256 xmlns:i="http://www.w3.org/2001/XMLSchema-instance" i:nil="true"/>`;

    it.each(['dataset', 'anytype'] as const)('%s: requests and replies as a WCF client writes them', (dataTable) => {
      const schema = schemaFiles(wsdlFor({}, dataTable), dataTable);
      const ok = (message: string) => expect(validate(schema, message)).toMatchObject({ valid: true });
      const bad = (message: string) => expect(validate(schema, message).valid).toBe(false);
      ok(
        `<CloseDatabaseRequest xmlns="http://tempuri.org/"><requestId>${GUID}</requestId><commit>true</commit></CloseDatabaseRequest>`,
      );
      ok(
        `<GetFileResponse xmlns="http://tempuri.org/"><GetFileResult xmlns:d="${NS.dc}">${fileDataMembers}</GetFileResult></GetFileResponse>`,
      );
      ok(
        `<ReturnScalar xmlns="http://tempuri.org/"><requestId>${GUID}</requestId><sql>select 1</sql><parameters xmlns:d="${NS.dc}" xmlns:i="http://www.w3.org/2001/XMLSchema-instance"><d:QueryParameter><d:Name>@id</d:Name><d:Value i:type="x:int" xmlns:x="${NS.xs}">1</d:Value></d:QueryParameter></parameters></ReturnScalar>`,
      );
      bad(
        `<CloseDatabaseRequest xmlns="http://tempuri.org/"><requestId>not-a-guid</requestId><commit>true</commit></CloseDatabaseRequest>`,
      );
      bad(
        `<CloseDatabaseRequest xmlns="http://tempuri.org/"><commit>true</commit><requestId>${GUID}</requestId></CloseDatabaseRequest>`,
      );
      if (dataTable === 'dataset') {
        ok(
          `<ReturnDatatableResponse xmlns="http://tempuri.org/"><ReturnDatatableResult><xs:schema id="NewDataSet" xmlns:xs="${NS.xs}"/><diffgr:diffgram xmlns:diffgr="${NS.diffgr}"/></ReturnDatatableResult></ReturnDatatableResponse>`,
        );
        bad(
          `<ReturnDatatableResponse xmlns="http://tempuri.org/"><ReturnDatatableResult><xs:schema id="NewDataSet" xmlns:xs="${NS.xs}"/></ReturnDatatableResult></ReturnDatatableResponse>`,
        );
      }
    });
  });
});
