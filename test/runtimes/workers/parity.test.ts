/**
 * The Workers app answers exactly as the Node app: same status, content type and body (the random span id of a
 * problem's traceId aside) for every request of cases.ts. NODE_ANSWERS is recorded from the Node app by
 * record-node-answers.ts.
 */
import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { CASES, answerOf, requestOf } from './cases.ts';
import { NODE_ANSWERS } from './node-answers.ts';

describe('workerd answers as Node does', () => {
  it('has a recorded Node answer for every case', () => {
    expect(Object.keys(NODE_ANSWERS).sort()).toStrictEqual(CASES.map((c) => c.name).sort());
  });

  it.each(CASES)('$method $path: $name', async (c) => {
    expect(await answerOf(await SELF.fetch(requestOf(c)), c)).toStrictEqual(NODE_ANSWERS[c.name]);
  });
});
