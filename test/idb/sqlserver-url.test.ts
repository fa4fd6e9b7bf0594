import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.ts';
import { readIdbConfig } from '../../src/idb/config.ts';
import { connectionConfig, parseSqlServerUrl } from '../../src/runtime/node/idb/sqlserver-url.ts';

describe('sqlserver:// database URLs', () => {
  let dir: string;
  let secret: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sqlserver-url-'));
    secret = join(dir, 'password');
    await writeFile(secret, 'S3cret!\n');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads the password from a file, checks TLS certificates by default, and bounds the pool', () => {
    const s = parseSqlServerUrl(`sqlserver://idb@db.example/Invoices?passwordFile=${secret}`);
    expect(s).toMatchObject({
      host: 'db.example',
      port: 1433,
      database: 'Invoices',
      login: { user: 'idb', password: 'S3cret!' },
      readerLogin: undefined,
      encrypt: true,
      trustServerCertificate: false,
      maxConnections: 10,
    });
    expect(connectionConfig(s, undefined).options).toMatchObject({ encrypt: true, trustServerCertificate: false });
  });

  it('takes the readers login, the opt-out of certificate checks and the password from the environment', () => {
    const s = parseSqlServerUrl(
      `sqlserver://idb@127.0.0.1:11433/idb?readerUser=ro&readerPasswordFile=${secret}&trustServerCertificate=true&maxConnections=3`,
      { password: 'from-env' },
    );
    expect(s).toMatchObject({
      port: 11433,
      login: { user: 'idb', password: 'from-env' },
      readerLogin: { user: 'ro', password: 'S3cret!' },
      trustServerCertificate: true,
      maxConnections: 3,
    });
    const env = readIdbConfig({
      DATABASE_URL: 'sqlserver://idb@h/d',
      DATABASE_PASSWORD: 'p',
      DATABASE_READER_PASSWORD: 'r',
    });
    expect(env.databasePasswords.get('default')).toEqual({ password: 'p', readerPassword: 'r' });
  });

  it('refuses a password in the URL, a missing password, unknown settings and bad values, never repeating a secret', () => {
    const refused = (url: string) => {
      try {
        parseSqlServerUrl(url);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error(`accepted ${url}`);
    };
    expect(refused('sqlserver://idb:Hunter2@h/d')).not.toContain('Hunter2');
    expect(refused('sqlserver://idb@h/d')).toMatch(/passwordFile/);
    expect(refused(`sqlserver://idb@h/d?passwordFile=${secret}&pasword=x`)).toMatch(/unknown setting pasword/);
    expect(refused(`sqlserver://idb@h/d?passwordFile=${secret}&encrypt=maybe`)).toMatch(/encrypt/);
    expect(refused(`sqlserver://idb@h/d?passwordFile=${secret}&maxConnections=0`)).toMatch(/maxConnections/);
    expect(refused('sqlserver://idb@h/d?passwordFile=/no/such/file')).toMatch(/cannot be read/);
    expect(refused(`sqlserver://h/d?passwordFile=${secret}`)).toMatch(/login/);
  });
});
