import { databaseSuite, postgres } from './database-suite.ts';

databaseSuite(postgres);
