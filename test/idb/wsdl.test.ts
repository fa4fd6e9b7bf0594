/**
 * The published description of IIDBService (docs/contract/iidbservice.md, "Published description"; operations.md for
 * what the settings change): read back with libxml2's parser (xmllint), its inline XSD compiled and used to validate
 * messages, served by the app, and imported by Mono's svcutil into a proxy that compiles.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../../src/config.ts';
import { OPERATIONS } from '../../src/idb/contract.ts';
import { readEndpointConfig } from '../../src/idb/config.ts';
import { writeWsdl, type WsdlOptions } from '../../src/idb/wsdl.ts';
import { problem, testApp, type TestApp } from '../support/http/app.ts';

// Written out rather than imported from wsdl.ts: these URIs are what clients depend on, so the test states them.
const NS = {
  wsdl: 'http://schemas.xmlsoap.org/wsdl/',
  xs: 'http://www.w3.org/2001/XMLSchema',
  soap12: 'http://schemas.xmlsoap.org/wsdl/soap12/',
  wsp: 'http://schemas.xmlsoap.org/ws/2004/09/policy',
  wsu: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd',
  wsaw: 'http://www.w3.org/2006/05/addressing/wsdl',
  wsa10: 'http://www.w3.org/2005/08/addressing',
  msb: 'http://schemas.microsoft.com/ws/06/2004/mspolicy/netbinary1',
  msf: 'http://schemas.microsoft.com/ws/2006/05/framing/policy',
  sp: 'http://schemas.xmlsoap.org/ws/2005/07/securitypolicy',
  id: 'http://schemas.xmlsoap.org/ws/2006/02/addressingidentity',
  ser: 'http://schemas.microsoft.com/2003/10/Serialization/',
  dc: 'http://schemas.datacontract.org/2004/07/IDBService.Contracts',
  data: 'http://schemas.datacontract.org/2004/07/System.Data',
  diffgr: 'urn:schemas-microsoft-com:xml-diffgram-v1',
} as const;

// ---------------------------------------------------------------------------------------------------------------
// XPath over libxml2 (xmllint --xpath). Steps are written `prefix:name` and turned into namespace-uri()/local-name()
// tests, because xmllint has no option to bind prefixes.

function xmllint(args: string[], input: string) {
  const r = spawnSync('xmllint', args, { input, encoding: 'utf8' });
  if (r.error)
    throw new Error(
      `xmllint could not run (${r.error.message}): install it with \`apt-get install -y libxml2-utils\` (.ci/run does this).`,
    );
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** `wsdl:operation[@name='X']/@wsaw:Action` → the same path with namespace tests; quoted literals are left alone. */
function path(p: string): string {
  return p.replace(/(^|[/[(@])(\w+):(\w+|\*)/g, (_, before: string, prefix: string, local: string) => {
    const uri = NS[prefix as keyof typeof NS];
    if (!uri) throw new Error(`unknown prefix ${prefix}`);
    return `${before}*[namespace-uri()='${uri}' and local-name()='${local}']`;
  });
}

function xpath(xml: string, expr: string): string {
  const r = xmllint(['--xpath', expr, '-'], xml);
  if (r.code === 10) return ''; // the empty node set
  if (r.code !== 0) throw new Error(`xmllint --xpath ${expr}: ${r.stderr}`);
  return r.stdout.replace(/\n$/, ''); // xmllint ends every result with a newline
}
const text = (xml: string, p: string) => xpath(xml, `string(${path(p)})`);
const count = (xml: string, p: string) => Number(xpath(xml, `count(${path(p)})`));

/** A QName-valued attribute (`type="q3:guid"`) resolved through the namespace declarations in scope: `{uri}local`. */
function qname(xml: string, element: string, attribute = 'type'): string {
  const value = text(xml, `${element}/@${attribute}`);
  if (!value) return '';
  const [prefix, local] = value.includes(':') ? value.split(':') : ['', value];
  const uri = xpath(xml, `string(${path(element)}/namespace::*[name()='${prefix}'])`);
  return `{${uri}}${local}`;
}

const wellFormed = (xml: string) => expect(xmllint(['--noout', '-'], xml)).toMatchObject({ code: 0, stderr: '' });

const wsdlFor = (env: Environment = {}, dataTable: WsdlOptions['dataTable'] = 'dataset') =>
  writeWsdl(readEndpointConfig(env), { dataTable });

const DEFS = '/wsdl:definitions';
const SCHEMA = (ns: string) => `${DEFS}/wsdl:types/xs:schema[@targetNamespace='${ns}']`;
const POLICY = `${DEFS}/wsp:Policy/wsp:ExactlyOne/wsp:All`;
const TRANSPORT = `${POLICY}/sp:TransportBinding/wsp:Policy`;
const PORT = `${DEFS}/wsdl:service/wsdl:port`;

// ---------------------------------------------------------------------------------------------------------------

describe('writeWsdl', () => {
  beforeAll(() => {
    xmllint(['--version'], '');
  });

  it.each([
    ['dataset', 'windows'],
    ['anytype', 'windows'],
    ['dataset', 'none'],
    ['anytype', 'none'],
  ] as const)('is one well-formed WSDL 1.1 document (%s, security %s)', (dataTable, security) => {
    const wsdl = wsdlFor({ BRIDGE_SECURITY: security }, dataTable);
    wellFormed(wsdl);
    expect(count(wsdl, DEFS)).toBe(1);
    expect(count(wsdl, `${DEFS}/wsdl:import`)).toBe(0);
    expect(count(wsdl, `//xs:import[@schemaLocation]`)).toBe(0);
  });

  it('declares the 13 operations in contract order, document/literal wrapped, with the default namespace', () => {
    const wsdl = wsdlFor();
    expect(text(wsdl, `${DEFS}/@targetNamespace`)).toBe('http://tempuri.org/');
    expect(count(wsdl, `${DEFS}/wsdl:portType[@name='IIDBService']/wsdl:operation`)).toBe(13);
    expect(count(wsdl, `${DEFS}/wsdl:binding/wsdl:operation`)).toBe(13);
    for (const [i, op] of OPERATIONS.entries()) {
      const portOp = `${DEFS}/wsdl:portType/wsdl:operation[${i + 1}]`;
      expect(text(wsdl, `${portOp}/@name`)).toBe(op);
      expect(text(wsdl, `${portOp}/wsdl:input/@wsaw:Action`)).toBe(`http://tempuri.org/IIDBService/${op}`);
      expect(text(wsdl, `${portOp}/wsdl:output/@wsaw:Action`)).toBe(`http://tempuri.org/IIDBService/${op}Response`);
      const bindingOp = `${DEFS}/wsdl:binding/wsdl:operation[@name='${op}']`;
      expect(text(wsdl, `${bindingOp}/soap12:operation/@soapAction`)).toBe(`http://tempuri.org/IIDBService/${op}`);
      expect(text(wsdl, `${bindingOp}/soap12:operation/@style`)).toBe('document');
      expect(count(wsdl, `${bindingOp}/wsdl:input/soap12:body[@use='literal']`)).toBe(1);
      expect(count(wsdl, `${bindingOp}/wsdl:output/soap12:body[@use='literal']`)).toBe(1);

      // Each message is one part, the wrapper element named after the operation (and `OpResponse` with `OpResult`).
      const input = text(wsdl, `${portOp}/wsdl:input/@message`).replace(/^tns:/, '');
      const output = text(wsdl, `${portOp}/wsdl:output/@message`).replace(/^tns:/, '');
      expect(qname(wsdl, `${DEFS}/wsdl:message[@name='${input}']/wsdl:part[@name='parameters']`, 'element')).toBe(
        `{http://tempuri.org/}${op}`,
      );
      expect(qname(wsdl, `${DEFS}/wsdl:message[@name='${output}']/wsdl:part[@name='parameters']`, 'element')).toBe(
        `{http://tempuri.org/}${op}Response`,
      );
      const response = `${SCHEMA('http://tempuri.org/')}/xs:element[@name='${op}Response']/xs:complexType/xs:sequence/xs:element`;
      expect(count(wsdl, response)).toBe(1);
      expect(text(wsdl, `${response}/@name`)).toBe(`${op}Result`);
      expect(text(wsdl, `${response}/@minOccurs`)).toBe('0');
    }
    expect(text(wsdl, `${DEFS}/wsdl:binding/soap12:binding/@transport`)).toBe('http://schemas.microsoft.com/soap/tcp');
    expect(qname(wsdl, `${DEFS}/wsdl:binding`)).toBe('{http://tempuri.org/}IIDBService');
    expect(qname(wsdl, PORT, 'binding')).toBe(`{http://tempuri.org/}${text(wsdl, `${DEFS}/wsdl:binding/@name`)}`);
  });

  it.each([
    ['urn:acme:idb', 'urn:acme:idb/IIDBService/'],
    ['http://acme.example/idb', 'http://acme.example/idb/IIDBService/'],
    ['http://acme.example/idb/', 'http://acme.example/idb/IIDBService/'],
  ])('SERVICE_NAMESPACE %s: actions %sOp, the operation schema in that namespace', (ns, prefix) => {
    const wsdl = wsdlFor({ SERVICE_NAMESPACE: ns });
    expect(text(wsdl, `${DEFS}/@targetNamespace`)).toBe(ns);
    for (const op of OPERATIONS) {
      expect(text(wsdl, `${DEFS}/wsdl:portType/wsdl:operation[@name='${op}']/wsdl:input/@wsaw:Action`)).toBe(
        `${prefix}${op}`,
      );
      expect(text(wsdl, `${DEFS}/wsdl:portType/wsdl:operation[@name='${op}']/wsdl:output/@wsaw:Action`)).toBe(
        `${prefix}${op}Response`,
      );
      expect(text(wsdl, `${DEFS}/wsdl:binding/wsdl:operation[@name='${op}']/soap12:operation/@soapAction`)).toBe(
        `${prefix}${op}`,
      );
      expect(count(wsdl, `${SCHEMA(ns)}/xs:element[@name='${op}']`)).toBe(1);
    }
  });

  describe('policy attached to the binding', () => {
    const policyOf = (env: Environment) => {
      const wsdl = wsdlFor(env);
      const reference = text(wsdl, `${DEFS}/wsdl:binding/wsp:PolicyReference/@URI`);
      expect(reference).toBe(`#${text(wsdl, `${DEFS}/wsp:Policy/@wsu:Id`)}`);
      expect(count(wsdl, `${POLICY}/msb:BinaryEncoding`)).toBe(1);
      expect(count(wsdl, `${POLICY}/wsaw:UsingAddressing`)).toBe(1);
      return wsdl;
    };

    it('windows, EncryptAndSign (the defaults): Windows transport security, Basic256, Strict', () => {
      const wsdl = policyOf({});
      expect(count(wsdl, `${POLICY}/sp:TransportBinding`)).toBe(1);
      expect(
        text(wsdl, `${TRANSPORT}/sp:TransportToken/wsp:Policy/msf:WindowsTransportSecurity/msf:ProtectionLevel`),
      ).toBe('EncryptAndSign');
      expect(count(wsdl, `${TRANSPORT}/sp:AlgorithmSuite/wsp:Policy/sp:Basic256`)).toBe(1);
      expect(count(wsdl, `${TRANSPORT}/sp:Layout/wsp:Policy/sp:Strict`)).toBe(1);
    });

    it('BRIDGE_PROTECTION_LEVEL=Sign declares Sign', () => {
      const wsdl = policyOf({ BRIDGE_SECURITY: 'windows', BRIDGE_PROTECTION_LEVEL: 'Sign' });
      expect(
        text(wsdl, `${TRANSPORT}/sp:TransportToken/wsp:Policy/msf:WindowsTransportSecurity/msf:ProtectionLevel`),
      ).toBe('Sign');
      expect(count(wsdl, `${TRANSPORT}/sp:AlgorithmSuite/wsp:Policy/sp:Basic256`)).toBe(1);
    });

    it('BRIDGE_SECURITY=none declares no transport security at all, whatever the protection level', () => {
      const wsdl = policyOf({ BRIDGE_SECURITY: 'none', BRIDGE_PROTECTION_LEVEL: 'Sign' });
      expect(count(wsdl, '//sp:TransportBinding')).toBe(0);
      expect(count(wsdl, '//msf:WindowsTransportSecurity')).toBe(0);
      expect(count(wsdl, '//msf:ProtectionLevel')).toBe(0);
    });
  });

  it('the port has the address and DNS identity of BRIDGE_PUBLIC_URL and BRIDGE_DNS_IDENTITY', () => {
    const wsdl = wsdlFor({
      BRIDGE_PUBLIC_URL: 'net.tcp://idb.example.ch:9000/IDBService',
      BRIDGE_DNS_IDENTITY: 'idbhost.corp.example',
    });
    expect(count(wsdl, `${DEFS}/wsdl:service[@name='IDBService']/wsdl:port`)).toBe(1);
    expect(text(wsdl, `${PORT}/soap12:address/@location`)).toBe('net.tcp://idb.example.ch:9000/IDBService');
    expect(text(wsdl, `${PORT}/wsa10:EndpointReference/wsa10:Address`)).toBe(
      'net.tcp://idb.example.ch:9000/IDBService',
    );
    expect(text(wsdl, `${PORT}/wsa10:EndpointReference/id:Identity/id:Dns`)).toBe('idbhost.corp.example');
  });

  it('without BRIDGE_PUBLIC_URL the address is the DNS identity and BRIDGE_PORT', () => {
    const wsdl = wsdlFor({ BRIDGE_DNS_IDENTITY: 'idbhost.corp.example', BRIDGE_PORT: '8810', BRIDGE_HOST: '0.0.0.0' });
    expect(text(wsdl, `${PORT}/soap12:address/@location`)).toBe('net.tcp://idbhost.corp.example:8810/IDBService');
    expect(text(wsdl, `${PORT}/wsa10:EndpointReference/wsa10:Address`)).toBe(
      'net.tcp://idbhost.corp.example:8810/IDBService',
    );
    expect(text(wsdl, `${PORT}/wsa10:EndpointReference/id:Identity/id:Dns`)).toBe('idbhost.corp.example');
  });

  it('escapes configured text: markup characters in the namespace and the address come back as written', () => {
    // A namespace name is a URI, so `&` and `'` (sub-delims) are what one can carry; the address is plain text.
    const ns = `http://acme.example/idb?a=1&b='x'`;
    const address = 'net.tcp://h.example:1/IDBService?x=1&y="<z>"';
    const wsdl = wsdlFor({ SERVICE_NAMESPACE: ns, BRIDGE_PUBLIC_URL: address });
    wellFormed(wsdl);
    expect(text(wsdl, `${DEFS}/@targetNamespace`)).toBe(ns);
    expect(text(wsdl, `${DEFS}/wsdl:portType/wsdl:operation[1]/wsdl:input/@wsaw:Action`)).toBe(
      `${ns}/IIDBService/Heartbeat`,
    );
    expect(text(wsdl, `${PORT}/soap12:address/@location`)).toBe(address);
    expect(text(wsdl, `${PORT}/wsa10:EndpointReference/wsa10:Address`)).toBe(address);
    expect(text(wsdl, `${DEFS}/wsdl:types/xs:schema[1]/@targetNamespace`)).toBe(ns);
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

// ---------------------------------------------------------------------------------------------------------------

describe('GET /IDBService', () => {
  const env = { SERVICE_NAMESPACE: 'urn:acme:idb', BRIDGE_DNS_IDENTITY: 'idb.example.ch', BRIDGE_PORT: '9000' };
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(env);
  });

  it.each(['?wsdl', '?singleWsdl', '?WSDL', '?singlewsdl'])(
    '%s: the DataTable form of the configured endpoint',
    async (query) => {
      const res = await t.app.request(`/IDBService${query}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/xml; charset=utf-8');
      expect(await res.text()).toBe(wsdlFor(env, 'dataset'));
    },
  );

  it.each(['?wsdl&datatable=anytype', '?singleWsdl&datatable=anytype', '?datatable=anytype&wsdl'])(
    '%s: the anyType form',
    async (query) => {
      const res = await t.app.request(`/IDBService${query}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/xml; charset=utf-8');
      expect(await res.text()).toBe(wsdlFor(env, 'anytype'));
    },
  );

  it.each(['', '?xsd=xsd0', '?datatable=anytype'])('%s without ?wsdl: 404 not-found', async (query) => {
    await problem(await t.app.request(`/IDBService${query}`), 404, 'not-found');
  });

  it('an unknown datatable form: 400 validation naming the parameter', async () => {
    const body = await problem(await t.app.request('/IDBService?wsdl&datatable=xml'), 400, 'validation');
    expect(body.errors).toEqual({ datatable: [expect.any(String)] });
  });

  it('is not part of the OpenAPI document of the HTTP API', async () => {
    const doc = (await (await t.app.request('/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).some((p) => p.toLowerCase().includes('idbservice'))).toBe(false);
  });
});
