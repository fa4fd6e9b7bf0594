/**
 * The published description of IIDBService (docs/contract/iidbservice.md, "Published description"; operations.md for
 * what the settings change): read back with libxml2's parser (xmllint), its inline XSD compiled and used to validate
 * messages, served by the app, and imported by Mono's svcutil into a proxy that compiles. Here the WSDL (operations,
 * policy, port, escaping) and serving it; the XSD (data contracts, DataTable, validating messages) in
 * wsdl-schema.test.ts, the XPath helpers in wsdl-xpath.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../../src/config.ts';
import { OPERATIONS } from '../../src/idb/contract.ts';
import { problem, testApp, type TestApp } from '../support/http/app.ts';
import {
  xmllint,
  text,
  count,
  qname,
  wellFormed,
  wsdlFor,
  DEFS,
  SCHEMA,
  POLICY,
  TRANSPORT,
  PORT,
} from './wsdl-xpath.ts';

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
