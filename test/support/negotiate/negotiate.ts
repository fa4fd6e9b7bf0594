/**
 * What the NegotiateStream tests (test/bridge/negotiate) share: bytes as hex and text, the messages nns-client.py
 * makes with --pattern, and the payload a refused client reports.
 */

/** The HandshakeError payload of a refused logon (0x8009030C in both byte orders .NET reads), in hex as nns-client.py
 * reports it (`{ result: 'refused', status }`). */
export const LOGON_DENIED_PAYLOAD = '0c0309808009030c';

/** Lower-case hex of the bytes. */
export const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** The bytes of hex text; white space in it (a vector written over several lines) is ignored. */
export const hex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text.replace(/\s+/g, ''), 'hex'));

/** The UTF-8 (for these texts, ASCII) bytes of a text. */
export const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);

/** The message of nns-client.py's `--pattern n`: n bytes, byte i being (i * 7) & 0xff. */
export const pattern = (n: number): Uint8Array => new Uint8Array(n).map((_, i) => (i * 7) & 0xff);
