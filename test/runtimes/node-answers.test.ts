/**
 * The recorded Node answers that workerd is held to (test/runtimes/workers/node-answers.ts) must still be what the Node app
 * answers: a change to the app that is not re-recorded fails here, not only inside workerd.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readHttpConfig } from '../../src/config.ts';
import { readEndpointConfig } from '../../src/idb/config.ts';
import { nodeService } from '../../src/runtime/node/deps.ts';
import { CASES, answerOf, requestOf } from './workers/cases.ts';
import { NODE_ANSWERS } from './workers/node-answers.ts';

describe('Node answers as recorded for the workerd parity test', async () => {
  const { app, engine } = await nodeService(readHttpConfig({ LOG_LEVEL: 'error' }), readEndpointConfig({}), 1);
  afterAll(() => engine.close());

  it.each(CASES)('$method $path: $name', async (c) => {
    expect(await answerOf(await app.fetch(requestOf(c)), c)).toStrictEqual(NODE_ANSWERS[c.name]);
  });
});
