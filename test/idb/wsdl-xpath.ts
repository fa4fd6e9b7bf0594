/**
 * What the WSDL suites (wsdl.test.ts, wsdl-schema.test.ts) read the published description with: the namespaces as
 * clients depend on them, XPath over libxml2's xmllint, and the document for a configuration.
 */
import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';
import type { Environment } from '../../src/config.ts';
import { readEndpointConfig } from '../../src/idb/config.ts';
import { writeWsdl, type WsdlOptions } from '../../src/idb/wsdl.ts';

// Written out rather than imported from wsdl.ts: these URIs are what clients depend on, so the test states them.
export const NS = {
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

export function xmllint(args: string[], input: string) {
  const r = spawnSync('xmllint', args, { input, encoding: 'utf8' });
  if (r.error)
    throw new Error(
      `xmllint could not run (${r.error.message}): install it with \`apt-get install -y libxml2-utils\` (.ci/run does this).`,
    );
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** `wsdl:operation[@name='X']/@wsaw:Action` → the same path with namespace tests; quoted literals are left alone. */
export function path(p: string): string {
  return p.replace(/(^|[/[(@])(\w+):(\w+|\*)/g, (_, before: string, prefix: string, local: string) => {
    const uri = NS[prefix as keyof typeof NS];
    if (!uri) throw new Error(`unknown prefix ${prefix}`);
    return `${before}*[namespace-uri()='${uri}' and local-name()='${local}']`;
  });
}

export function xpath(xml: string, expr: string): string {
  const r = xmllint(['--xpath', expr, '-'], xml);
  if (r.code === 10) return ''; // the empty node set
  if (r.code !== 0) throw new Error(`xmllint --xpath ${expr}: ${r.stderr}`);
  return r.stdout.replace(/\n$/, ''); // xmllint ends every result with a newline
}
export const text = (xml: string, p: string) => xpath(xml, `string(${path(p)})`);
export const count = (xml: string, p: string) => Number(xpath(xml, `count(${path(p)})`));

/** A QName-valued attribute (`type="q3:guid"`) resolved through the namespace declarations in scope: `{uri}local`. */
export function qname(xml: string, element: string, attribute = 'type'): string {
  const value = text(xml, `${element}/@${attribute}`);
  if (!value) return '';
  const [prefix, local] = value.includes(':') ? value.split(':') : ['', value];
  const uri = xpath(xml, `string(${path(element)}/namespace::*[name()='${prefix}'])`);
  return `{${uri}}${local}`;
}

export const wellFormed = (xml: string) =>
  expect(xmllint(['--noout', '-'], xml)).toMatchObject({ code: 0, stderr: '' });

export const wsdlFor = (env: Environment = {}, dataTable: WsdlOptions['dataTable'] = 'dataset') =>
  writeWsdl(readEndpointConfig(env), { dataTable });

export const DEFS = '/wsdl:definitions';
export const SCHEMA = (ns: string) => `${DEFS}/wsdl:types/xs:schema[@targetNamespace='${ns}']`;
export const POLICY = `${DEFS}/wsp:Policy/wsp:ExactlyOne/wsp:All`;
export const TRANSPORT = `${POLICY}/sp:TransportBinding/wsp:Policy`;
export const PORT = `${DEFS}/wsdl:service/wsdl:port`;
