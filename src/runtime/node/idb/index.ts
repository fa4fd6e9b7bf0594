/** The IIDBService adapters for Node (`#idb/node`): SQLite and PostgreSQL databases, folder and S3 file stores. */
export { openNodeIdbService, readRolesFile, type NodeIdbServiceOptions } from './idb-service.ts';
