import { describe, it } from 'vitest';
import { BABELFISH_MISSING, babelfishAvailable } from '../support/babelfish.ts';
import { serviceSuite, sqlServerBackend } from './service-suite.ts';

if (babelfishAvailable) serviceSuite('SQL Server (Babelfish) + folder', sqlServerBackend);
else describe.skip('IIDBService on SQL Server', () => it.skip(BABELFISH_MISSING, () => {}));
