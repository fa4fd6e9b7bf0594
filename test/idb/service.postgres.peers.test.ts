import { describe } from 'vitest';
import { needPeers, PEERS } from '../support/peers.ts';
import { postgresBackend, serviceSuite } from './service-suite.ts';

describe.skipIf(needPeers('idb service on PostgreSQL', PEERS.postgres))('PostgreSQL', () => {
  serviceSuite('PostgreSQL + S3', postgresBackend);
});
