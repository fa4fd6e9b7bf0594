import { describe } from 'vitest';
import { needPeers, PEERS } from '../support/peers.ts';
import { serviceSuite, sqlServerBackend } from './service-suite.ts';

describe.skipIf(needPeers('idb service on SQL Server', PEERS.babelfish))('SQL Server (Babelfish)', () => {
  serviceSuite('SQL Server (Babelfish) + folder', sqlServerBackend);
});
