import { describe } from 'vitest';
import { needPeers, PEERS } from '../support/peers.ts';
import { databaseSuite, postgres } from './database-suite.ts';

describe.skipIf(needPeers('idb database on PostgreSQL', PEERS.postgres))('PostgreSQL', () => {
  databaseSuite(postgres);
});
