import { describe, expect, it } from 'vitest';
import { isPlainInsert, statementShape } from '../../src/runtime/node/idb/sqlite-statement-shape.ts';

describe('statementShape', () => {
  it('reads the verb (after WITH, the statement’s own), trailing statements and empty texts', () => {
    expect(statementShape(' -- c\n select 1;; ')).toEqual({ started: true, trailing: false, verb: 'SELECT' });
    expect(statementShape('WITH a AS (SELECT 1) DELETE FROM t').verb).toBe('DELETE');
    expect(statementShape('SELECT 1; SELECT 2').trailing).toBe(true);
    expect(statementShape("SELECT ';' -- ;").trailing).toBe(false);
    expect(statementShape(' ;/* only */; ').started).toBe(false);
    expect(statementShape('CREATE TRIGGER x AFTER INSERT ON t BEGIN SELECT 1; SELECT 2; END;').trailing).toBe(false);
  });
});

describe('isPlainInsert: an INSERT whose work its text bounds', () => {
  it.each([
    "INSERT INTO bench_writes (channel, note) VALUES (@c, 'x')",
    "insert into t values (1, 2.5, NULL, X'00ff', -3), (?1, ?2, :a, $b, @c);;",
    "INSERT INTO main.\"my table\" ([a], `b`) VALUES ('it''s (not) a call', 1 + 2 * @p)",
    'INSERT /* c */ INTO t -- c\n VALUES (CURRENT_TIMESTAMP)',
  ])('takes %s', (sql) => expect(isPlainInsert(sql)).toBe(true));

  it.each([
    'INSERT INTO t SELECT * FROM u',
    'INSERT INTO t VALUES ((SELECT max(x) FROM u))',
    'INSERT INTO t VALUES (randomblob(1000000000))',
    'INSERT INTO t VALUES (1) RETURNING x',
    'INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING',
    'INSERT OR REPLACE INTO t VALUES (1)',
    'REPLACE INTO t VALUES (1)',
    'INSERT INTO t DEFAULT VALUES',
    'WITH a AS (SELECT 1) INSERT INTO t VALUES (1)',
    'INSERT INTO t VALUES (1); DELETE FROM t',
    "INSERT INTO t VALUES ('unterminated)",
    'INSERT INTO t VALUES (1',
    'UPDATE t SET x = 1',
    '',
  ])('refuses %s', (sql) => expect(isPlainInsert(sql)).toBe(false));
});
