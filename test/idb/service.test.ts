import { serviceSuite, sqliteBackend } from './service-suite.ts';

serviceSuite('SQLite file + folder store', sqliteBackend);
