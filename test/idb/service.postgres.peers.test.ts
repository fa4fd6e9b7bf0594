import { postgresBackend, serviceSuite } from './service-suite.ts';

serviceSuite('PostgreSQL + S3', postgresBackend);
